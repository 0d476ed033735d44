"""Fresh-out-of-box peak (reviewers' study): the vendor's "up to" numbers beside the steady state of the same run."""

from __future__ import annotations

from ..spec import TestSpec
from . import render
from .run import FreshPeakSettings, plan, run
from .summary import FreshPeakSummary

TEST = TestSpec(
    name="fresh-peak", title="Fresh-Out-of-Box Peak vs Steady State",
    kind="study", order=6, summary=FreshPeakSummary,
    run=run, plan=plan, renderers=render.RENDERERS,
    settings=FreshPeakSettings,
    description="short RND 4 KiB read and write at high TC x QD right after the purge, beside the steady state",
)
