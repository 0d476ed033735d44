"""Over-provisioning study (reviewers' study): steady-state random write vs the active range."""

from __future__ import annotations

from ..spec import TestSpec
from . import render
from .run import OpStudySettings, plan, run
from .summary import OpStudySummary

TEST = TestSpec(
    name="op-study", title="Over-Provisioning: Steady-State Random Write vs Active Range",
    kind="study", order=4, summary=OpStudySummary,
    run=run, plan=plan, renderers=render.RENDERERS,
    settings=OpStudySettings,
    description="per active range: purge, WIPC, random 4 KiB writes to steady state; the unused rest is extra spare",
)
