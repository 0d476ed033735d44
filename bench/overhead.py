#!/usr/bin/env python3
"""bench/overhead: ssdpts's fio engine vs the same job in raw fio, alternated on one zram device.

Prints the IOPS ratio (target >= 0.99) and the median idle gap between chained rounds (target <= 10 ms).
Run as root: `python3 bench/overhead.py [--rounds 8] [--seconds 2]`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from ssdpts.engines.fio import FioEngine
from zram import zram
from ssdpts.engines.fiojson import parse_output
from ssdpts.store import Store
from ssdpts.targets import open_target
from ssdpts.workload import Workload, render



def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=8, help="pairs of (ssdpts round, raw fio round)")
    ap.add_argument("--seconds", type=float, default=2.0, help="runtime of each round")
    ap.add_argument("--size", default=str(1 << 30), help="zram size in bytes")
    args = ap.parse_args()
    with zram(int(args.size)):
        target = open_target("/dev/zram0", probe=False)
        w = Workload("rnd_4K_100-0", "randrw", bs=4096, read_pct=100, threads=1, iodepth=32, runtime_s=args.seconds)
        # fill once so reads hit allocated pages (zram returns zero pages much faster)
        subprocess.run(["fio", "--name=fill", "--filename=/dev/zram0", "--rw=write", "--bs=1M", "--direct=1",
                        "--ioengine=libaio", "--iodepth=8", "--output=/dev/null"], check=True)
        engine = FioEngine()
        raw_job = render([w], target.fio_filename, target.size_bytes, target.logical_block_size).text()
        ours, raw, ratios, gaps = [], [], [], []
        with tempfile.TemporaryDirectory() as tmp:
            store = Store(Path(tmp) / "bench.db")
            rid = store.create_run(target_spec="/dev/zram0", target=target.to_dict(), host={}, profile_name="bench",
                                   profile={}, tests=["bench"], options={}, engine="fio")
            job_path = Path(tmp) / "raw.fio"
            job_path.write_text(raw_job)
            # 1) throughput: alternate one ssdpts round (engine + parse + commit) with one raw fio run of
            #    the same job text; zram speed drifts, so each pair is compared on its own
            subprocess.run(["fio", "--output-format=json+", str(job_path)], capture_output=True, check=True)  # warm-up
            for i in range(args.rounds):
                with engine.session(target) as session:
                    out = session.submit([w]).result()
                store.save_round(rid, "bench", "", "round", i + 1, out, [w.to_dict()])
                p = subprocess.run(["fio", "--output-format=json+", str(job_path)], capture_output=True, text=True,
                                   check=True)
                ours.append(out.cells[0].iops)
                raw.append(parse_output(p.stdout)[1][0].iops)
                ratios.append(ours[-1] / raw[-1])
            # 2) idle gaps: a chained session of rounds, as the PTS loops run them
            with engine.session(target) as session:
                pending = session.submit([w.with_(runtime_s=0.5)])
                for i in range(args.rounds):
                    nxt = session.submit([w.with_(runtime_s=0.5)]) if i + 1 < args.rounds else None
                    out = pending.result()
                    store.save_round(rid, "bench", "chain", "round", i + 1, out, [w.to_dict()])
                    if out.gap_before_ms is not None:
                        gaps.append(out.gap_before_ms)
                    pending = nxt
            store.close()
        ratio = statistics.median(ratios)
        gap = statistics.median(gaps)
        print(json.dumps({"ssdpts_iops_median": round(statistics.median(ours)),
                          "raw_fio_iops_median": round(statistics.median(raw)),
                          "ratio": round(ratio, 4), "ratio_target": ">= 0.99",
                          "idle_gap_ms_median": round(gap, 2), "idle_gap_ms_max": round(max(gaps), 2),
                          "idle_gap_target_ms": "<= 10", "pairs": args.rounds, "ratio_per_pair": [round(r, 3) for r in ratios],
                          "round_seconds": args.seconds}, indent=2))
        print(f"overhead: ssdpts/raw fio IOPS ratio {ratio:.4f} (target >= 0.99); "
              f"median idle gap between rounds {gap:.2f} ms (target <= 10 ms)")
        return 0


if __name__ == "__main__":
    sys.exit(main())
