"""Workload variants (reviewers' study): data pattern, O_DSYNC, page cache and working set, side by side."""

from __future__ import annotations

from ..spec import TestSpec
from . import render
from .run import VariantsSettings, plan, run
from .summary import VariantsSummary

TEST = TestSpec(
    name="variants", title="Workload Variants: Data Pattern, O_DSYNC, Page Cache, Working Set",
    kind="study", order=5, summary=VariantsSummary,
    run=run, plan=plan, renderers=render.RENDERERS,
    settings=VariantsSettings,
    description="one workload in several variants back to back: data pattern, O_DSYNC, buffered, working set",
)
