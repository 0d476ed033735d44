"""SNIA PTS IOPS: random I/O over a block size × R/W mix matrix until the tracked cells are steady."""

from __future__ import annotations

from ..spec import TestSpec
from . import render
from .run import IopsSettings, plan, run
from .summary import IopsSummary

TEST = TestSpec(
    name="iops", title="IOPS – Block Size x R/W Mix Matrix",
    kind="pts", order=1, summary=IopsSummary,
    run=run, plan=plan, renderers=render.RENDERERS,
    settings=IopsSettings,
    description="random I/O, R/W mixes × block sizes; IOPS of every cell in the measurement window",
)
