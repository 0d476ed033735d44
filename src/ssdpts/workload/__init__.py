"""One declarative description of an I/O workload (`Workload`) and its rendering to fio job text.

Tests describe what to run with `Workload`; only `workload.fio` turns that into fio options.
Engines add their own plumbing (gates, output) on top of the rendered sections.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_attributes

if TYPE_CHECKING:
    from .fio import FioJob, render, render_on
    from .spec import DATA_PATTERNS, RW_MODES, JobMix, Workload

__all__ = ["Workload", "JobMix", "RW_MODES", "DATA_PATTERNS", "FioJob", "render", "render_on"]


# imported on first use, not with the package: a run's stored options read `workload.ioengine` alone, and
# reading a run (list, show, check) renders no workload
__getattr__ = lazy_attributes(__name__, {**dict.fromkeys(("Workload", "JobMix", "RW_MODES", "DATA_PATTERNS"), "spec"),
                                         **dict.fromkeys(("FioJob", "render", "render_on"), "fio")})
