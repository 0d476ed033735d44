"""Over-provisioning study (reviewers' study): steady-state random write vs the active range."""

from __future__ import annotations

from ..spec import TestSpec, deferred

part = deferred(__name__)     # its summary, settings, run and renderers: each imported when first used

TEST = TestSpec(
    name="op-study", title="Over-Provisioning: Steady-State Random Write vs Active Range",
    kind="study", order=4, summary=part("summary", "OpStudySummary"),
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=part("settings", "OpStudySettings"),
    description="per active range: purge, WIPC, random 4 KiB writes to steady state; the unused rest is extra spare",
)
