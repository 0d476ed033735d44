"""Purge-method study (seed 001 doubted that wipe utilities restore FOB): how close each method brings a
used drive back to fresh-out-of-box, by a short RND 4K write burst after it."""

from __future__ import annotations

from ..spec import TestSpec
from . import render
from .run import PurgeStudySettings, plan, run
from .summary import PurgeStudySummary

TEST = TestSpec(
    name="purge-study", title="Purge-Method Study (how close each method returns to FOB)",
    kind="study", order=21, summary=PurgeStudySummary,
    run=run, plan=plan, renderers=render.RENDERERS,
    settings=PurgeStudySettings,
    description="per method (purge, TRIM, zero-fill, none): dirty the drive, apply it, RND 4K write bursts; "
                "IOPS as a share of the level after the SNIA purge",
)
