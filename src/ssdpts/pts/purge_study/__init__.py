"""Purge-method study (seed 001 doubted that wipe utilities restore FOB): how close each method brings a
used drive back to fresh-out-of-box, by a short RND 4K write burst after it."""

from __future__ import annotations

from ..spec import TestSpec, deferred

part = deferred(__name__)     # its summary, settings, run and renderers: each imported when first used

TEST = TestSpec(
    name="purge-study", title="Purge-Method Study (how close each method returns to FOB)",
    kind="study", order=21, summary=part("summary", "PurgeStudySummary"),
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=part("settings", "PurgeStudySettings"),
    description="per method (purge, TRIM, zero-fill, none): dirty the drive, apply it, RND 4K write bursts; "
                "IOPS as a share of the level after the SNIA purge",
)
