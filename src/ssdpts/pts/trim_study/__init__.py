"""TRIM study (reviewers' study, seeds 001 and 002): TRIM time and rate, performance before and after it."""

from __future__ import annotations

from ...capabilities import Capability
from ..spec import TestSpec, deferred
from .summary import TrimStudySummary

part = deferred(__name__)     # how it runs and draws: imported when used, not to read a stored run

TEST = TestSpec(
    name="trim-study", title="TRIM: Duration and Performance Before and After",
    kind="study", order=21, summary=TrimStudySummary,
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=part("settings", "TrimStudySettings"), needs=frozenset({Capability.LOCAL_FILE_SYSTEM}),
    description="fill, RND write/read rounds, TRIM timed (blkdiscard; fstrim for a file), the same rounds after",
)
