"""One declarative description of an I/O workload (`Workload`) and its rendering to fio job text.

Tests describe what to run with `Workload`; only `workload.fio` turns that into fio options.
Engines add their own plumbing (gates, output) on top of the rendered sections.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .fio import FioJob, render, render_on
    from .spec import DATA_PATTERNS, RW_MODES, JobMix, Workload

__all__ = ["Workload", "JobMix", "RW_MODES", "DATA_PATTERNS", "FioJob", "render", "render_on"]


def __getattr__(name: str):
    """The names above are imported on first use, not with the package: a run's stored options read
    `workload.ioengine` alone, and reading a run (list, show, check) renders no workload (bench/startup.py)."""
    if name in ("Workload", "JobMix", "RW_MODES", "DATA_PATTERNS"):
        from . import spec as module
    elif name in ("FioJob", "render", "render_on"):
        from . import fio as module
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(module, name)
    globals()[name] = value
    return value
