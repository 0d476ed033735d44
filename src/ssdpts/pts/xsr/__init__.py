"""SNIA PTS Cross-Stimulus Recovery (XSR): recovery from random writes when sequential writes return."""

from __future__ import annotations

from ...capabilities import Capability
from ...settings import DURATION, Setting, duration_ok
from ..spec import TestSpec
from . import render
from .run import plan, run
from .summary import XsrSummary

GROUP_TIMES = Setting('three durations, e.g. ["8h", "6h", "8h"]',
                      lambda v: isinstance(v, list) and len(v) == 3 and all(duration_ok(x) for x in v))

TEST = TestSpec(
    name="xsr", title="Cross-Stimulus Recovery (XSR)",
    kind="pts", order=6, summary=XsrSummary,
    run=run, plan=plan, renderers=render.RENDERERS,
    settings={"interval": DURATION, "group_times": GROUP_TIMES},
    needs=frozenset({Capability.STREAMING}),
    description="SEQ 1024K writes, RND 8K writes, SEQ 1024K writes back to back; time to recover throughput",
)
