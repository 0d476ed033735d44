"""The engine's helper processes that must keep time while fio saturates the host: the gatekeeper
(lets each cell go) and the block-layer sampler (measures the device's idle). Standard library only
and nothing else of ssdpts, so a helper starts in a few ms (`python -m ssdpts.realtime.NAME`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys


def die_with_parent() -> None:
    """For `preexec_fn`: the child gets SIGKILL when the process that started it ends, even by SIGKILL
    (an orphan fio would keep writing to the device; an orphan helper would hold its gates)."""
    import ctypes     # here: every command reads realtime.timing's constants, few start a helper

    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def prefer_cpu() -> str:
    """The lowest real-time priority where allowed (root). A helper sleeps but for a few µs per event;
    on a host saturated by fio's own threads (a CPU-bound device such as zram) a normal priority
    would make it wake late, stretching the idle it times or measures. Returns the policy in effect."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
        return "SCHED_FIFO 1"
    except (PermissionError, OSError, AttributeError):
        return "normal"


def spawn(helper: str, *args: str, stdin=subprocess.DEVNULL) -> subprocess.Popen:
    """Start helper `helper` (a module of this package) with line-buffered text stdout."""
    return subprocess.Popen([sys.executable, "-m", f"{__name__}.{helper}", *args], stdin=stdin,
                            stdout=subprocess.PIPE, text=True, bufsize=1, preexec_fn=die_with_parent)
