#!/usr/bin/env python3
"""bench/stalls: N quick IOPS runs on loop devices, one device and two in parallel; exits 1 on any recorded stall.

A stall (a time-based cell not ended HANG_GRACE_S after its due end: fio is killed and the round run again)
ends with exit 0 and is easy to miss; it is recorded as a `fio-stall` deviation. This runs the real CLI as a
user would,

    python -m ssdpts run /dev/loopA [/dev/loopB] --profile quick --tests iops --destroy-data --results DIR -q

on loop devices with direct I/O (backing files in /dev/shm), --runs times per mode, optionally beside
--load busy processes (`yes > /dev/null`), and reads each run's deviations from `ssdpts show RUN --json`.
It prints, per mode: runs, runs that stalled, stalls, runs that did not complete, and the longest run.
Exits 1 on any stall or failed run, 2 when a device cannot be made. Devices are always released.

    python3 bench/stalls.py [--runs 20] [--mode single|parallel|both] [--load 0] [--size-mib 1024]
                            [--results DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from zram import loop_device

MODES = {"single": 1, "parallel": 2}


@dataclass
class Tally:
    """One mode's runs."""

    mode: str
    runs: int = 0
    stalled_runs: int = 0
    stalls: list[str] = field(default_factory=list)     # each stall's evidence, as `show --json` has it
    failed: list[str] = field(default_factory=list)     # runs that did not exit 0 completed
    longest_s: float = 0.0


def ssdpts_cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "ssdpts", *args]


def quick_run(devs: list[str], results: Path) -> tuple[str | None, str, float]:
    """(run id or None, why it failed, seconds) of one quick IOPS run on `devs`."""
    t0 = time.monotonic()
    p = subprocess.run(ssdpts_cli("run", *devs, "--profile", "quick", "--tests", "iops", "--destroy-data",
                                  "--results", str(results), "-q"), capture_output=True, text=True)
    took = time.monotonic() - t0
    lines = p.stdout.strip().splitlines()
    if p.returncode != 0 or not lines:
        return None, f"exit {p.returncode}: {(p.stderr.strip().splitlines() or ['no output'])[-1]}", took
    return lines[-1], "", took


def recorded_stalls(results: Path, run_id: str) -> tuple[str, list[str]]:
    """(run status, each fio-stall deviation's evidence) from the documented JSON."""
    doc = json.loads(subprocess.run(ssdpts_cli("show", run_id, "--json", "--results", str(results)),
                                    capture_output=True, text=True, check=True).stdout)
    return doc["run"]["status"], [d["evidence"] for d in doc["conformance"]["deviations"] if d["rule"] == "fio-stall"]


def bench(mode: str, devs: list[str], runs: int, results: Path) -> Tally:
    tally = Tally(mode)
    for i in range(1, runs + 1):
        run_id, why, took = quick_run(devs, results)
        tally.runs += 1
        tally.longest_s = max(tally.longest_s, took)
        if run_id is None:
            tally.failed.append(why)
            print(f"{mode} {i}/{runs}: FAILED {why}", flush=True)
            continue
        status, stalls = recorded_stalls(results, run_id)
        if status != "completed":
            tally.failed.append(f"{run_id}: status {status}")
        if stalls:
            tally.stalled_runs += 1
            tally.stalls += stalls
        print(f"{mode} {i}/{runs}: run {run_id} {status}, {len(stalls)} stall(s), {took:.0f} s"
              + "".join(f"\n    {s}" for s in stalls), flush=True)
    return tally


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=20, help="quick runs per mode")
    ap.add_argument("--mode", choices=["single", "parallel", "both"], default="both")
    ap.add_argument("--load", type=int, default=0, help="busy processes beside the runs (yes > /dev/null)")
    ap.add_argument("--size-mib", type=int, default=1024, help="each loop device's size")
    ap.add_argument("--results", type=Path, help="results folder (default: a temporary one, removed)")
    args = ap.parse_args()
    modes = list(MODES) if args.mode == "both" else [args.mode]
    tallies = []
    with ExitStack() as stack:
        results = args.results or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ssdpts-stalls-")))
        try:
            # each device its own folder: loop_device names its backing file after the process
            devs = [stack.enter_context(loop_device(args.size_mib * 2**20, Path(stack.enter_context(
                tempfile.TemporaryDirectory(prefix="ssdpts-stalls-", dir="/dev/shm")))))
                for _ in range(max(MODES[m] for m in modes))]
        except (OSError, subprocess.CalledProcessError) as e:
            print(f"bench/stalls: cannot make a loop device ({e}); run as root with losetup", file=sys.stderr)
            return 2
        load = [stack.enter_context(subprocess.Popen(["yes"], stdout=subprocess.DEVNULL)) for _ in range(args.load)]
        for p in load:
            stack.callback(p.kill)
        for mode in modes:
            tallies.append(bench(mode, devs[:MODES[mode]], args.runs, results))
    print(f"\n{'mode':<9} {'runs':>4} {'stalled':>7} {'stalls':>6} {'failed':>6} {'longest':>8}   (load {args.load})")
    for t in tallies:
        print(f"{t.mode:<9} {t.runs:>4} {t.stalled_runs:>7} {len(t.stalls):>6} {len(t.failed):>6} {t.longest_s:>7.0f}s")
        for why in t.failed:
            print(f"    failed: {why}")
    return 1 if any(t.stalls or t.failed for t in tallies) else 0


if __name__ == "__main__":
    sys.exit(main())
