"""SNIA PTS Latency: TC1/QD1 random I/O over a block size × R/W mix matrix until the mean latency is steady."""

from __future__ import annotations

from ..matrix import LatencySettings
from ..spec import TestSpec, deferred

part = deferred(__name__)     # its summary, settings, run and renderers: each imported when first used

TEST = TestSpec(
    name="latency", title="Latency – Response Time at TC1/QD1",
    kind="pts", order=3, summary=part("summary", "LatencySummary"),
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=LatencySettings,
    description="TC1/QD1 random I/O; mean, max and p99 … p99.999 total latency per cell and direction",
)
