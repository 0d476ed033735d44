"""SNIA PTS Demand Intensity / Response Time Histogram (DIRTH): latency vs IOPS over a TC x QD sweep."""

from __future__ import annotations

from ..spec import TestSpec
from . import render
from .run import DirthSettings, plan, run
from .summary import DirthSummary

TEST = TestSpec(
    name="dirth", title="Demand Intensity / Response Time Histogram (DIRTH)",
    kind="pts", order=7, summary=DirthSummary,
    run=run, plan=plan, renderers=render.RENDERERS,
    settings=DirthSettings,
    description="one block size and R/W mix over thread counts × queue depths; latency vs IOPS, operating points",
)
