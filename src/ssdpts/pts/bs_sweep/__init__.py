"""Block-size sweep (reviewers' study): MB/s of SEQ/RND read and write from 0.5 KiB to 1 MiB, fresh and used."""

from __future__ import annotations

from ..spec import TestSpec
from . import render
from .run import BsSweepSettings, plan, run
from .summary import BsSweepSummary

TEST = TestSpec(
    name="bs-sweep", title="Block-Size Sweep (fresh and used)",
    kind="study", order=2, summary=BsSweepSummary,
    run=run, plan=plan, renderers=render.RENDERERS,
    settings=BsSweepSettings,
    description="MB/s of SEQ/RND read and write per block size, on a fresh and on a used drive",
)
