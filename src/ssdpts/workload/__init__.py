"""One declarative description of an I/O workload (`Workload`) and its rendering to fio job text.

Tests describe what to run with `Workload`; only `workload.fio` turns that into fio options.
Engines add their own plumbing (gates, output) on top of the rendered sections.
"""

from .spec import DATA_PATTERNS, RW_MODES, JobMix, Workload
from .fio import FioJob, render, render_on

__all__ = ["Workload", "JobMix", "RW_MODES", "DATA_PATTERNS", "FioJob", "render", "render_on"]
