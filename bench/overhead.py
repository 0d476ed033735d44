#!/usr/bin/env python3
"""bench/overhead: what ssdpts's fio engine costs, measured from outside on a zram device of its own.

1. Wall clock of a whole ssdpts round (submit -> fio -> parse -> committed in the database) against raw
   fio running the same workload from the same job text without gates (process start -> exit), in
   alternated pairs. Target: median ratio <= 1.10.
2. CPU time of the ssdpts process per round (getrusage of this process: engine threads, parsing,
   SQLite) and of its block-layer idle sampler (child process). Target: ssdpts process <= 10 % of a core
   over the round.
3. The sampler's cost to the drive: IOPS of the same round with and without device-idle sampling,
   alternated pairs, 4 KiB random reads (CPU-bound on zram: the worst case), as fio measured them. The
   round is 4 chained cells (3 transitions), because the sampler looks closely around transitions
   (realtime/window.py) and every 2 ms in between. Target: median ratio >= 0.97.
Exits 1 when a target is missed.

    nice -n -5 python3 bench/overhead.py [--pairs 6] [--seconds 2]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from zram import fresh_zram

from ssdpts.engines.fio import FioEngine
from ssdpts.store import Store
from ssdpts.targets import open_target
from ssdpts.workload import Workload, render

WALL_RATIO_MAX = 1.10
CPU_SHARE_MAX = 0.10
SAMPLER_IOPS_RATIO_MIN = 0.97


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def proc_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100.0   # utime + stime, clock ticks (USER_HZ = 100)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=6)
    ap.add_argument("--seconds", type=float, default=2.0)
    args = ap.parse_args()
    with fresh_zram(1 << 30) as dev, tempfile.TemporaryDirectory() as tmp:
        # fill once so reads hit stored pages (zram answers unwritten pages much faster)
        subprocess.run(["fio", "--name=fill", f"--filename={dev}", "--rw=write", "--bs=1M", "--direct=1",
                        "--ioengine=libaio", "--iodepth=8", "--output=/dev/null"], check=True)
        target = open_target(dev, probe=False)
        w = Workload("rnd_4K_100-0", "randrw", bs=4096, read_pct=100, threads=2, iodepth=16, runtime_s=args.seconds)
        job = Path(tmp) / "raw.fio"
        job.write_text(render([w], target.fio_filename, target.size_bytes, target.logical_block_size).text())
        store = Store(Path(tmp) / "bench.db")
        rid = store.create_run(target_spec=dev, target=target.to_dict(), host={}, profile_name="bench", profile={},
                               tests=["bench"], options={}, engine="fio")
        engines = {True: FioEngine(), False: FioEngine(measure_idle=False)}
        chained = [Workload(f"rnd_4K_100-0_{k}", "randrw", bs=4096, read_pct=100, threads=2, iodepth=16,
                            runtime_s=args.seconds / 4) for k in range(4)]
        walls, raws, cpus, sampler_cpus, iops = [], [], [], [], {True: [], False: []}
        for i in range(args.pairs):
            with engines[True].session(target) as session:
                c0, t0 = cpu_s(), time.perf_counter()
                out = session.submit([w]).result()
                store.save_round(rid, "bench", "wall", "round", i + 1, out, [w.to_dict()])
                walls.append(time.perf_counter() - t0)
                cpus.append(cpu_s() - c0)
            for measured in (True, False) if i % 2 == 0 else (False, True):
                with engines[measured].session(target) as session:
                    s0 = [proc_cpu_s(sp.proc.pid) for sp in session.samplers]
                    out = session.submit(chained).result()
                    if measured:
                        sampler_cpus.append(sum(proc_cpu_s(sp.proc.pid) for sp in session.samplers) - sum(s0))
                iops[measured].append(statistics.mean(c.iops for c in out.cells))
            t0 = time.perf_counter()
            subprocess.run(["fio", "--output-format=json+", str(job)], capture_output=True, check=True)
            raws.append(time.perf_counter() - t0)
        store.close()
    wall_ratio = statistics.median(a / b for a, b in zip(walls, raws))
    cpu_share = statistics.median(c / wl for c, wl in zip(cpus, walls))
    iops_ratio = statistics.median(a / b for a, b in zip(iops[True], iops[False]))
    result = {
        "round_wall_s_median": round(statistics.median(walls), 3), "raw_fio_wall_s_median": round(statistics.median(raws), 3),
        "wall_ratio": round(wall_ratio, 4), "wall_ratio_target": f"<= {WALL_RATIO_MAX}",
        "ssdpts_cpu_s_per_round_median": round(statistics.median(cpus), 3),
        "ssdpts_cpu_share_of_a_core": round(cpu_share, 4), "cpu_share_target": f"<= {CPU_SHARE_MAX}",
        "sampler_cpu_s_per_round_median": round(statistics.median(sampler_cpus), 3),
        "iops_sampler_on_median": round(statistics.median(iops[True])),
        "iops_sampler_off_median": round(statistics.median(iops[False])),
        "iops_ratio_on_off": round(iops_ratio, 4), "iops_ratio_target": f">= {SAMPLER_IOPS_RATIO_MIN}",
        "pairs": args.pairs, "round_seconds": args.seconds,
    }
    print(json.dumps(result, indent=2))
    missed = [name for name, bad in (("wall ratio", wall_ratio > WALL_RATIO_MAX), ("cpu", cpu_share > CPU_SHARE_MAX),
                                     ("sampler iops", iops_ratio < SAMPLER_IOPS_RATIO_MIN)) if bad]
    print(f"overhead: ssdpts round / raw fio wall clock {wall_ratio:.3f} (target <= {WALL_RATIO_MAX}); ssdpts CPU "
          f"{cpu_share * 100:.1f} % of a core per round (target <= {CPU_SHARE_MAX * 100:g} %); IOPS with/without the "
          f"idle sampler {iops_ratio:.4f} (target >= {SAMPLER_IOPS_RATIO_MIN}); "
          + (f"MISSED: {', '.join(missed)}" if missed else "all met"))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
