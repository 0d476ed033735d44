"""SNIA PTS IOPS test: random I/O over a block size x read/write mix matrix.

Purge -> WIPC (SEQ 128 KiB writes, 2x the user capacity) -> rounds of the whole matrix (outer loop:
mix, inner loop: block size) until the tracking variables are steady (PTS-E 1.1: RND 4 KiB write;
PTS 2.0: also RND 64 KiB 65/35 and RND 1024 KiB read). Result: per cell, the average IOPS
(read + write) over the measurement window.
"""

from __future__ import annotations

from ..common import TestContext
from ..matrix import run_matrix
from ..plan import TestPlan, rnd_matrix_plan
from .summary import IopsSummary


def run(ctx: TestContext) -> IopsSummary:
    return run_matrix(ctx, "iops", IopsSummary)


def plan(ctx: TestContext) -> TestPlan:
    return rnd_matrix_plan(ctx, "iops", "iops")
