"""Random write over time (reviewers' study): per block size, from a purge, how fast it falls and to what."""

from __future__ import annotations

from ...capabilities import Capability
from ..spec import TestSpec, deferred
from .summary import RwOverTimeSummary

part = deferred(__name__)     # how it runs and draws: imported when used, not to read a stored run

TEST = TestSpec(
    name="rw-over-time", title="Random Write over Time, per Block Size",
    kind="study", order=3, summary=RwOverTimeSummary,
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=part("settings", "RwOverTimeSettings"),
    needs=frozenset({Capability.STREAMING}),
    description="per block size: purge, then random writes as one continuous job, MB/s per interval",
)
