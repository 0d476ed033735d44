"""SIGTERM and SIGHUP stop ssdpts the way Ctrl-C does: as a KeyboardInterrupt in the main thread, so a run is
marked `interrupted`, its fio processes are killed and the command exits 130.

SIGINT is handled whatever the parent left: a background job of a non-interactive shell (`ssdpts run ... &` in
a script, then `kill -INT` or `timeout -s INT`) starts with SIGINT ignored, and Python then installs no
KeyboardInterrupt handler of its own. fio does not depend on it: it runs in its own session and is stopped by
ssdpts.

Python runs a signal handler between two bytecodes of the main thread, wherever that is. When that is inside
a callback whose exceptions Python only reports as unraisable (an at-fork hook while a subprocess starts, a
__del__), the KeyboardInterrupt is lost (a script's `kill -INT` that landed in a subprocess's at-fork hook was
lost, and the run went on to exit 0). Python hands that report to `sys.unraisablehook`: ours silences it and
raises the interrupt again REPEAT_S later, SIGINT's as the others'. Only a lost interrupt is raised again: an
interrupt that propagates runs every `finally` and `__exit__` on its way (fio killed, a tracefs instance
removed), and those clean-ups must not be cut by a second one (a periodic repeat did, beside two busy loops: a
trace instance was left behind). A second SIGTERM/SIGHUP gets the default action: it ends the process at once;
a second Ctrl-C raises again.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from contextlib import contextmanager

REPEAT_S = 0.05     # a lost interrupt is raised again this much later (out of the callback that lost it)
SIGNALS = (signal.SIGTERM, signal.SIGHUP)
_requested = False
_signal_name = ""


def _raise_again(signum, frame):
    raise KeyboardInterrupt


def _on_signal(signum, frame):
    global _signal_name
    if _requested:
        for sig in SIGNALS:
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    _signal_name = signal.Signals(signum).name
    _first_interrupt()
    raise KeyboardInterrupt


def _first_interrupt() -> None:
    """The first interrupt: from now on, one lost where Python ignores exceptions is raised again."""
    global _requested
    _requested = True
    signal.signal(signal.SIGALRM, _raise_again)


def _on_interrupt(signum, frame):
    """SIGINT (Ctrl-C): every one raises KeyboardInterrupt, as Python's own handler does."""
    if not _requested:
        _first_interrupt()
    raise KeyboardInterrupt


def _unraisable(report, default=sys.unraisablehook):
    if _requested and report.exc_type is KeyboardInterrupt:
        # ours, lost where Python ignores exceptions: raised again soon, in the main thread (one-shot timer)
        signal.setitimer(signal.ITIMER_REAL, REPEAT_S)
        return
    default(report)


def install() -> None:
    """In the main thread of the command-line process (signal handlers cannot be set elsewhere)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _on_interrupt)
        for sig in SIGNALS:
            signal.signal(sig, _on_signal)
        sys.unraisablehook = _unraisable


def acknowledge() -> None:
    """The KeyboardInterrupt arrived where it is handled: a repeat still pending is not raised."""
    if _requested and threading.current_thread() is threading.main_thread():
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)


def reason() -> str:
    """What stopped the command, for the run's message."""
    return f"interrupted by {_signal_name}" if _signal_name else "interrupted by the user (Ctrl-C)"


@contextmanager
def deferred():
    """Signals held back (blocked) inside the block and delivered at its end: for work that an interrupt must not
    cut in half (a live capture's batch of events, taken out of the kernel's buffer and not yet counted)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = {signal.SIGINT, signal.SIGALRM, *SIGNALS}
    before = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
