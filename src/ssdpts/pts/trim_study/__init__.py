"""TRIM study (reviewers' study, seeds 001 and 002): TRIM time and rate, performance before and after it."""

from __future__ import annotations

from ...capabilities import Capability
from ..spec import TestSpec, deferred

part = deferred(__name__)     # its summary, settings, run and renderers: each imported when first used

TEST = TestSpec(
    name="trim-study", title="TRIM: Duration and Performance Before and After",
    kind="study", order=21, summary=part("summary", "TrimStudySummary"),
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=part("settings", "TrimStudySettings"), needs=frozenset({Capability.LOCAL_FILE_SYSTEM}),
    description="fill, RND write/read rounds, TRIM timed (blkdiscard; fstrim for a file), the same rounds after",
)
