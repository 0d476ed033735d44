"""SNIA PTS Latency test: TC1/QD1 random I/O, 0.5/4/8 KiB x 100/0, 65/35, 0/100.

Tracking variable: mean latency of RND 4 KiB writes. Reported per cell: mean, max and the
percentiles (99, 99.9, 99.99, 99.999) of total latency, merged over the measurement window's
histograms (fio json+ bins), in microseconds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..matrix import run_matrix
from ..plan import TestPlan, rnd_matrix_plan
from .summary import LatencySummary

if TYPE_CHECKING:     # annotations only: reading a stored run's settings imports no round loop
    from ..context import TestContext


def run(ctx: TestContext) -> LatencySummary:
    return run_matrix(ctx, "lat_mean", LatencySummary)


def plan(ctx: TestContext) -> TestPlan:
    return rnd_matrix_plan(ctx, "latency", "lat_mean")
