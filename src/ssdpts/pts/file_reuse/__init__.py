"""File create vs reuse (reviewers' study, seed 002): the same workloads on a file fio creates and on the same
file reused."""

from __future__ import annotations

from ...capabilities import Capability
from ..spec import TestSpec, deferred

part = deferred(__name__)     # its summary, settings, run and renderers: each imported when first used

TEST = TestSpec(
    name="file-reuse", title="File Target: Created by fio vs Reused",
    kind="study", order=22, summary=part("summary", "FileReuseSummary"),
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    # a local file system; run() also refuses a local block device, in one line
    settings=part("settings", "FileReuseSettings"), needs=frozenset({Capability.LOCAL_FILE_SYSTEM}),
    description="the file removed and created by fio, the same workloads on it reused, optionally deleted and created again",
)
