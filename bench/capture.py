"""Capture at production rates: fio drives a zram device at a fixed rate while `ssdpts capture` records it; the
captured I/O count is compared with fio's own total_ios and the block layer's counters (/sys/block/DEV/stat).

    python bench/capture.py [--iops 200000] [--seconds 5] [--keep-trace]

Exits 1 when trace events were lost, the captured count differs from fio's or the block layer's, or fio did not
reach 95 % of the asked rate (then the bench proves nothing about that rate). Needs root (tracefs, zram).
The zram device is a fresh one of its own (hot_add), left unwritten: zram answers unwritten pages fastest, so
fio reaches the rate on this 2-core machine with a core left for the reader.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

from zram import fresh_zram  # noqa: E402

REACHED = 0.95               # of the asked rate
START_DELAY_S = 1.0          # the capture is set up before fio starts; fio ends before the capture does


def completed_ios(dev: str) -> int:
    """Reads + writes completed by the device (the block layer's counters)."""
    fields = Path(f"/sys/block/{Path(dev).name}/stat").read_text().split()
    return int(fields[0]) + int(fields[4])


def trace_ios(path: Path) -> int:
    from ssdpts.workload.trace import read_trace

    return sum(1 for _ in read_trace(path))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iops", type=int, default=200_000)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--keep-trace", action="store_true", help="capture with --keep-trace; its I/Os are counted too")
    a = ap.parse_args()
    with fresh_zram(1 << 30) as dev, tempfile.TemporaryDirectory() as tmp:
        out, fio_json = Path(tmp) / "bench.workload.json", Path(tmp) / "fio.json"
        env = {**os.environ, "PYTHONPATH": str(HERE.parent / "src")}
        before = completed_ios(dev)
        capture = subprocess.Popen([sys.executable, "-m", "ssdpts", "capture", dev, "--duration",
                                    f"{a.seconds + 3 * START_DELAY_S:g}s", "--step", "1s", "--out", str(out),
                                    "--quiet", "--allow-loss", *(["--keep-trace"] if a.keep_trace else [])],
                                   env=env, stderr=subprocess.PIPE, text=True)
        time.sleep(START_DELAY_S)
        subprocess.run(["fio", "--name=bench", f"--filename={dev}", "--rw=randread", "--bs=4k", "--direct=1",
                        "--ioengine=libaio", "--iodepth=32", "--iodepth_batch_submit=16",
                        "--iodepth_batch_complete_min=8", f"--rate_iops={a.iops}", f"--runtime={a.seconds}",
                        "--time_based", "--output-format=json", f"--output={fio_json}"], check=True)
        block = completed_ios(dev) - before
        _, err = capture.communicate()
        if capture.returncode != 0:
            print(f"capture failed ({capture.returncode}): {err.strip()}", file=sys.stderr)
            return 1
        read = json.loads(fio_json.read_text())["jobs"][0]["read"]
        workload = json.loads(out.read_text())
        captured = sum(s["ios"] for s in workload["streams"])
        lost = workload.get("lost_events", 0)
        trace = Path(tmp) / "bench.trace.gz"
        kept = trace_ios(trace) if a.keep_trace else None
        trace_mb = trace.stat().st_size / 1e6 if a.keep_trace else 0.0
    print(f"fio: {read['total_ios']:,} I/Os at {read['iops']:,.0f} IOPS (asked {a.iops:,}); block layer: {block:,}; "
          f"captured: {captured:,}; trace events lost: {lost:,}")
    if kept is not None:
        print(f"kept trace: {kept:,} I/Os, {trace_mb:.1f} MB ({trace_mb / max(kept, 1) * 1e6:.1f} MB per million)")
    problems = []
    if read["iops"] < REACHED * a.iops:
        problems.append(f"fio reached {read['iops']:,.0f} IOPS, under {REACHED:.0%} of {a.iops:,}")
    if lost:
        problems.append(f"{lost:,} trace events lost")
    if kept is not None and kept != captured:
        problems.append(f"the kept trace holds {kept:,} I/Os, the workload {captured:,}")
    if captured != read["total_ios"] or captured != block:
        problems.append(f"captured {captured:,} I/Os, fio counted {read['total_ios']:,}, the block layer {block:,}")
    for p in problems:
        print(f"MISS: {p}", file=sys.stderr)
    if not problems:
        print(f"OK: loss-free at {read['iops']:,.0f} IOPS")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
