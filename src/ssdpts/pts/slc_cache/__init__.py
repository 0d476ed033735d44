"""SLC-cache size (reviewers' study): one continuous sequential write from FOB, the cache is what ran before the first drop."""

from __future__ import annotations

from ...capabilities import Capability
from ..spec import TestSpec
from . import render
from .run import SlcCacheSettings, plan, run
from .summary import SlcCacheSummary

TEST = TestSpec(
    name="slc-cache", title="SLC Cache Size (sequential write from FOB)",
    kind="study", order=1, summary=SlcCacheSummary,
    run=run, plan=plan, renderers=render.RENDERERS,
    settings=SlcCacheSettings,
    needs=frozenset({Capability.STREAMING}),
    description="sequential 1 MiB writes over the whole capacity, MiB/s per interval; cache = bytes before the first drop",
)
