#!/usr/bin/env python3
"""bench/startup: how much CPU and memory ssdpts's everyday commands cost, each as a whole process.

Every command runs as its own process (`python -m ssdpts ...`, this script's interpreter), its CPU time
(user + system) and peak RSS read by os.wait4 in a small launcher, beside `python -c pass` on the same interpreter (the
floor: interpreter and site start-up). The commands alternate within each repetition (rotated order) so a
change in load hits them all alike; the median of the repetitions is reported. `list`, `show` and `check`
read a results database made first by a quick run on the simulated drive (sim:client, iops test, ~6 s of
CPU); `info` and `plan` read the simulated drive. Target: each light command under 150 ms of CPU on the
2-core VM; the declared limits below are ratios to `python -c pass`, so they hold on a faster or slower
machine. Exits 1 when a command's median ratio exceeds its limit.

The commands run from compiled bytecode, as an installed ssdpts does: their .pyc files are written to a
temporary cache (PYTHONPYCACHEPREFIX) by one unmeasured run of each command first, whatever
PYTHONDONTWRITEBYTECODE says (with it set and no __pycache__ beside the sources, every process would compile
every module it imports, a cost that grows with the number of modules and that no user pays).

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

# Limits: median CPU of the command / median CPU of `python -c pass`. Measured on the 2-core VM beside other
# busy jobs (load 0.8-2.2; python -c pass: 9 ms CPU, 8.4 MiB), from compiled bytecode. Before lazy imports every
# command took 710-890 ms (ratio 52-64) and 38-72 MiB at load 13; before the store, the test registry and the
# tests' run and render modules were imported only where used: --help 103 ms, list 109, show 186, check 181,
# info 114, plan 230 (same bytecode cache, load 5-6); before each test's settings and summary were imported apart
# from its run module: show 151-155 ms, check 139-143, info 80-83, plan 212, endurance --help 148-152 (load 1-2).
LIGHT_RATIO_MAX = 11.0         # --help 48 ms (5.0-5.2), list 62-63 ms (6.6-6.8), other --help 46-67 ms (≤ 7.2)
MODULE_HELP_RATIO_MAX = 20.0   # --help of plan 83 ms (8.8-8.9), endurance 133-134 ms (14.0-14.5)
MODULE_HELP = ("plan", "endurance")    # their modules import the plan records, profiles and settings up front
RUN_READING_RATIO_MAX = 20.0   # show 138-139 ms (14.6-15.0), check 130-132 ms (14.0): store, the run's tests
INFO_RATIO_MAX = 12.0          # info sim:client 76 ms (8.1): the target and the simulator's model
PLAN_RATIO_MAX = 21.0          # plan 138-149 ms (14.6-16.0): every test's settings, the planned tests' run modules


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


# A child's peak RSS counts from its parent's (Linux records the forked copy at the exec), so each command is
# forked by this small launcher (python -S: no site, ~5 MiB) that reports the command's own rusage, not by
# this process.
LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime, usage.ru_maxrss)
"""


def compiled(pycache: str) -> dict[str, str]:
    """The environment of a measured command: bytecode written to and read from `pycache`."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPYCACHEPREFIX": pycache}


def measure(argv: list[str], exit_codes: tuple[int, ...], env: dict[str, str]) -> Sample:
    """One process from start to exit: its own CPU time and peak RSS (os.wait4 in the launcher)."""
    out = subprocess.run([sys.executable, "-S", "-c", LAUNCHER, *argv], capture_output=True, text=True, check=True,
                         env=env)
    code, cpu_s, max_rss_kib = out.stdout.split()
    if int(code) not in exit_codes:
        raise SystemExit(f"startup: {' '.join(argv)} exited {code}: {out.stderr[-500:]}")
    return Sample(float(cpu_s), int(max_rss_kib))


def results_with_a_run(results: str) -> str:
    """A results database holding one completed quick run on the simulated drive; its run id."""
    out = subprocess.run([sys.executable, "-m", "ssdpts", "run", "sim:client", "--profile", "quick",
                          "--tests", "iops", "--results", results, "--quiet"],
                         capture_output=True, text=True, check=True)
    return out.stdout.split()[-1]


def command_names() -> list[str]:
    """The commands `ssdpts --help` lists (read in a child: this process imports nothing of ssdpts)."""
    code = "from ssdpts.cli import main; print(*main.list_commands(None))"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()


def commands(results: str, run_id: str) -> list[Command]:
    ssdpts = [sys.executable, "-m", "ssdpts"]
    at = ["--results", results]
    light = [Command("--help", ssdpts + ["--help"], LIGHT_RATIO_MAX),
             Command("list", ssdpts + ["list", *at], LIGHT_RATIO_MAX),
             Command("show RUN", ssdpts + ["show", run_id, *at], RUN_READING_RATIO_MAX),
             Command("check RUN", ssdpts + ["check", run_id, *at], RUN_READING_RATIO_MAX, exit_codes=(0, 1)),
             Command("info sim:client", ssdpts + ["info", "sim:client"], INFO_RATIO_MAX),
             Command("plan", ssdpts + ["plan"], PLAN_RATIO_MAX)]
    helps = [Command(f"{name} --help", ssdpts + [name, "--help"],
                     MODULE_HELP_RATIO_MAX if name in MODULE_HELP else LIGHT_RATIO_MAX)
             for name in command_names()]
    return light + helps


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7, help="repetitions of every command (median)")
    args = ap.parse_args()
    floor = Command("python -c pass", [sys.executable, "-c", "pass"], 0.0)
    with tempfile.TemporaryDirectory(prefix="ssdpts-bench-startup-") as results:
        env = compiled(os.path.join(results, "pycache"))
        measured = [floor, *commands(results, results_with_a_run(results))]
        for c in measured:          # writes each command's bytecode: the measured runs read it
            measure(c.argv, c.exit_codes, env)
        samples: dict[str, list[Sample]] = {c.label: [] for c in measured}
        for rep in range(args.repeat):
            shift = rep % len(measured)
            for c in measured[shift:] + measured[:shift]:
                samples[c.label].append(measure(c.argv, c.exit_codes, env))
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
