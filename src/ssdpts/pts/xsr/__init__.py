"""SNIA PTS Cross-Stimulus Recovery (XSR): recovery from random writes when sequential writes return."""

from __future__ import annotations

from ...capabilities import Capability
from ..spec import TestSpec
from . import render
from .run import XsrSettings, plan, run
from .summary import XsrSummary


TEST = TestSpec(
    name="xsr", title="Cross-Stimulus Recovery (XSR)",
    kind="pts", order=6, summary=XsrSummary,
    run=run, plan=plan, renderers=render.RENDERERS,
    settings=XsrSettings,
    needs=frozenset({Capability.STREAMING}),
    description="SEQ 1024K writes, RND 8K writes, SEQ 1024K writes back to back; time to recover throughput",
)
