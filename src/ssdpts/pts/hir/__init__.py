"""SNIA PTS Host Idle Recovery (HIR): does the drive recover when the host lets it idle?"""

from __future__ import annotations

from ...capabilities import Capability
from ..spec import TestSpec, deferred

part = deferred(__name__)     # its summary, settings, run and renderers: each imported when first used

TEST = TestSpec(
    name="hir", title="Host Idle Recovery (HIR)",
    kind="pts", order=5, summary=part("summary", "HirSummary"),
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=part("settings", "HirSettings"),
    # idle periods between bursts; fio's per-100 ms IOPS logs kept with each round show the idle is real
    needs=frozenset({Capability.TIMED_IDLE, Capability.BANDWIDTH_LOG}),
    description="RND 4K writes to steady state, then write bursts after idle periods vs continuous writes",
)
