"""File system vs raw device (reviewers' study, seeds 001 and 002): the same workloads on both, side by side."""

from __future__ import annotations

from ...capabilities import Capability
from ..spec import TestSpec, deferred

part = deferred(__name__)     # its summary, settings, run and renderers: each imported when first used

TEST = TestSpec(
    name="fs-vs-raw", title="File System vs Raw Device",
    kind="study", order=20, summary=part("summary", "FsVsRawSummary"),
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=part("settings", "FsVsRawSettings"), needs=frozenset({Capability.LOCAL_BLOCK_LAYER, Capability.LOCAL_FILE_SYSTEM}),
    description="the same workloads on the raw device and on a file in a file system made on it (destroys data)",
)
