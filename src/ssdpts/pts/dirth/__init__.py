"""SNIA PTS Demand Intensity / Response Time Histogram (DIRTH): latency vs IOPS over a TC x QD sweep."""

from __future__ import annotations

from ..spec import TestSpec, deferred

part = deferred(__name__)     # its summary, settings, run and renderers: each imported when first used

TEST = TestSpec(
    name="dirth", title="Demand Intensity / Response Time Histogram (DIRTH)",
    kind="pts", order=7, summary=part("summary", "DirthSummary"),
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=part("settings", "DirthSettings"),
    description="one block size and R/W mix over thread counts × queue depths; latency vs IOPS, operating points",
)
