#!/usr/bin/env python3
"""Outside device-idle sampler for the benches, written apart from ssdpts's own (engines/blockidle.py)
so each checks the other: it polls `/sys/block/DEV/inflight` (reads and writes in flight) and the
completed-request counters of `/sys/block/DEV/stat`, and prints every idle run of >= 0.2 ms as
`LAST_BUSY_NS FIRST_BUSY_NS` (CLOCK_REALTIME) when the device gets busy again.

    python3 bench/blockwatch.py DEV      # DEV: loop0, zram1, ...
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Run:
    start_ns: int
    end_ns: int

    @property
    def ms(self) -> float:
        return (self.end_ns - self.start_ns) / 1e6


def watch(dev: str) -> None:
    inflight = os.open(f"/sys/block/{dev}/inflight", os.O_RDONLY)
    stat = os.open(f"/sys/block/{dev}/stat", os.O_RDONLY)

    def sample() -> tuple[bool, tuple]:
        busy = any(int(x) for x in os.pread(inflight, 128, 0).split())
        f = os.pread(stat, 512, 0).split()
        return busy, (f[0], f[4], f[11], f[15]) if len(f) > 15 else (f[0], f[4])

    was_busy, completions = sample()
    busy_at = time.time_ns()
    quiet = False
    while True:
        time.sleep(0.0001)
        busy, now_completions = sample()
        now = time.time_ns()
        if was_busy or busy or now_completions != completions:
            if quiet and now - busy_at >= 200_000:
                sys.stdout.write(f"{busy_at} {now}\n")
                sys.stdout.flush()
            busy_at, quiet = now, False
        else:
            quiet = True
        was_busy, completions = busy, now_completions


class Watcher:
    """Runs this script on `dev` in a child process and collects its runs."""

    def __init__(self, dev_path: str):
        dev = os.path.basename(os.path.realpath(dev_path))
        self.proc = subprocess.Popen([sys.executable, __file__, dev], stdout=subprocess.PIPE, text=True,
                                     preexec_fn=_die_with_parent)
        self.runs: list[Run] = []
        self._t = threading.Thread(target=self._read, daemon=True)
        self._t.start()
        time.sleep(0.3)   # started and sampling before the caller's first I/O

    def _read(self) -> None:
        for line in self.proc.stdout:
            a, b = line.split()
            self.runs.append(Run(int(a), int(b)))

    def stop(self) -> list[Run]:
        time.sleep(0.05)
        self.proc.kill()
        self.proc.wait()
        self._t.join(timeout=2)
        return list(self.runs)


def overlapping(runs: list[Run], start_ns: int, end_ns: int) -> Run | None:
    """The run sharing most time with [start_ns, end_ns] (or touching it, for a window shorter than a sample)."""
    best, most = None, -1
    for r in runs:
        if r.start_ns <= end_ns and r.end_ns >= start_ns:
            shared = min(r.end_ns, end_ns) - max(r.start_ns, start_ns)
            if shared > most:
                best, most = r, shared
    return best


def _die_with_parent() -> None:
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


if __name__ == "__main__":
    try:
        # like ssdpts's sampler: lowest real-time priority where allowed, so a saturated host does not
        # delay the samples (both samplers must see the same machine to be compared)
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
    except OSError:
        pass
    try:
        watch(sys.argv[1])
    except KeyboardInterrupt:
        pass
