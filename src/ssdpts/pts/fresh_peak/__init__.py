"""Fresh-out-of-box peak (reviewers' study): the vendor's "up to" numbers beside the steady state of the same run."""

from __future__ import annotations

from ..spec import TestSpec, deferred

part = deferred(__name__)     # its summary, settings, run and renderers: each imported when first used

TEST = TestSpec(
    name="fresh-peak", title="Fresh-Out-of-Box Peak vs Steady State",
    kind="study", order=6, summary=part("summary", "FreshPeakSummary"),
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=part("settings", "FreshPeakSettings"),
    description="short RND 4 KiB read and write at high TC x QD right after the purge, beside the steady state",
)
