#!/usr/bin/env python3
"""Outside device-idle sampler for the benches, written apart from ssdpts's own (engines/blockidle.py)
so each checks the other: it polls `/sys/block/DEV/inflight` (reads and writes in flight) and the
completed-request counters of `/sys/block/DEV/stat`, and prints every idle run of >= 0.2 ms as
`LAST_BUSY_NS FIRST_BUSY_NS FIRST_QUIET_NS LAST_QUIET_NS` (CLOCK_REALTIME) when the device gets busy again: the
run is at most the first two apart and at least the last two, which are the same to a sample (0.1 ms) unless this
sampler itself was kept from running on a loaded host (then a comparison must allow its own gap).

    python3 bench/blockwatch.py DEV      # DEV: loop0, zram1, ...
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

from ssdpts.realtime import die_with_parent


@dataclass(frozen=True)
class Run:
    start_ns: int
    end_ns: int
    quiet_from_ns: int = 0     # the first and last samples that saw the device quiet (0: not sampled, as for Stalls)
    quiet_until_ns: int = 0

    @property
    def ms(self) -> float:
        """The run at its longest: from the last sample that saw the device busy to the next that did."""
        return (self.end_ns - self.start_ns) / 1e6

    @property
    def shortest_ms(self) -> float:
        """The run at its shortest: the span of the samples that saw it quiet."""
        return (self.quiet_until_ns - self.quiet_from_ns) / 1e6 if self.quiet_from_ns else self.ms


def watch(dev: str) -> None:
    inflight = os.open(f"/sys/block/{dev}/inflight", os.O_RDONLY)
    stat = os.open(f"/sys/block/{dev}/stat", os.O_RDONLY)

    def sample() -> tuple[bool, tuple]:
        busy = any(int(x) for x in os.pread(inflight, 128, 0).split())
        f = os.pread(stat, 512, 0).split()
        return busy, (f[0], f[4], f[11], f[15]) if len(f) > 15 else (f[0], f[4])

    was_busy, completions = sample()
    busy_at = quiet_from = quiet_until = time.time_ns()
    quiet = False
    while True:
        time.sleep(0.0001)
        busy, now_completions = sample()
        now = time.time_ns()
        if was_busy or busy or now_completions != completions:
            if quiet and now - busy_at >= 200_000:
                sys.stdout.write(f"{busy_at} {now} {quiet_from} {quiet_until}\n")
                sys.stdout.flush()
            busy_at, quiet = now, False
        else:
            if not quiet:
                quiet_from = now
            quiet, quiet_until = True, now
        was_busy, completions = busy, now_completions


class Watcher:
    """Runs this script on `dev` in a child process and collects its runs."""

    def __init__(self, dev_path: str):
        dev = os.path.basename(os.path.realpath(dev_path))
        self.proc = subprocess.Popen([sys.executable, __file__, dev], stdout=subprocess.PIPE, text=True,
                                     preexec_fn=die_with_parent)
        self.runs: list[Run] = []
        self._t = threading.Thread(target=self._read, daemon=True)
        self._t.start()
        time.sleep(0.3)   # started and sampling before the caller's first I/O

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.runs.append(Run(*map(int, line.split())))

    def stop(self) -> list[Run]:
        time.sleep(0.05)
        self.proc.kill()
        self.proc.wait()
        self._t.join(timeout=2)
        return list(self.runs)


def stall_watch(cpu: int) -> None:
    """On CPU `cpu` at real-time priority, sleep 0.2 ms at a time and print every wake-up that came more
    than 2 ms late as `START_NS END_NS`: the CPU ran nothing of ours for that long."""
    os.sched_setaffinity(0, {cpu})
    t = time.time_ns()
    while True:
        time.sleep(0.0002)
        n = time.time_ns()
        if n - t > 2_000_000:
            sys.stdout.write(f"{t} {n}\n")
            sys.stdout.flush()
        t = n


class Stalls:
    """Times when every CPU of this machine was stalled at once (a virtual machine whose host ran something
    else: nothing in the guest could run, ssdpts, fio and the device emulation included). On the shared
    development VM an idle loop saw such stalls of 13-28 ms within 20 s."""

    def __init__(self):
        self.cpus = sorted(os.sched_getaffinity(0))
        self.procs = [subprocess.Popen([sys.executable, __file__, "--stalls", str(c)], stdout=subprocess.PIPE, text=True,
                                       preexec_fn=die_with_parent) for c in self.cpus]
        self.per_cpu: list[list[Run]] = [[] for _ in self.cpus]
        self._threads = [threading.Thread(target=self._read, args=(p, runs), daemon=True)
                         for p, runs in zip(self.procs, self.per_cpu)]
        for t in self._threads:
            t.start()

    @staticmethod
    def _read(proc, runs: list[Run]) -> None:
        for line in proc.stdout:
            a, b = line.split()
            runs.append(Run(int(a), int(b)))

    def stop(self) -> list[Run]:
        """The intervals when all CPUs were stalled together."""
        for p in self.procs:
            p.kill()
            p.wait()
        for t in self._threads:
            t.join(timeout=2)
        common = self.per_cpu[0]
        for other in self.per_cpu[1:]:
            common = [Run(max(a.start_ns, b.start_ns), min(a.end_ns, b.end_ns)) for a in common for b in other
                      if max(a.start_ns, b.start_ns) < min(a.end_ns, b.end_ns)]
        return common


def net_of_stalls(run: Run, stalls: list[Run]) -> float:
    """ms of `run` during which the machine was not stalled as a whole."""
    covered = sum(max(0, min(run.end_ns, s.end_ns) - max(run.start_ns, s.start_ns)) for s in stalls)
    return (run.end_ns - run.start_ns - covered) / 1e6


def overlapping(runs: list[Run], start_ns: int, end_ns: int) -> Run | None:
    """The run sharing most time with [start_ns, end_ns] (or touching it, for a window shorter than a sample)."""
    best, most = None, -1
    for r in runs:
        if r.start_ns <= end_ns and r.end_ns >= start_ns:
            shared = min(r.end_ns, end_ns) - max(r.start_ns, start_ns)
            if shared > most:
                best, most = r, shared
    return best


if __name__ == "__main__":
    try:
        # like ssdpts's sampler: lowest real-time priority where allowed, so a saturated host does not
        # delay the samples (both samplers must see the same machine to be compared)
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
    except OSError:
        pass
    try:
        if sys.argv[1] == "--stalls":
            stall_watch(int(sys.argv[2]))
        else:
            watch(sys.argv[1])
    except KeyboardInterrupt:
        pass
