"""SNIA PTS Composite Block Size Workload (CBW; ECW in PTS-E 1.1): the JEDEC enterprise mix over a TC x QD sweep."""

from __future__ import annotations

from ..spec import TestSpec, deferred

part = deferred(__name__)     # its summary, settings, run and renderers: each imported when first used

TEST = TestSpec(
    name="cbw", title="Composite Block Size Workload (CBW)",
    kind="pts", order=8, summary=part("summary", "CbwSummary"),
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=part("settings", "CbwSettings"),
    description="JEDEC composite block sizes and access zones over thread counts × queue depths; "
                "reads and writes apart",
)
