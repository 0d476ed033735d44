"""SNIA PTS Composite Block Size Workload (CBW; ECW in PTS-E 1.1): the JEDEC enterprise mix over a TC x QD sweep."""

from __future__ import annotations

from ..spec import TestSpec
from . import render
from .run import CbwSettings, plan, run
from .summary import CbwSummary

TEST = TestSpec(
    name="cbw", title="Composite Block Size Workload (CBW)",
    kind="pts", order=8, summary=CbwSummary,
    run=run, plan=plan, renderers=render.RENDERERS,
    settings=CbwSettings,
    description="JEDEC composite block sizes and access zones over thread counts × queue depths; "
                "reads and writes apart",
)
