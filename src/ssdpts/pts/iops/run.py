"""SNIA PTS IOPS test: random I/O over a block size x read/write mix matrix.

Purge -> WIPC (SEQ 128 KiB writes, 2x the user capacity) -> rounds of the whole matrix (outer loop:
mix, inner loop: block size) until the tracking variables are steady (PTS-E 1.1: RND 4 KiB write;
PTS 2.0: also RND 64 KiB 65/35 and RND 1024 KiB read). Result: per cell, the average IOPS
(read + write) over the measurement window; for the `interval_cells`, IOPS and latency per interval of
the window's last round (not a PTS figure: reviewers' consistency charts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...workload import Workload
from ..cells import cell_name
from ..matrix import run_matrix
from ..plan import TestPlan, rnd_matrix_plan
from .summary import CellSeries, IopsSummary, cell_series
from .settings import MIN_LOG_MS, IopsSettings

if TYPE_CHECKING:     # annotations only: reading a stored run's settings imports no round loop
    from ..context import TestContext
    from ..rounds import SteadyOutcome


def log_interval_ms(ctx: TestContext, w: Workload) -> int:
    return max(MIN_LOG_MS, int((w.runtime_s or 0) * 1000 / ctx.settings.interval_points))


def logged_cells(ctx: TestContext, cells: list[Workload]) -> list[Workload]:
    """The matrix with the `interval_cells` asking their engine for per-interval logs."""
    wanted = {cell_name("rnd", bs, mix) for bs, mix in ctx.settings.interval_cells}
    return [c.with_(log_interval_ms=log_interval_ms(ctx, c)) if c.name in wanted and c.runtime_s else c
            for c in cells]


def interval_series(outcome: SteadyOutcome) -> dict[str, CellSeries]:
    """Per logged cell, its intervals in the last round of the measurement window (else the last round)."""
    last = outcome.window_rounds[-1] if outcome.window_rounds else None
    chosen = next((r for r in outcome.rounds if r.round == last), outcome.rounds[-1] if outcome.rounds else None)
    out: dict[str, CellSeries] = {}
    if chosen is None:
        return out
    for i, c in enumerate(chosen.cells):
        ms = int((chosen.workloads[i] if i < len(chosen.workloads) else {}).get("log_interval_ms") or 0)
        if ms and c.intervals:
            source = "simulator" if chosen.engine == "sim" else "fio log_avg_msec"
            out[c.name] = cell_series(c.name, chosen.round, ms / 1000, source, c.intervals)
    return out


def run(ctx: TestContext) -> IopsSummary:
    return run_matrix(ctx, "iops", IopsSummary, prepare=lambda cells: logged_cells(ctx, cells),
                      extra=lambda outcome: {"series": interval_series(outcome)})


def plan(ctx: TestContext) -> TestPlan:
    return rnd_matrix_plan(ctx, "iops", "iops")
