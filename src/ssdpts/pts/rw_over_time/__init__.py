"""Random write over time (reviewers' study): per block size, from a purge, how fast it falls and to what."""

from __future__ import annotations

from ...capabilities import Capability
from ..spec import TestSpec
from . import render
from .run import RwOverTimeSettings, plan, run
from .summary import RwOverTimeSummary

TEST = TestSpec(
    name="rw-over-time", title="Random Write over Time, per Block Size",
    kind="study", order=3, summary=RwOverTimeSummary,
    run=run, plan=plan, renderers=render.RENDERERS,
    settings=RwOverTimeSettings,
    needs=frozenset({Capability.STREAMING}),
    description="per block size: purge, then random writes as one continuous job, MB/s per interval",
)
