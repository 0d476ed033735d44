"""Device idle measured at the block layer, independent of fio and of the gates.

A small child process polls the kernel's counters for the device (`/sys/block/DEV/stat`: completed
reads, writes, discards and flushes, and field 9, the requests in flight — the same number as
`/sys/block/DEV/inflight`): every ~0.1 ms while the device is quiet, every ~0.5 ms while it is busy
(each wake-up costs CPU, and on a CPU-bound device CPU is IOPS). The device is idle between two samples when nothing was in
flight at either and no request completed in between (a request that started and ended in between
would have moved a completion counter). Every idle run of at least `MIN_RUN_NS` is reported with
its bounds; the engine attributes runs to transitions between cells.

Reported length = first sample that saw activity again - last sample that saw activity: at most one
busy-time period (0.5 ms) longer and one quiet-time period (0.1 ms) shorter than the true idle time,
plus the sampler's own scheduling delay.

Protocol on stdout, one line each, times CLOCK_REALTIME ns (what `time.time_ns()` returns):
  q LAST_BUSY            the device has been idle for MIN_RUN_NS since LAST_BUSY (sent once per run)
  r LAST_BUSY FIRST_BUSY an idle run ended (the device was busy again at FIRST_BUSY)
  h NOW                  heartbeat: every run that ended before NOW has been reported
Run it by hand: `python -m ssdpts.engines.blockidle /sys/block/loop0/stat`.
"""

from __future__ import annotations

import bisect
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .results import DeviceIdle

PERIOD_NS = 100_000          # sampling period while the device is quiet
BUSY_PERIOD_NS = 500_000     # ... and while it is busy
MIN_RUN_NS = 200_000         # shorter idle runs are not reported (two periods)
HEARTBEAT_NS = 50_000_000
UNAVAILABLE_REMOTE = "not available: remote target (the block layer is on another host)"
UNAVAILABLE_SIM = "not available: simulated drive (no block device)"


@dataclass(frozen=True)
class IdleRun:
    """A stretch of device idle: the last sample that saw activity and the first that saw it again."""

    last_busy_ns: int
    first_busy_ns: int

    @property
    def ms(self) -> float:
        return (self.first_busy_ns - self.last_busy_ns) / 1e6


def stat_path_for(path: str, sys_root: Path = Path("/sys")) -> Path | None:
    """The block-layer statistics file counting the I/O fio sends to `path`: the device itself for a
    block device (partitions have their own), the device under the filesystem for a file. None where
    no block device carries it (tmpfs, overlay, network filesystems)."""
    try:
        st = os.stat(path)
    except OSError:
        p = Path(path)
        if not p.parent.exists():
            return None
        st = os.stat(p.parent)   # a file target that fio will create: its directory's filesystem
    dev = st.st_rdev if Path(path).is_block_device() else st.st_dev
    link = sys_root / "dev" / "block" / f"{os.major(dev)}:{os.minor(dev)}"
    stat = Path(os.path.realpath(link)) / "stat"
    return stat if stat.exists() else None


def unavailable_reason(target) -> str | None:
    """Why device idle cannot be measured for this target, or None if it can."""
    if target.kind == "sim":
        return UNAVAILABLE_SIM
    if getattr(target, "host", None):
        return UNAVAILABLE_REMOTE
    if stat_path_for(target.path) is None:
        return f"not available: no block device under {target.path} (no /sys/dev/block entry)"
    return None


def _counters(raw: bytes) -> tuple[bytes, tuple[bytes, ...]]:
    """(requests in flight, completion counters) from one /sys/block/DEV/stat line."""
    f = raw.split()
    return f[8], (f[0], f[4], *f[11:12], *f[15:16])


def sample_forever(stat_path: str, out=sys.stdout, period_ns: int = PERIOD_NS, busy_period_ns: int = BUSY_PERIOD_NS,
                   min_run_ns: int = MIN_RUN_NS) -> None:
    """The sampler loop (runs in the child process until killed)."""
    fd = os.open(stat_path, os.O_RDONLY)
    quiet_period, busy_period = period_ns / 1e9, busy_period_ns / 1e9
    period = quiet_period
    read, now = os.pread, time.time_ns
    inflight, done = _counters(read(fd, 4096, 0))
    last_busy = now()
    had_quiet = quiet_reported = False
    next_heartbeat = last_busy + HEARTBEAT_NS
    write, flush = out.write, out.flush
    while True:
        time.sleep(period)
        n_inflight, n_done = _counters(read(fd, 4096, 0))
        t = now()
        if inflight == b"0" and n_inflight == b"0" and n_done == done:
            had_quiet = True     # nothing in flight at either sample, nothing completed in between
            period = quiet_period
            if not quiet_reported and t - last_busy >= min_run_ns:
                write(f"q {last_busy}\n")
                flush()
                quiet_reported = True
        else:
            if had_quiet and t - last_busy >= min_run_ns:
                write(f"r {last_busy} {t}\n")
                flush()
            last_busy = t
            had_quiet = quiet_reported = False
            period = busy_period
        inflight, done = n_inflight, n_done
        if t >= next_heartbeat:
            write(f"h {t}\n")
            flush()
            next_heartbeat = t + HEARTBEAT_NS


def _die_with_parent() -> None:
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def prefer_cpu() -> str:
    """Run the sampler at the lowest real-time priority where allowed (root): it sleeps >= 0.1 ms per
    sample and uses a few % of a core, but on a saturated host a normal-priority sampler wakes late
    and stretches the idle it measures by its own scheduling delay. Returns the policy in effect."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
        return "SCHED_FIFO 1"
    except (PermissionError, OSError, AttributeError):
        return "normal"


class IdleSampler:
    """Runs the sampler child for one statistics file and collects its idle runs (thread-safe)."""

    def __init__(self, stat_path: Path):
        self.stat_path = stat_path
        self.proc = subprocess.Popen([sys.executable, "-m", "ssdpts.engines.blockidle", str(stat_path)],
                                     stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, bufsize=1,
                                     preexec_fn=_die_with_parent)
        self._cond = threading.Condition()
        self.runs: list[IdleRun] = []          # ordered by last_busy_ns
        self.quiet_since: int | None = None    # last busy sample of the idle run in progress, if any
        self.seen_ns = 0                       # every run that ended before this time is in `runs`
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            parts = line.split()
            if len(parts) < 2:
                continue
            with self._cond:
                if parts[0] == "r" and len(parts) == 3:
                    run = IdleRun(int(parts[1]), int(parts[2]))
                    self.runs.append(run)
                    self.quiet_since = None
                    self.seen_ns = max(self.seen_ns, run.first_busy_ns)
                elif parts[0] == "q":
                    self.quiet_since = int(parts[1])
                elif parts[0] == "h":
                    self.seen_ns = max(self.seen_ns, int(parts[1]))
                self._cond.notify_all()
        with self._cond:
            self.seen_ns = 1 << 62     # ended: nothing more will come
            self._cond.notify_all()

    def wait_until(self, t_ns: int, timeout_s: float = 2.0) -> bool:
        """Wait until the sampler has reported everything up to `t_ns`."""
        with self._cond:
            return self._cond.wait_for(lambda: self.seen_ns >= t_ns, timeout_s)

    def run_containing(self, t_ns: int) -> IdleRun | None:
        """The reported idle run that `t_ns` falls in, if any."""
        with self._cond:
            i = bisect.bisect_right(self.runs, t_ns, key=lambda r: r.last_busy_ns)
            run = self.runs[i - 1] if i else None
        return run if run is not None and run.first_busy_ns >= t_ns else None

    def idle_across(self, start_ns: int, end_ns: int) -> DeviceIdle:
        """Device idle at the transition whose gate-side window is [start_ns, end_ns] (the previous cell
        reported done, the next one was let go): the idle run sharing most time with it. It ends at the
        next cell's first I/O, after `end_ns`: wait (briefly) until the sampler has reported it.
        ms 0.0: the device never idled across the window; None: the sampler could not tell."""
        with self._cond:
            self._cond.wait_for(lambda: self.seen_ns > end_ns and (self.quiet_since is None or self.quiet_since > end_ns),
                                2.0)
            if self.seen_ns <= end_ns:
                return DeviceIdle(None)
            i = bisect.bisect_right(self.runs, end_ns, key=lambda r: r.last_busy_ns)
            nearby = self.runs[max(0, i - 64):i]
        best, most = None, -1
        for run in nearby:
            if run.first_busy_ns >= start_ns:
                shared = min(run.first_busy_ns, end_ns) - max(run.last_busy_ns, start_ns)
                if shared > most:
                    best, most = run, shared
        if best is None:
            return DeviceIdle(0.0)
        return DeviceIdle(round(best.ms, 3), best.last_busy_ns / 1e9, best.first_busy_ns / 1e9)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self._reader.join(timeout=2)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m ssdpts.engines.blockidle /sys/block/DEV/stat", file=sys.stderr)
        return 2
    prefer_cpu()
    try:
        sample_forever(argv[0])
    except (KeyboardInterrupt, BrokenPipeError):
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
