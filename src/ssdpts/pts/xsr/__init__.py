"""SNIA PTS Cross-Stimulus Recovery (XSR): recovery from random writes when sequential writes return."""

from __future__ import annotations

from ...capabilities import Capability
from ..spec import TestSpec, deferred
from .summary import XsrSummary

part = deferred(__name__)     # how it runs and draws: imported when used, not to read a stored run


TEST = TestSpec(
    name="xsr", title="Cross-Stimulus Recovery (XSR)",
    kind="pts", order=6, summary=XsrSummary,
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=part("settings", "XsrSettings"),
    needs=frozenset({Capability.STREAMING}),
    description="SEQ 1024K writes, RND 8K writes, SEQ 1024K writes back to back; time to recover throughput",
)
