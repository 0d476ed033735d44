"""Block-size sweep (reviewers' study): MB/s of SEQ/RND read and write from 0.5 KiB to 1 MiB, fresh and used."""

from __future__ import annotations

from ...settings import BOOL, MULTIPLE, SIZE, SIZES, list_of
from ..spec import TestSpec
from . import render
from .run import STATES, WORKLOADS, plan, run
from .summary import BsSweepSummary

TEST = TestSpec(
    name="bs-sweep", title="Block-Size Sweep (fresh and used)",
    kind="study", order=2, summary=BsSweepSummary,
    run=run, plan=plan, renderers=render.RENDERERS,
    settings={"block_sizes": SIZES, "fresh_fill": BOOL, "used_block_size": SIZE, "used_multiple": MULTIPLE,
              "workloads": list_of(", ".join(WORKLOADS), lambda v: v in WORKLOADS),
              "states": list_of(", ".join(STATES), lambda v: v in STATES)},
    description="MB/s of SEQ/RND read and write per block size, on a fresh and on a used drive",
)
