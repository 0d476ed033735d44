"""SNIA PTS Write Saturation (WSAT): from fresh-out-of-box, write until the drive saturates."""

from __future__ import annotations

from ...capabilities import Capability
from ..spec import TestSpec
from . import render
from .run import WsatSettings, plan, run
from .summary import WsatSummary

TEST = TestSpec(
    name="wsat", title="Write Saturation (WSAT)",
    kind="pts", order=4, summary=WsatSummary,
    run=run, plan=plan, renderers=render.RENDERERS,
    settings=WsatSettings,
    needs=frozenset({Capability.STREAMING}),
    description="one continuous write job from fresh-out-of-box, cut into intervals; IOPS vs time and TGBW",
)
