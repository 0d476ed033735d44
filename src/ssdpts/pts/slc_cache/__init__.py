"""SLC-cache size (reviewers' study): one continuous sequential write from FOB, the cache is what ran before the first drop."""

from __future__ import annotations

from ...capabilities import Capability
from ...settings import ACTIVE_RANGE, DURATION, FRACTION, POS_INT, SIZE
from ..spec import TestSpec
from . import render
from .run import plan, run
from .summary import SlcCacheSummary

TEST = TestSpec(
    name="slc-cache", title="SLC Cache Size (sequential write from FOB)",
    kind="study", order=1, summary=SlcCacheSummary,
    run=run, plan=plan, renderers=render.RENDERERS,
    settings={"block_size": SIZE, "interval": DURATION, "time_limit": DURATION, "capacity_percent": ACTIVE_RANGE,
              "min_drop": FRACTION, "min_points": POS_INT},
    needs=frozenset({Capability.STREAMING}),
    description="sequential 1 MiB writes over the whole capacity, MiB/s per interval; cache = bytes before the first drop",
)
