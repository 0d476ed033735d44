#!/usr/bin/env python3
"""bench/soak: a shipped real profile, unscaled, for N minutes on a loop device and on zram, watched from outside.

`quick` rounds last seconds; real profiles have one-minute cells and rounds of minutes to an hour, and a bug
that shows only when a round outlives one of the engine's absolute times is invisible at quick scale (one
killed every real-profile round longer than ~70 s). This runs the real CLI as a user would

    python -m ssdpts run DEV --profile pts-client --tests throughput,latency --destroy-data --results DIR

on a loop device (backing file in /dev/shm) and on a zram device of its own (hot_add; /dev/zram0 is left
to the tests), one after the other, and checks from outside, every second, that:

* the ssdpts process is alive and has written no error (`ssdpts: error`, a traceback) to its output;
* the device's block-layer completion counters (/sys/block/DEV/stat: reads, writes, discards) rise:
  no window without a completed I/O longer than --stall-s (the first I/O within --start-s of the launch);
* rounds keep being committed to the results database (read with ssdpts's Store API): one at least every
  --round-limit seconds (default, per test: 1.5 x its longest round in `ssdpts plan --json` + 2 minutes).

After N minutes it sends SIGINT and expects exit 130 and status `interrupted` (`ssdpts show --json`), then
prints a table per device: rounds and cells committed, device idle per transition as stored (median and
max over the measured transitions, count of unmeasured), and each cell's IOPS range. Exits 1 on any error,
stall, missing progress or wrong ending; 2 when a device cannot be made. Devices are always released.

    python3 bench/soak.py [--minutes 10] [--device loop|zram|both] [--profile pts-client]
                          [--tests throughput,latency] [--size-mib 1024] [--stall-s 10] [--results DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from zram import fresh_zram, loop_device

from ssdpts.realtime import die_with_parent
from ssdpts.store import Store

POLL_S = 1.0
INTERRUPTED = 130


@dataclass
class Progress:
    """What the watcher saw of one device."""

    ios: int = 0                 # reads + writes + discards completed (block layer)
    last_io_at: float = 0.0      # monotonic time the counter last rose (0: no I/O yet)
    longest_quiet_s: float = 0.0
    rounds: int = 0
    last_round_at: float = 0.0
    failures: list[str] = field(default_factory=list)


@dataclass
class Outcome:
    """One device's soak, for the summary table."""

    device: str
    target: str
    run_id: str
    minutes: float
    exit_code: int | None
    status: str
    rounds: int
    cells: int
    idle_measured: list[float]
    idle_unmeasured: int
    iops_by_cell: dict[str, tuple[float, float]]
    longest_quiet_s: float
    failures: list[str]


def child_setup() -> None:
    """The ssdpts process dies with the bench, and takes SIGINT as Ctrl-C even when the bench was started
    with SIGINT ignored (a background job of a script: Python then installs no KeyboardInterrupt handler)."""
    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def ssdpts_cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "ssdpts", *args]


def completed_ios(dev: str) -> int:
    """Reads, writes and discards completed (Documentation/block/stat.rst fields 1, 5 and 12)."""
    f = [int(x) for x in Path(f"/sys/block/{Path(dev).name}/stat").read_text().split()]
    return f[0] + f[4] + (f[11] if len(f) > 11 else 0)


def round_limits_s(dev: str, profile: str, tests: str) -> dict[str, float]:
    """Per test, the longest time to wait for its next round: 1.5 x its longest round as `ssdpts plan`
    foresees it, plus 2 minutes for a purge and preconditioning at a test's start."""
    out = subprocess.run(ssdpts_cli("plan", dev, "--profile", profile, "--tests", tests, "--json"),
                         capture_output=True, text=True, check=True).stdout
    limits = {}
    for test in json.loads(out)["tests"]:
        rounds = [p["seconds_max"] / p["rounds_max"] for p in test["phases"] if p["rounds_max"] and p["seconds_max"]]
        limits[test["test"]] = 1.5 * max(rounds, default=0.0) + 120
    return limits


@dataclass(frozen=True)
class Committed:
    """The only run in a soak's results database, as far as it got."""

    run_id: str = ""
    rounds: int = 0
    test: str = ""               # the test running now (or next)


def committed(db: Path, tests: list[str]) -> Committed:
    if not db.exists():
        return Committed()
    store = Store(db)
    try:
        runs = store.runs()
        if not runs:
            return Committed()
        rid = runs[0]["id"]
        current = next((t for t in tests if store.test_status(rid, t) != "completed"), tests[-1])
        return Committed(rid, sum(len(store.rounds(rid, t, with_cells=False)) for t in tests), current)
    finally:
        store.close()


# the one line Ctrl-C gives: "ssdpts: error: run ID interrupted (what the stop lost); continue it with 'ssdpts resume ID'"
INTERRUPTED_LINE = re.compile(r"ssdpts: error: run \S+ interrupted( \(.*\))?; continue it with 'ssdpts resume ")


def error_lines(text: str) -> list[str]:
    """Error lines in ssdpts's output, but for the one line Ctrl-C is expected to give."""
    return [line for line in text.splitlines()
            if ("ssdpts: error" in line or "Traceback" in line) and not INTERRUPTED_LINE.match(line)]


def watch(proc: subprocess.Popen, dev: str, db: Path, tests: list[str], err_log: Path, args,
          round_limits: dict[str, float], p: Progress) -> None:
    """Poll until the soak time is up or something fails (into `p.failures`)."""
    started = p.last_round_at
    while time.monotonic() - started < args.minutes * 60:
        time.sleep(POLL_S)
        now = time.monotonic()
        if proc.poll() is not None:
            p.failures.append(f"ssdpts ended after {now - started:.0f} s with exit code {proc.returncode}")
            break
        errors = error_lines(err_log.read_text(errors="replace"))
        if errors:
            p.failures.append(f"error in ssdpts's output: {errors[0]}")
            break
        ios = completed_ios(dev)
        if ios != p.ios:
            p.ios, p.last_io_at = ios, now
        quiet = now - (p.last_io_at or started)
        p.longest_quiet_s = max(p.longest_quiet_s, quiet if p.last_io_at else 0.0)
        if not p.last_io_at and quiet > args.start_s:
            p.failures.append(f"no I/O reached {dev} within {args.start_s:.0f} s of the launch")
            break
        if p.last_io_at and quiet > args.stall_s:
            p.failures.append(f"stall: no I/O completed on {dev} for {quiet:.0f} s (limit {args.stall_s:.0f} s)")
            break
        run = committed(db, tests)
        if run.rounds != p.rounds:
            p.rounds, p.last_round_at = run.rounds, now
        limit = args.round_limit or round_limits.get(run.test or tests[0], 0.0)
        if now - p.last_round_at > limit:
            p.failures.append(f"no round committed for {now - p.last_round_at:.0f} s "
                              f"(limit {limit:.0f} s in {run.test or tests[0]}; {p.rounds} so far)")
            break


def interrupt(proc: subprocess.Popen, failures: list[str]) -> None:
    """SIGINT as Ctrl-C would; ssdpts must stop with 130 (its fio processes with it)."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        failures.append("ssdpts did not stop within 120 s of SIGINT; killed")
        proc.kill()
        proc.wait()
        return
    if proc.returncode != INTERRUPTED:
        failures.append(f"exit code {proc.returncode} after SIGINT, expected {INTERRUPTED}")


def stored(results: Path, run_id: str, tests: list[str]) -> tuple[str, list, list[float], int, dict]:
    """What the run stored, through the CLI's results document and the Store API:
    (status, rounds, measured device idle per transition in ms, unmeasured transitions, IOPS range by cell)."""
    doc = json.loads(subprocess.run(ssdpts_cli("show", run_id, "--json", "--results", str(results)),
                                    capture_output=True, text=True, check=True).stdout)
    idle = [x for t in doc["tests"] for r in t["rounds"] if r["kind"] == "round"
            for x in [r["device_idle_before_ms"], *r["device_idle_inside_ms"]]]
    measured = [x for x in idle if x is not None]
    store = Store.in_dir(results)
    try:
        rounds = [r for t in tests for r in store.rounds(run_id, t)]
    finally:
        store.close()
    iops: dict[str, list[float]] = {}
    for r in rounds:
        for c in r.cells:
            iops.setdefault(f"{r.test}/{c.name}", []).append(c.iops)
    return (doc["run"]["status"], rounds, measured, len(idle) - len(measured),
            {k: (min(v), max(v)) for k, v in iops.items()})


def soak(kind: str, dev: str, args, results: Path) -> Outcome:
    tests = args.tests.split(",")
    db = results / "ssdpts.db"
    if db.exists():
        raise SystemExit(f"{db} exists: give bench/soak a --results directory of its own")
    limits = round_limits_s(dev, args.profile, args.tests)
    print(f"{kind}: {dev}, {args.profile} --tests {args.tests}, {args.minutes:g} min, results {results}; "
          "a round at least every " + ", ".join(f"{v:.0f} s in {k}" for k, v in limits.items()), flush=True)
    out_log, err_log = results.parent / f"{kind}.out", results.parent / f"{kind}.err"
    with open(out_log, "w") as out, open(err_log, "w") as err:
        proc = subprocess.Popen(ssdpts_cli("run", dev, "--profile", args.profile, "--tests", args.tests,
                                           "--destroy-data", "--results", str(results)),
                                stdout=out, stderr=err, stdin=subprocess.DEVNULL, preexec_fn=child_setup)
        started = time.monotonic()
        progress = Progress(ios=completed_ios(dev), last_round_at=started)
        try:
            watch(proc, dev, db, tests, err_log, args, limits, progress)
        finally:
            interrupt(proc, progress.failures)
    minutes = (time.monotonic() - started) / 60
    failures = progress.failures
    failures += [f"error in ssdpts's output: {line}" for line in error_lines(err_log.read_text(errors="replace"))
                 if not any(line in f for f in failures)]
    run_id = committed(db, tests).run_id
    if not run_id:
        failures.append("no run was created")
        return Outcome(kind, dev, "", minutes, proc.returncode, "-", 0, 0, [], 0, {}, progress.longest_quiet_s,
                       failures)
    status, rounds, measured, unmeasured, iops = stored(results, run_id, tests)
    if status != "interrupted":
        failures.append(f"run status {status!r} after SIGINT, expected 'interrupted'")
    if not rounds:
        failures.append("no round was committed")
    return Outcome(kind, dev, run_id, minutes, proc.returncode, status, len(rounds),
                   sum(len(r.cells) for r in rounds), measured, unmeasured, iops, progress.longest_quiet_s,
                   failures)


def report(outcomes: list[Outcome]) -> None:
    print()
    print(f"{'device':6} {'target':12} {'min':>5} {'exit':>4} {'status':12} {'rounds':>6} {'cells':>5} "
          f"{'idle n':>6} {'unmeas':>6} {'idle med ms':>11} {'idle max ms':>11} {'quiet s':>7}")
    for o in outcomes:
        med = f"{statistics.median(o.idle_measured):.2f}" if o.idle_measured else "-"
        top = f"{max(o.idle_measured):.2f}" if o.idle_measured else "-"
        print(f"{o.device:6} {o.target:12} {o.minutes:5.1f} {o.exit_code!s:>4} {o.status:12} {o.rounds:6} "
              f"{o.cells:5} {len(o.idle_measured):6} {o.idle_unmeasured:6} {med:>11} {top:>11} "
              f"{o.longest_quiet_s:7.1f}")
    for o in outcomes:
        print(f"\n{o.device} ({o.run_id or 'no run'}): IOPS per cell, lowest - highest over the committed rounds")
        for cell, (lo, hi) in o.iops_by_cell.items():
            print(f"  {cell:32} {lo:12,.0f} - {hi:12,.0f}")
        for f in o.failures:
            print(f"  FAIL: {f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=10.0, help="soak time per device (default 10)")
    ap.add_argument("--device", choices=("loop", "zram", "both"), default="both")
    ap.add_argument("--profile", default="pts-client", help="a shipped real profile (pts-client, pts-enterprise)")
    ap.add_argument("--tests", default="throughput,latency",
                    help="tests to run (default throughput,latency: 2-minute rounds, then 6-minute ones)")
    ap.add_argument("--size-mib", type=int, default=1024, help="device size (default 1024 MiB)")
    ap.add_argument("--stall-s", type=float, default=10.0, help="longest window without a completed I/O")
    ap.add_argument("--start-s", type=float, default=60.0, help="the first I/O must come within this")
    ap.add_argument("--round-limit", type=float, default=0.0,
                    help="longest time without a committed round, s (default: from `ssdpts plan`)")
    ap.add_argument("--results", type=Path, help="keep the results and logs here (default: a temporary dir)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("bench/soak needs root (loop and zram devices)", file=sys.stderr)
        return 2
    # SIGTERM ends the soak as Ctrl-C does: the running ssdpts gets SIGINT and the devices are released
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    kinds = ("loop", "zram") if args.device == "both" else (args.device,)
    size = args.size_mib * 2**20
    outcomes = []
    with ExitStack() as stack:
        base = args.results or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ssdpts-soak-")))
        for kind in kinds:
            make = loop_device if kind == "loop" else fresh_zram
            with make(size) as dev:
                results = base / kind / "results"
                results.parent.mkdir(parents=True, exist_ok=True)
                outcomes.append(soak(kind, dev, args, results))
    report(outcomes)
    failed = any(o.failures for o in outcomes)
    print("\nFAILED" if failed else "\nOK: every device ran, committed rounds, never stalled, stopped cleanly")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
