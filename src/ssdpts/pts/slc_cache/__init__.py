"""SLC-cache size (reviewers' study): one continuous sequential write from FOB, the cache is what ran before the first drop."""

from __future__ import annotations

from ...capabilities import Capability
from ..spec import TestSpec, deferred

part = deferred(__name__)     # its summary, settings, run and renderers: each imported when first used

TEST = TestSpec(
    name="slc-cache", title="SLC Cache Size (sequential write from FOB)",
    kind="study", order=1, summary=part("summary", "SlcCacheSummary"),
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=part("settings", "SlcCacheSettings"),
    needs=frozenset({Capability.STREAMING}),
    description="sequential 1 MiB writes over the whole capacity, MiB/s per interval; cache = bytes before the first drop",
)
