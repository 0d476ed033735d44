"""Cross-Stimulus Recovery (XSR): how a drive recovers from random writes when sequential writes return.

Purge, then three access groups back to back with no idle: SEQ 1024 KiB writes (group 1), RND 8 KiB
writes (group 2), SEQ 1024 KiB writes (group 3), throughput and latency logged per interval.
Recovery time = start of the first group-3 interval whose throughput is >= the group-1 average.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...records import from_data
from ...workload import Workload
from ..plan import Phase, PlannedCell, TestPlan, purge_phase
from .summary import XsrGroup, XsrInterval, XsrSummary
from .settings import XsrSettings

if TYPE_CHECKING:     # annotations only: reading a stored run's settings imports no round loop
    from ..context import TestContext

GROUPS = (("g1", "write", 1 << 20), ("g2", "randwrite", 8192), ("g3", "write", 1 << 20))


def interval_s(ctx: TestContext) -> float:
    return ctx.settings.interval


def group_cells(ctx: TestContext) -> list[tuple[str, Workload]]:
    """(phase, cell) of the three access groups, each cell running its whole group time."""
    times = ctx.settings.group_times
    return [(phase, ctx.cells.cell(f"xsr_{phase}", rw, bs, 0, runtime_s=total))
            for (phase, rw, bs), total in zip(GROUPS, times)]


def plan(ctx: TestContext) -> TestPlan:
    groups = group_cells(ctx)
    interval = interval_s(ctx)
    secs = sum(c.runtime_s or 0 for _, c in groups)
    intervals = sum(round((c.runtime_s or 0) / interval) for _, c in groups)
    return TestPlan("xsr", [purge_phase(ctx), Phase(
        "stream", "three access groups back to back, no idle (one continuous fio job per group, logged every "
                  f"{interval:g} s): SEQ 1024K writes, RND 8K writes, SEQ 1024K writes",
        [PlannedCell.of(c) for _, c in groups], intervals, intervals, secs, secs, None)])


def run(ctx: TestContext) -> XsrSummary:
    interval = interval_s(ctx)
    purge = ctx.purger.purge()
    phases, cells = [], []
    for phase, cell in group_cells(ctx):
        done = ctx.store.rounds(ctx.run_id, ctx.test, phase)
        spent = sum(r.cells[0].runtime_ms for r in done) / 1000
        if (cell.runtime_s or 0) - spent > interval / 2:
            phases.append(phase)
            cells.append(cell.with_(runtime_s=(cell.runtime_s or 0) - spent))

    def track(phase, round_no, res, st):
        if "t" not in st:   # resumed: continue the group's clock from its stored intervals
            st["t"] = sum(r.cells[0].runtime_ms for r in ctx.store.rounds(ctx.run_id, ctx.test, phase)) / 1000
        start = st["t"]
        st["t"] += res.runtime_ms / 1000
        return {"mib_s": res.bw_bytes / 2**20, "iops": res.iops, "start_s": start,
                "lat_mean_us": res.lat_mean_ns / 1000, "lat_max_us": res.lat_max_ns / 1000}

    if cells:
        ctx.progress.round_started(ctx.test, phases[0], 1, 0, sum(c.runtime_s for c in cells), "access groups")
        ctx.streams.stream(phases, cells, interval, track)
    series = {p: [r.tracking for r in ctx.store.rounds(ctx.run_id, ctx.test, p)] for p, _, _ in GROUPS}
    g1 = [s["mib_s"] for s in series["g1"]]
    g1_avg = sum(g1) / len(g1) if g1 else 0.0
    recovered = next((s for s in series["g3"] if s["mib_s"] >= g1_avg), None)
    return XsrSummary(
        purge=purge,
        groups={p: XsrGroup(mib_s_mean=sum(s["mib_s"] for s in v) / len(v) if v else 0.0,
                            lat_mean_us=sum(s["lat_mean_us"] for s in v) / len(v) if v else 0.0,
                            intervals=len(v), series=[from_data(XsrInterval, s) for s in v])
                for p, v in series.items()},
        group1_average_mib_s=g1_avg,
        recovery_s=recovered["start_s"] if recovered else None,
        recovered=recovered is not None,
        interval_s=interval,
    )
