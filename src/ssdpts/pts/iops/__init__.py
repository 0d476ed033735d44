"""SNIA PTS IOPS: random I/O over a block size × R/W mix matrix until the tracked cells are steady."""

from __future__ import annotations

from ..spec import TestSpec, deferred

part = deferred(__name__)     # its summary, settings, run and renderers: each imported when first used

TEST = TestSpec(
    name="iops", title="IOPS – Block Size x R/W Mix Matrix",
    kind="pts", order=1, summary=part("summary", "IopsSummary"),
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=part("settings", "IopsSettings"),
    description="random I/O, R/W mixes × block sizes; IOPS of every cell in the measurement window",
)
