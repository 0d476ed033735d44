"""Fresh-out-of-box peak (reviewers' study): the vendor's "up to" numbers beside the steady state of the same run."""

from __future__ import annotations

from ...settings import SIZE, list_of
from ..spec import TestSpec
from . import render
from .run import WORKLOADS, plan, run
from .summary import FreshPeakSummary

TEST = TestSpec(
    name="fresh-peak", title="Fresh-Out-of-Box Peak vs Steady State",
    kind="study", order=6, summary=FreshPeakSummary,
    run=run, plan=plan, renderers=render.RENDERERS,
    settings={"block_size": SIZE, "workloads": list_of(", ".join(WORKLOADS), lambda v: v in WORKLOADS)},
    description="short RND 4 KiB read and write at high TC x QD right after the purge, beside the steady state",
)
