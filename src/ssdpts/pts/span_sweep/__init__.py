"""Span sweep (reviewers' question, seed 001): random 4 KiB reads (and optionally writes) against the LBA span
they cover, to separate mapping-table (map cache) pressure from free-page exhaustion."""

from __future__ import annotations

from ..spec import TestSpec, deferred

part = deferred(__name__)     # its summary, settings, run and renderers: each imported when first used

TEST = TestSpec(
    name="span-sweep", title="Span Sweep: Random Read IOPS vs LBA Span",
    kind="study", order=23, summary=part("summary", "SpanSweepSummary"),
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=part("settings", "SpanSweepSettings"),
    description="SEQ fill of the largest span, then RND reads (and optionally writes) over growing spans",
)
