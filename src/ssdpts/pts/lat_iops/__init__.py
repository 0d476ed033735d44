"""Latency vs IOPS, the reviewers' sweep (seeds 000, 003): block sizes x R/W mixes x TC x QD in fixed rounds."""

from __future__ import annotations

from ..spec import TestSpec, deferred

part = deferred(__name__)     # its summary, settings, run and renderers: each imported when first used

# the title keeps its apostrophe typographic (’): HTML escapes a plain one, and titles are matched in the HTML
TEST = TestSpec(
    name="lat-iops", title="Latency vs IOPS (reviewers’ sweep)",
    kind="study", order=7, summary=part("summary", "LatIopsSummary"),
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=part("settings", "LatIopsSettings"),
    description="block sizes × R/W mixes × thread counts × queue depths in fixed rounds; mean, p99, p99.9, "
                "p99.99 and max latency vs IOPS per direction",
)
