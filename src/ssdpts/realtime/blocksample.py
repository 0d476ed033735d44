"""The block-layer sampler loop (the helper process behind engines/blockidle.py, whose docstring says
what it measures and how the engine uses it).

Protocol on stdout, one line each, times CLOCK_REALTIME ns (what `time.time_ns()` returns):
  s START                sampling began (first line): a run whose LAST_BUSY is START was quiet from the start
  q LAST_BUSY            the device has been idle for MIN_RUN_NS since LAST_BUSY (sent once per run)
  r LAST_BUSY FIRST_BUSY an idle run ended (the device was busy again at FIRST_BUSY)
  c FIRST_BUSY SUBMITTED the earliest submission among the requests done just after the run ending at FIRST_BUSY:
                         at each sample until the device drains (nothing in flight) or HELD_LOOK_NS has
                         passed, the sample less the mean latency of the requests done since the run's end
                         (the block layer's time counters), the earliest of these. Before the run's end: the
                         device held them, unseen by the in-flight count (dm-delay counts a request only once
                         it lets it go). Not the first sample alone: a bio-based device (dm, Linux 6.1) counts
                         a request done when it starts it and adds its latency when it ends, so a released
                         hold first reads as requests done with 0 ms of latency (QEMU test bed, dm-delay)
  u LAST_BUSY SUSPENDED  the device-mapper device was suspended (a table swap) at SUSPENDED, inside the idle run
                         that began at LAST_BUSY (sent once per run): requests sent to it then wait before any
                         accounting, their latency counted only from the resume, so the run cannot be split
                         into idle and held
  h NOW                  heartbeat: every run that ended before NOW has been reported
Run it by hand: `python -m ssdpts.realtime.blocksample /sys/block/loop0/stat`.
"""

from __future__ import annotations

import errno
import os
import sys
import time

from . import prefer_cpu
from .timing import HEARTBEAT_NS, HELD_LOOK_NS, IDLE_RESOLUTION_SHARE
from .timing import MIN_IDLE_RUN_NS as MIN_RUN_NS
from .timing import SAMPLE_PERIOD_NS as PERIOD_NS
from .timing import SLOW_SAMPLE_PERIOD_NS as SLOW_PERIOD_NS
from .window import Window


def _counters(raw: bytes) -> tuple[bytes, tuple[bytes, ...]]:
    """(requests in flight, completion counters) from one /sys/block/DEV/stat line."""
    f = raw.split()
    return f[8], (f[0], f[4], *f[11:12], *f[15:16])


def _done_and_ms(raw: bytes) -> tuple[int, int]:
    """(requests completed, the sum of their latencies in ms) from one /sys/block/DEV/stat line: reads,
    writes, discards and flushes (older kernels have no discard or flush fields)."""
    f = raw.split()
    return (sum(int(x) for x in (f[0], f[4], *f[11:12], *f[15:16])),
            sum(int(x) for x in (f[3], f[7], *f[14:15], *f[16:17])))


def sample_forever(stat_path: str, window: Window | None = None, out=sys.stdout, period_ns: int = PERIOD_NS,
                   slow_period_ns: int = SLOW_PERIOD_NS, min_run_ns: int = MIN_RUN_NS) -> None:
    """The sampler loop (runs in the child process until killed). Without `window`: always close."""
    fd = os.open(stat_path, os.O_RDONLY)
    try:        # a device-mapper device says whether it is suspended (the table swap of the test bed's stall)
        suspended_fd = os.open(os.path.join(os.path.dirname(stat_path), "dm", "suspended"), os.O_RDONLY)
    except OSError:
        suspended_fd = None
    quiet_period, slow_period = period_ns / 1e9, slow_period_ns / 1e9
    share = IDLE_RESOLUTION_SHARE / 1e9      # of an idle run's ns so far, in s
    close_at = window.open_at if window is not None else (lambda t: True)
    period = quiet_period
    read, now = os.pread, time.time_ns
    raw = read(fd, 4096, 0)
    inflight, done = _counters(raw)
    last_busy = now()
    had_quiet = quiet_reported = suspension_reported = False
    ended_at = None       # FIRST_BUSY of the last idle run, until its `c` line is written
    earliest = None       # the earliest submission seen among the requests completed since ended_at
    count0 = ms0 = 0      # requests done and their latency (ms) when the run ended
    next_heartbeat = last_busy + HEARTBEAT_NS
    write, flush = out.write, out.flush
    write(f"s {last_busy}\n")
    flush()
    while True:
        time.sleep(period)
        n_raw = read(fd, 4096, 0)
        n_inflight, n_done = _counters(n_raw)
        t = now()
        if inflight == b"0" and n_inflight == b"0" and n_done == done:
            had_quiet = True     # nothing in flight at either sample, nothing completed in between
            # closely where a transition is foreseen; elsewhere in proportion to the idle so far (its unforeseen end
            # is seen at most IDLE_RESOLUTION_SHARE of it late): a long quiet stretch is not 10,000 wake-ups a second
            period = quiet_period if close_at(t) else min(slow_period, max(quiet_period, (t - last_busy) * share))
            if not quiet_reported and t - last_busy >= min_run_ns:
                write(f"q {last_busy}\n")
                flush()
                quiet_reported = True
            if suspended_fd is not None and not suspension_reported and read(suspended_fd, 8, 0)[:1] == b"1":
                write(f"u {last_busy} {t}\n")
                flush()
                suspension_reported = True
        else:
            if had_quiet and t - last_busy >= min_run_ns:
                if earliest is not None:      # the previous run's look was cut short by this one
                    write(f"c {ended_at} {earliest}\n")
                write(f"r {last_busy} {t}\n")
                flush()
                ended_at, earliest, (count0, ms0) = t, None, _done_and_ms(raw)
            last_busy = t
            had_quiet = quiet_reported = suspension_reported = False
            period = quiet_period if close_at(t) else slow_period
        if ended_at is not None:
            # cumulative since the run's end: a bio-based device (dm) counts a request done when it starts it and
            # adds its latency when it ends, a sample or more later
            count, ms = _done_and_ms(n_raw)
            if count > count0:
                submitted = t - (ms - ms0) * 1_000_000 // (count - count0)
                earliest = submitted if earliest is None else min(earliest, submitted)
            if earliest is not None and (n_inflight == b"0" or t - ended_at >= HELD_LOOK_NS):
                write(f"c {ended_at} {earliest}\n")
                flush()
                ended_at = earliest = None
        inflight, done, raw = n_inflight, n_done, n_raw
        if t >= next_heartbeat:
            write(f"h {t}\n")
            flush()
            next_heartbeat = t + HEARTBEAT_NS


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2):
        print("usage: python -m ssdpts.realtime.blocksample /sys/block/DEV/stat [WINDOW_FILE]", file=sys.stderr)
        return 2
    prefer_cpu()
    try:
        sample_forever(argv[0], Window(argv[1]) if len(argv) == 2 else None)
    except (KeyboardInterrupt, BrokenPipeError):
        return 0
    except OSError as e:
        if e.errno in (errno.ENODEV, errno.ENOENT):
            return 0          # the drive was removed (hot-unplug): nothing left to sample; the round says why
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
