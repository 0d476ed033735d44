"""Block-size sweep (reviewers' study): MB/s of SEQ/RND read and write from 0.5 KiB to 1 MiB, fresh and used."""

from __future__ import annotations

from ..spec import TestSpec, deferred
from .summary import BsSweepSummary

part = deferred(__name__)     # how it runs and draws: imported when used, not to read a stored run

TEST = TestSpec(
    name="bs-sweep", title="Block-Size Sweep (fresh and used)",
    kind="study", order=2, summary=BsSweepSummary,
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=part("settings", "BsSweepSettings"),
    description="MB/s of SEQ/RND read and write per block size, on a fresh and on a used drive",
)
