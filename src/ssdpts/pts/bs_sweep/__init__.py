"""Block-size sweep (reviewers' study): MB/s of SEQ/RND read and write from 0.5 KiB to 1 MiB, fresh and used."""

from __future__ import annotations

from ..spec import TestSpec, deferred

part = deferred(__name__)     # its summary, settings, run and renderers: each imported when first used

TEST = TestSpec(
    name="bs-sweep", title="Block-Size Sweep (fresh and used)",
    kind="study", order=2, summary=part("summary", "BsSweepSummary"),
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=part("settings", "BsSweepSettings"),
    description="MB/s of SEQ/RND read and write per block size, on a fresh and on a used drive",
)
