"""SNIA PTS Write Saturation (WSAT): from fresh-out-of-box, write until the drive saturates."""

from __future__ import annotations

from ...capabilities import Capability
from ..spec import TestSpec, deferred

part = deferred(__name__)     # its summary, settings, run and renderers: each imported when first used

TEST = TestSpec(
    name="wsat", title="Write Saturation (WSAT)",
    kind="pts", order=4, summary=part("summary", "WsatSummary"),
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=part("settings", "WsatSettings"),
    needs=frozenset({Capability.STREAMING}),
    description="one continuous write job from fresh-out-of-box, cut into intervals; IOPS vs time and TGBW",
)
