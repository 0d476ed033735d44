"""What is tested: block devices, regular files, the simulated SSD. Safety checks and purge live here."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import Target
    from .resolve import open_target

__all__ = ["Target", "open_target"]


def __getattr__(name: str):
    """`Target` and `open_target` are imported on first use, not with the package: the store decodes a run with
    `targets.record`, and reading a run (list, show, check) resolves no target (bench/startup.py)."""
    if name == "Target":
        from .base import Target as value
    elif name == "open_target":
        from .resolve import open_target as value
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value
