"""Span sweep (reviewers' question, seed 001): random 4 KiB reads (and optionally writes) against the LBA span
they cover, to separate mapping-table (map cache) pressure from free-page exhaustion."""

from __future__ import annotations

from ..spec import TestSpec
from . import render
from .run import SpanSweepSettings, plan, run
from .summary import SpanSweepSummary

TEST = TestSpec(
    name="span-sweep", title="Span Sweep: Random Read IOPS vs LBA Span",
    kind="study", order=23, summary=SpanSweepSummary,
    run=run, plan=plan, renderers=render.RENDERERS,
    settings=SpanSweepSettings,
    description="SEQ fill of the largest span, then RND reads (and optionally writes) over growing spans",
)
