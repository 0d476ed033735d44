"""Device idle measured at the block layer, independent of fio and of the gates.

A small child process polls the kernel's counters for the device (`/sys/block/DEV/stat`: completed
reads, writes, discards and flushes, and field 9, the requests in flight — the same number as
`/sys/block/DEV/inflight`): every 0.1 ms around a transition the gatekeeper foresees, elsewhere every 2 ms
while the device is busy and every 5 % of its idle so far while it is quiet (each wake-up costs CPU, and on a
CPU-bound device CPU is IOPS: docs/device-idle.md). The device is idle between two samples when nothing was in
flight at either and no request completed in between (a request that started and ended in between
would have moved a completion counter). Every idle run of at least 0.2 ms is reported with
its bounds; the engine attributes runs to transitions between cells.

Reported length = first sample that saw activity again - last sample that saw activity: each bound is off the
true one by at most the period around it, plus the sampler's own scheduling delay. The start is late (the run
short) by up to a busy-time period (0.1 ms in a window, else 2 ms): the sample that sees the last completion is
a busy one. The end is late (the run long) by up to a quiet-time period (0.1 ms in a window or under 2 ms of idle,
else up to 5 % of the run). Held to a test's own writes in tests/test_device_idle.py.

A run in which the device held requests is latency, not idle: a device that holds a request it was given
shows it in flight (blk-mq counts a request from its dispatch to its end), but one that holds it above its
own accounting does not (dm-delay counts a request only once it lets it go: `accounts_remapped_io`), and
then the counters say idle. The requests that complete first after the run tell: the block layer's time
counters give their latency from their submission, so when they had been submitted well inside the run, the
run from their submission on was the device holding them (`held_ms`), not the host leaving it idle. Nor is a
run's part before the cell ahead of the transition was due to end (a time-based cell's jobs keep requests
given to the device until then): a device that held them from inside that cell (dm-delay, or a dm device
suspended for a table swap, which queues new requests before any accounting) idles only from then on.

The loop runs in a helper process, realtime/blocksample.py (its docstring has the protocol); run it
by hand: `python -m ssdpts.realtime.blocksample /sys/block/loop0/stat`.
"""

from __future__ import annotations

import bisect
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..realtime import spawn
from ..realtime.timing import HELD_MARGIN_NS, IDLE_REPORT_WAIT_S, READER_JOIN_S
from .results import DeviceIdle

UNAVAILABLE_REMOTE = "not available: remote target (the block layer is on another host)"
UNAVAILABLE_SIM = "not available: simulated drive (no block device)"
# io_uring_cmd on /dev/ngXnY: the NVMe commands never pass the block layer's accounting (measured in the QEMU
# guest, Linux 6.1: 2048 passthrough I/Os left /sys/block/nvme0n1/stat unchanged)
# the sampler saw the device-mapper device suspended inside an idle run: requests sent then wait before any
# accounting and their latency counts only from the resume, so the counters cannot say how much of it was idle
UNMEASURABLE_SUSPENDED = ("not measurable: the device was suspended (a device-mapper table swap) while its counters "
                          "read idle; its counters do not show requests held then")
UNAVAILABLE_PASSTHROUGH = ("not available: passthrough bypasses the block layer ({ng}'s NVMe commands are not "
                           "counted in {stat})")


_ENDED = 1 << 62     # IdleSampler.seen_ns once its sampler has ended


@dataclass(frozen=True)
class IdleRun:
    """A stretch of device idle: the last sample that saw activity and the first that saw it again."""

    last_busy_ns: int
    first_busy_ns: int
    submitted_ns: int | None = None   # when the requests that completed first after it were submitted (mean)
    suspended_ns: int | None = None   # when the sampler saw the (device-mapper) device suspended inside it

    @property
    def ms(self) -> float:
        return (self.first_busy_ns - self.last_busy_ns) / 1e6

    def idle_begins_ns(self, cell_due_ns: int | None) -> int:
        """Where the host's idle in this run can begin: not before the cell before the transition was due to end,
        HELD_MARGIN_NS aside (until then its jobs kept requests given to the device: idle counters then mean
        the device held them)."""
        if cell_due_ns is None:
            return self.last_busy_ns
        return max(self.last_busy_ns, cell_due_ns - HELD_MARGIN_NS)

    def idle_ends_ns(self) -> int:
        """Where the host's idle in this run ends: at the (mean) submission of the requests that completed
        first after it, where that lies more than HELD_MARGIN_NS (the time counters' jiffies, the sampler's
        period) before the run's end; from then on the device held them (the mean is no later than the
        oldest one's, so this is a lower bound of the hold). Otherwise at the run's end: the requests that
        ended it were sent as it ended."""
        if self.submitted_ns is None or self.first_busy_ns - self.submitted_ns <= HELD_MARGIN_NS:
            return self.first_busy_ns
        return self.submitted_ns

    def measure(self, cell_due_ns: int | None = None) -> DeviceIdle:
        """This run as a transition's device idle: `ms` the part of it the host left the device idle, `held_ms`
        the rest (the device had requests it had been given, unseen by the counters)."""
        begins, ends = self.idle_begins_ns(cell_due_ns), self.idle_ends_ns()
        if self.suspended_ns is not None and ends - max(begins, self.suspended_ns) > HELD_MARGIN_NS:
            # the part left idle reaches past a suspension: requests may have waited there unseen
            return DeviceIdle(None, self.last_busy_ns / 1e9, self.first_busy_ns / 1e9, cause=UNMEASURABLE_SUSPENDED,
                              held_ms=round((self.first_busy_ns - ends) / 1e6, 3))
        idle = max(0, ends - begins) / 1e6
        return DeviceIdle(round(idle, 3), self.last_busy_ns / 1e9, self.first_busy_ns / 1e9,
                          held_ms=round(self.ms - idle, 3))


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
    if getattr(target, "passthrough", None):
        return UNAVAILABLE_PASSTHROUGH.format(ng=target.passthrough, stat=stat_path_for(target.path) or
                                              f"{target.path}'s stat")
    if stat_path_for(target.path) is None:
        return f"not available: no block device under {target.path} (no /sys/dev/block entry)"
    return None


class IdleSampler:
    """Runs the sampler child for one statistics file and collects its idle runs (thread-safe)."""

    def __init__(self, stat_path: Path, window: Path | None = None):
        """`window`: the gatekeeper's close-look window file (realtime/window.py); None: always close."""
        self.stat_path = stat_path
        self.proc = spawn("blocksample", str(stat_path), *([str(window)] if window else []))
        self._cond = threading.Condition()
        self.runs: list[IdleRun] = []          # ordered by last_busy_ns
        self.quiet_since: int | None = None    # last busy sample of the idle run in progress, if any
        self.seen_ns = 0                       # every run that ended before this time is in `runs`
        self.started_ns: int | None = None     # when the child began sampling
        self.first_io_ns: int | None = None    # the first I/O it saw, if the device was quiet until then
        self.submitted: dict[int, int] = {}     # a run's first_busy_ns -> its `c` report (IdleRun.submitted_ns)
        self.suspended: dict[int, int] = {}     # a run's last_busy_ns -> its `u` report (IdleRun.suspended_ns)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            parts = line.split()
            if len(parts) < 2:
                continue
            with self._cond:
                if parts[0] == "s":
                    self.started_ns = int(parts[1])
                elif parts[0] == "r" and len(parts) == 3:
                    run = IdleRun(int(parts[1]), int(parts[2]))
                    if self.first_io_ns is None and run.last_busy_ns == self.started_ns:
                        self.first_io_ns = run.first_busy_ns
                    self.runs.append(run)
                    self.quiet_since = None
                    self.seen_ns = max(self.seen_ns, run.first_busy_ns)
                elif parts[0] == "c" and len(parts) == 3:
                    self.submitted[int(parts[1])] = int(parts[2])
                elif parts[0] == "u" and len(parts) == 3:
                    self.suspended[int(parts[1])] = int(parts[2])
                elif parts[0] == "q":
                    self.quiet_since = int(parts[1])
                elif parts[0] == "h":
                    self.seen_ns = max(self.seen_ns, int(parts[1]))
                self._cond.notify_all()
        with self._cond:
            self.seen_ns = _ENDED     # nothing more will come
            self._cond.notify_all()

    def idle_across(self, start_ns: int, end_ns: int, cell_due_ns: int | None = None) -> DeviceIdle:
        """Device idle at the transition whose gate-side window is [start_ns, end_ns] (the previous cell
        reported done, the next one was let go): the idle run sharing most time with it. It ends at the
        next cell's first I/O, after `end_ns`: wait (briefly) until the sampler has reported it.
        `cell_due_ns`: when the previous cell, if time-based, was due to end (IdleRun.measure).
        ms 0.0: the device never idled across the window; None: the sampler could not tell."""
        with self._cond:
            self._wait_reported(lambda: self.seen_ns > end_ns and (self.quiet_since is None or self.quiet_since > end_ns))
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
        if best is None:     # the window itself, so that an outside check can look at the same place
            return DeviceIdle(0.0, start_ns / 1e9, end_ns / 1e9)
        with self._cond:     # the requests that completed first after it (reported once they have)
            self._wait_reported(lambda: best.first_busy_ns in self.submitted or self.seen_ns == _ENDED)
            best = IdleRun(best.last_busy_ns, best.first_busy_ns, self.submitted.get(best.first_busy_ns),
                           self.suspended.get(best.last_busy_ns))
        return best.measure(cell_due_ns)

    def _wait_reported(self, reported) -> None:
        """(Holding the lock) until `reported()`, or until the sampler's reports reach IDLE_REPORT_WAIT_S past
        the call (what it would have said has been said), however late this process reads them: a TCG guest's
        busy engine read them 2-7 s late, and a wait of fixed length gave up (no figure) or saw an idle run
        without its `c` line (a hold judged idle). A sampler that reports nothing for IDLE_REPORT_WAIT_S is
        given up on."""
        until = time.time_ns() + int(IDLE_REPORT_WAIT_S * 1e9)
        while not reported() and self.seen_ns < until:
            seen = self.seen_ns
            self._cond.wait_for(lambda: reported() or self.seen_ns >= until, IDLE_REPORT_WAIT_S)
            if self.seen_ns == seen:
                return

    def first_io(self) -> int | None:
        """The first I/O since sampling began (ns), where the device was quiet until then; None if it was busy
        when sampling began or has not been seen yet (waits briefly for the sampler's report)."""
        with self._cond:
            self._cond.wait_for(lambda: self.first_io_ns is not None or self.runs, IDLE_REPORT_WAIT_S)
            return self.first_io_ns

    def last_io(self) -> int | None:
        """The last I/O before the device went quiet (ns): once nothing is left to run (its processes ended),
        the last I/O the device saw. None if it is still busy (waits briefly for the sampler's report)."""
        with self._cond:
            self._cond.wait_for(lambda: self.quiet_since is not None, IDLE_REPORT_WAIT_S)
            return self.quiet_since

    def forget_before(self, ns: int) -> None:
        """Drop idle runs that ended before `ns` (no transition left to judge there): a session can run for
        days, and a device with sub-millisecond idles reports thousands of runs a minute."""
        with self._cond:
            i = bisect.bisect_left(self.runs, ns, key=lambda r: r.first_busy_ns)
            del self.runs[:i]
            self.submitted = {k: v for k, v in self.submitted.items() if k >= ns}
            self.suspended = {k: v for k, v in self.suspended.items() if v >= ns}

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self._reader.join(timeout=READER_JOIN_S)


