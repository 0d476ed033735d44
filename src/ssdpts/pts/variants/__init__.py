"""Workload variants (reviewers' study): data pattern, O_DSYNC, page cache and working set, side by side."""

from __future__ import annotations

from ...settings import BOOL, MULTIPLE, PCT, SIZE, Setting, choice, list_of, size_ok
from ..spec import TestSpec
from . import render
from .run import ALL, plan, run
from .summary import VariantsSummary

TEST = TestSpec(
    name="variants", title="Workload Variants: Data Pattern, O_DSYNC, Page Cache, Working Set",
    kind="study", order=5, summary=VariantsSummary,
    run=run, plan=plan, renderers=render.RENDERERS,
    settings={"block_size": SIZE, "rw": choice("read", "write", "randread", "randwrite", "randrw", "rw"),
              "read_pct": PCT, "precondition": BOOL, "precondition_multiple": MULTIPLE,
              "cache_size": Setting('"auto" or a size like "8g"', lambda v: v == "auto" or size_ok(v)),
              "variants": list_of(", ".join(ALL), lambda v: v in ALL)},
    description="one workload in several variants back to back: data pattern, O_DSYNC, buffered, working set",
)
