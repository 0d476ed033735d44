"""Random write over time (reviewers' study): per block size, from a purge, how fast it falls and to what."""

from __future__ import annotations

from ...capabilities import Capability
from ..spec import TestSpec, deferred

part = deferred(__name__)     # its summary, settings, run and renderers: each imported when first used

TEST = TestSpec(
    name="rw-over-time", title="Random Write over Time, per Block Size",
    kind="study", order=3, summary=part("summary", "RwOverTimeSummary"),
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=part("settings", "RwOverTimeSettings"),
    needs=frozenset({Capability.STREAMING}),
    description="per block size: purge, then random writes as one continuous job, MB/s per interval",
)
