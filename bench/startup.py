#!/usr/bin/env python3
"""bench/startup: how much CPU and memory ssdpts's everyday commands cost, each as a whole process.

Every command runs as its own process (`python -m ssdpts ...`, this script's interpreter), its CPU time
(user + system) and peak RSS read from os.wait4, beside `python -c pass` on the same interpreter (the
floor: interpreter and site start-up). The commands alternate within each repetition (rotated order) so a
change in load hits them all alike; the median of the repetitions is reported. `list`, `show` and `check`
read a results database made first by a quick run on the simulated drive (sim:client, iops test, ~6 s of
CPU); `info` and `plan` read the simulated drive. Target: each light command under 150 ms of CPU on the
2-core VM; the declared limits below are ratios to `python -c pass`, so they hold on a faster or slower
machine. Exits 1 when a command's median ratio exceeds its limit.

    python3 bench/startup.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass

# Limits: median CPU of the command / median CPU of `python -c pass`. Measured on the 2-core VM
# (python -c pass: 11 ms CPU, 9 MiB) with a busy neighbour; before lazy imports every command took
# 550-650 ms of CPU (ratio ~50).
HELP_RATIO_MAX = 8.0       # ssdpts --help 45 ms (4.1), any COMMAND --help 45-? ms
LIST_RATIO_MAX = 8.0       # list ? ms
RUN_READING_RATIO_MAX = 14.0   # show ? ms, check ? ms: the store, the registry and the verdict's rules
TARGET_RATIO_MAX = 14.0    # info sim:client ? ms, plan ? ms: the target, the profile and the test registry


@dataclass(frozen=True)
class Command:
    label: str
    argv: list[str]
    ratio_max: float
    exit_codes: tuple[int, ...] = (0,)


@dataclass(frozen=True)
class Sample:
    cpu_s: float
    max_rss_kib: int


def measure(argv: list[str], exit_codes: tuple[int, ...]) -> Sample:
    """One process from start to exit: its own CPU and peak RSS (os.wait4 reads the child's rusage)."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in exit_codes:
        raise SystemExit(f"startup: {' '.join(argv)} exited {proc.returncode}: {stderr.decode()[-500:]}")
    return Sample(usage.ru_utime + usage.ru_stime, usage.ru_maxrss)


def results_with_a_run(results: str) -> str:
    """A results database holding one completed quick run on the simulated drive; its run id."""
    out = subprocess.run([sys.executable, "-m", "ssdpts", "run", "sim:client", "--profile", "quick",
                          "--tests", "iops", "--results", results, "--quiet"],
                         capture_output=True, text=True, check=True)
    return out.stdout.split()[-1]


def commands(results: str, run_id: str) -> list[Command]:
    from ssdpts.cli import main     # the command names, as `ssdpts --help` lists them (imports no command)

    ssdpts = [sys.executable, "-m", "ssdpts"]
    at = ["--results", results]
    light = [Command("--help", ssdpts + ["--help"], HELP_RATIO_MAX),
             Command("list", ssdpts + ["list", *at], LIST_RATIO_MAX),
             Command("show RUN", ssdpts + ["show", run_id, *at], RUN_READING_RATIO_MAX),
             Command("check RUN", ssdpts + ["check", run_id, *at], RUN_READING_RATIO_MAX, exit_codes=(0, 1)),
             Command("info sim:client", ssdpts + ["info", "sim:client"], TARGET_RATIO_MAX),
             Command("plan", ssdpts + ["plan"], TARGET_RATIO_MAX)]
    helps = [Command(f"{name} --help", ssdpts + [name, "--help"], HELP_RATIO_MAX)
             for name in main.list_commands(None)]
    return light + helps


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7, help="repetitions of every command (median)")
    args = ap.parse_args()
    floor = Command("python -c pass", [sys.executable, "-c", "pass"], 0.0)
    with tempfile.TemporaryDirectory(prefix="ssdpts-bench-startup-") as results:
        measured = [floor, *commands(results, results_with_a_run(results))]
        samples: dict[str, list[Sample]] = {c.label: [] for c in measured}
        for rep in range(args.repeat):
            shift = rep % len(measured)
            for c in measured[shift:] + measured[:shift]:
                samples[c.label].append(measure(c.argv, c.exit_codes))
    cpu = {label: statistics.median(s.cpu_s for s in runs) for label, runs in samples.items()}
    rss = {label: statistics.median(s.max_rss_kib for s in runs) for label, runs in samples.items()}
    base = cpu[floor.label]
    print(f"{'command':24} {'CPU ms':>7} {'ratio':>6} {'limit':>6} {'RSS MiB':>8}")
    missed = []
    for c in measured:
        ratio = cpu[c.label] / base
        over = c is not floor and ratio > c.ratio_max
        missed += [c.label] if over else []
        limit = f"{c.ratio_max:6.1f}" if c is not floor else f"{'':6}"
        print(f"{c.label:24} {cpu[c.label] * 1000:7.0f} {ratio:6.1f} {limit} {rss[c.label] / 1024:8.1f}"
              + ("  OVER" if over else ""))
    print(f"startup: median of {args.repeat} alternated runs each; "
          + (f"MISSED: {', '.join(missed)}" if missed else "every command within its limit"))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
