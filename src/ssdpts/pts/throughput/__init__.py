"""SNIA PTS Throughput: sequential read and write per block size, each until both bandwidths are steady."""

from __future__ import annotations

from ..spec import TestSpec, deferred
from .summary import ThroughputSummary

part = deferred(__name__)     # how it runs and draws: imported when used, not to read a stored run

TEST = TestSpec(
    name="throughput", title="Throughput – Sequential Read and Write",
    kind="pts", order=2, summary=ThroughputSummary,
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=part("settings", "ThroughputSettings"),
    description="SEQ read and write per block size (own purge and WIPC each); MiB/s and MB/s in the window",
)
