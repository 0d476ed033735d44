"""Holding a run's target: no mount, no second ssdpts on it while the run lasts."""

from __future__ import annotations

from contextlib import ExitStack, contextmanager

from ..targets import Target
from ..targets.hold import held, locked


@contextmanager
def exclusive(target: Target):
    """Hold the target exclusively for the run: nobody can mount it, and no second ssdpts can test it."""
    with ExitStack() as stack:
        for m in target.drives():
            if m.host is None and m.kind == "block":
                stack.enter_context(held(m.path))     # targets.hold: a file-system study lets go of it for mkfs/mount
            elif m.host is None and m.kind == "file":
                stack.enter_context(locked(m.path))
        yield
