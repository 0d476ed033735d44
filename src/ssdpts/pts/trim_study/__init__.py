"""TRIM study (reviewers' study, seeds 001 and 002): TRIM time and rate, performance before and after it."""

from __future__ import annotations

from ...capabilities import Capability
from ..spec import TestSpec
from . import render
from .run import TrimStudySettings, plan, run
from .summary import TrimStudySummary

TEST = TestSpec(
    name="trim-study", title="TRIM: Duration and Performance Before and After",
    kind="study", order=21, summary=TrimStudySummary,
    run=run, plan=plan, renderers=render.RENDERERS,
    settings=TrimStudySettings, needs=frozenset({Capability.LOCAL_FILE_SYSTEM}),
    description="fill, RND write/read rounds, TRIM timed (blkdiscard; fstrim for a file), the same rounds after",
)
