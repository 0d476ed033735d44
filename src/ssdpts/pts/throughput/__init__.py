"""SNIA PTS Throughput: sequential read and write per block size, each until both bandwidths are steady."""

from __future__ import annotations

from ..spec import TestSpec
from . import render
from .run import ThroughputSettings, plan, run
from .summary import ThroughputSummary

TEST = TestSpec(
    name="throughput", title="Throughput – Sequential Read and Write",
    kind="pts", order=2, summary=ThroughputSummary,
    run=run, plan=plan, renderers=render.RENDERERS,
    settings=ThroughputSettings,
    description="SEQ read and write per block size (own purge and WIPC each); MiB/s and MB/s in the window",
)
