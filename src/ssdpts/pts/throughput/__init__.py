"""SNIA PTS Throughput: sequential read and write per block size, each until both bandwidths are steady."""

from __future__ import annotations

from ..spec import TestSpec, deferred

part = deferred(__name__)     # its summary, settings, run and renderers: each imported when first used

TEST = TestSpec(
    name="throughput", title="Throughput – Sequential Read and Write",
    kind="pts", order=2, summary=part("summary", "ThroughputSummary"),
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=part("settings", "ThroughputSettings"),
    description="SEQ read and write per block size (own purge and WIPC each); MiB/s and MB/s in the window",
)
