"""The block-layer sampler loop (the helper process behind engines/blockidle.py, whose docstring says
what it measures and how the engine uses it).

Protocol on stdout, one line each, times CLOCK_REALTIME ns (what `time.time_ns()` returns):
  s START                sampling began (first line): a run whose LAST_BUSY is START was quiet from the start
  q LAST_BUSY            the device has been idle for MIN_RUN_NS since LAST_BUSY (sent once per run)
  r LAST_BUSY FIRST_BUSY an idle run ended (the device was busy again at FIRST_BUSY)
  h NOW                  heartbeat: every run that ended before NOW has been reported
Run it by hand: `python -m ssdpts.realtime.blocksample /sys/block/loop0/stat`.
"""

from __future__ import annotations

import errno
import os
import sys
import time

from . import prefer_cpu
from .timing import HEARTBEAT_NS
from .timing import MIN_IDLE_RUN_NS as MIN_RUN_NS
from .timing import SAMPLE_PERIOD_NS as PERIOD_NS
from .timing import SLOW_SAMPLE_PERIOD_NS as SLOW_PERIOD_NS
from .window import Window


def _counters(raw: bytes) -> tuple[bytes, tuple[bytes, ...]]:
    """(requests in flight, completion counters) from one /sys/block/DEV/stat line."""
    f = raw.split()
    return f[8], (f[0], f[4], *f[11:12], *f[15:16])


def sample_forever(stat_path: str, window: Window | None = None, out=sys.stdout, period_ns: int = PERIOD_NS,
                   slow_period_ns: int = SLOW_PERIOD_NS, min_run_ns: int = MIN_RUN_NS) -> None:
    """The sampler loop (runs in the child process until killed). Without `window`: always close."""
    fd = os.open(stat_path, os.O_RDONLY)
    quiet_period, slow_period = period_ns / 1e9, slow_period_ns / 1e9
    close_at = window.open_at if window is not None else (lambda t: True)
    period = quiet_period
    read, now = os.pread, time.time_ns
    inflight, done = _counters(read(fd, 4096, 0))
    last_busy = now()
    had_quiet = quiet_reported = False
    next_heartbeat = last_busy + HEARTBEAT_NS
    write, flush = out.write, out.flush
    write(f"s {last_busy}\n")
    flush()
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
            period = quiet_period if close_at(t) else slow_period
        inflight, done = n_inflight, n_done
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
