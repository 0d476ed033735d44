"""SNIA PTS IOPS test: random I/O over a block size x read/write mix matrix.

Purge -> WIPC (SEQ 128 KiB writes, 2x the user capacity) -> rounds of the whole matrix (outer loop:
mix, inner loop: block size) until the tracking variables are steady (PTS-E 1.1: RND 4 KiB write;
PTS 2.0: also RND 64 KiB 65/35 and RND 1024 KiB read). Result: per cell, the average IOPS
(read + write) over the measurement window.
"""

from __future__ import annotations

from ...units import parse_size
from ...workload import Workload
from ..common import TestContext, cell_name, window_summary
from ..plan import TestPlan, purge_phase, steady_loop, wipc_phase
from ..results import TrackerKey
from .summary import IopsSummary


def matrix(ctx: TestContext) -> tuple[list[Workload], list[int], list[int], list[str]]:
    sizes, notes = ctx.skip_sub_sector([parse_size(b) for b in ctx.settings["block_sizes"]])
    mixes = [int(m) for m in ctx.settings["mixes"]]
    cells = [ctx.cell(cell_name("rnd", bs, mix), "randrw", bs, mix) for mix in mixes for bs in sizes]
    return cells, sizes, mixes, notes


def trackers(ctx: TestContext, cells: list[Workload]) -> list[TrackerKey]:
    names = {c.name for c in cells}
    out = []
    for bs, mix in ctx.settings.get("tracking", [["4k", 0]]):
        name = cell_name("rnd", parse_size(bs), int(mix))
        if name in names:
            out.append(TrackerKey(name, "iops"))
    if not out:
        out.append(TrackerKey(cells[-1].name, "iops"))
    return out


def run(ctx: TestContext) -> IopsSummary:
    cells, sizes, mixes, notes = matrix(ctx)
    for n in notes:
        ctx.note(n)
    purge = ctx.purge()
    outcome = ctx.run_to_steady_state("", cells, trackers(ctx, cells), precondition=ctx.wipc())
    return IopsSummary(purge=purge, steady=outcome.record(), cells=window_summary(outcome.rounds, outcome.window_rounds),
                       block_sizes=sizes, mixes=mixes, notes=notes)


def plan(ctx: TestContext) -> TestPlan:
    cells, sizes, mixes, notes = matrix(ctx)
    tracked = ", ".join(t.label for t in trackers(ctx, cells))
    return TestPlan("iops", [purge_phase(ctx), wipc_phase(ctx),
                                 steady_loop(ctx, cells, f"rounds of {len(mixes)} R/W mixes (outer loop) × {len(sizes)} "
                                                         f"block sizes (inner loop), tracking {tracked}")], notes)
