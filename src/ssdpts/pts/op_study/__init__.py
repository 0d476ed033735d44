"""Over-provisioning study (reviewers' study): steady-state random write vs the active range."""

from __future__ import annotations

from ...settings import ACTIVE_RANGE, BOOL, MULTIPLE, SIZE, list_of
from ..spec import TestSpec
from . import render
from .run import plan, run
from .summary import OpStudySummary

TEST = TestSpec(
    name="op-study", title="Over-Provisioning: Steady-State Random Write vs Active Range",
    kind="study", order=4, summary=OpStudySummary,
    run=run, plan=plan, renderers=render.RENDERERS,
    settings={"block_size": SIZE, "precondition_multiple": MULTIPLE, "wipc_first": BOOL,
              "active_ranges": list_of("percentages 1..100, e.g. [100, 75, 50, 25]", ACTIVE_RANGE.ok)},
    description="per active range: purge, WIPC, random 4 KiB writes to steady state; the unused rest is extra spare",
)
