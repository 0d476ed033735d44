"""SNIA PTS Cross-Stimulus Recovery (XSR): recovery from random writes when sequential writes return."""

from __future__ import annotations

from ...capabilities import Capability
from ..spec import TestSpec, deferred

part = deferred(__name__)     # its summary, settings, run and renderers: each imported when first used


TEST = TestSpec(
    name="xsr", title="Cross-Stimulus Recovery (XSR)",
    kind="pts", order=6, summary=part("summary", "XsrSummary"),
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=part("settings", "XsrSettings"),
    needs=frozenset({Capability.STREAMING}),
    description="SEQ 1024K writes, RND 8K writes, SEQ 1024K writes back to back; time to recover throughput",
)
