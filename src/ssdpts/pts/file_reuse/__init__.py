"""File create vs reuse (reviewers' study, seed 002): the same workloads on a file fio creates and on the same
file reused."""

from __future__ import annotations

from ...capabilities import Capability
from ..spec import TestSpec
from . import render
from .run import FileReuseSettings, plan, run
from .summary import FileReuseSummary

TEST = TestSpec(
    name="file-reuse", title="File Target: Created by fio vs Reused",
    kind="study", order=22, summary=FileReuseSummary,
    run=run, plan=plan, renderers=render.RENDERERS,
    # a local file system; run() also refuses a local block device, in one line
    settings=FileReuseSettings, needs=frozenset({Capability.LOCAL_FILE_SYSTEM}),
    description="the file removed and created by fio, the same workloads on it reused, optionally deleted and created again",
)
