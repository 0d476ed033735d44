"""Workload variants (reviewers' study): data pattern, O_DSYNC, page cache and working set, side by side."""

from __future__ import annotations

from ..spec import TestSpec, deferred
from .summary import VariantsSummary

part = deferred(__name__)     # how it runs and draws: imported when used, not to read a stored run

TEST = TestSpec(
    name="variants", title="Workload Variants: Data Pattern, O_DSYNC, Page Cache, Working Set",
    kind="study", order=5, summary=VariantsSummary,
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=part("settings", "VariantsSettings"),
    description="one workload in several variants back to back: data pattern, O_DSYNC, buffered, working set",
)
