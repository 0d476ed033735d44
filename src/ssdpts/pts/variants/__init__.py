"""Workload variants (reviewers' study): data pattern, O_DSYNC, page cache and working set, side by side."""

from __future__ import annotations

from ..spec import TestSpec, deferred

part = deferred(__name__)     # its summary, settings, run and renderers: each imported when first used

TEST = TestSpec(
    name="variants", title="Workload Variants: Data Pattern, O_DSYNC, Page Cache, Working Set",
    kind="study", order=5, summary=part("summary", "VariantsSummary"),
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=part("settings", "VariantsSettings"),
    description="one workload in several variants back to back: data pattern, O_DSYNC, buffered, working set",
)
