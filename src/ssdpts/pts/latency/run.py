"""SNIA PTS Latency test: TC1/QD1 random I/O, 0.5/4/8 KiB x 100/0, 65/35, 0/100.

Tracking variable: mean latency of RND 4 KiB writes. Reported per cell: mean, max and the
percentiles (99, 99.9, 99.99, 99.999) of total latency, merged over the measurement window's
histograms (fio json+ bins), in microseconds.
"""

from __future__ import annotations

from ..common import TestContext, rnd_matrix, tracked_cells, window_summary
from ..plan import TestPlan, rnd_matrix_plan
from .summary import LatencySummary


def run(ctx: TestContext) -> LatencySummary:
    cells, sizes, mixes, notes = rnd_matrix(ctx)
    for n in notes:
        ctx.note(n)
    purge = ctx.purge()
    outcome = ctx.run_to_steady_state("", cells, tracked_cells(ctx, cells, "lat_mean"), precondition=ctx.wipc())
    return LatencySummary(purge=purge, steady=outcome.record(),
                          cells=window_summary(outcome.rounds, outcome.window_rounds),
                          block_sizes=sizes, mixes=mixes, notes=notes)


def plan(ctx: TestContext) -> TestPlan:
    return rnd_matrix_plan(ctx, "latency", "lat_mean")
