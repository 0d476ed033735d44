"""Demand Intensity / Response Time Histogram (DIRTH): latency vs IOPS over a TC x QD sweep.

One operator-chosen block size and R/W mix (default RND 8 KiB 65/35). TC = fio numjobs, QD = iodepth
(ADATA's implementation swaps them; ssdpts does not). See pts/demand.py for the procedure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...units import bs_label
from ...workload import Workload
from .. import demand
from ..plan import TestPlan
from .summary import DirthSummary
from .settings import DirthSettings

if TYPE_CHECKING:     # annotations only: reading a stored run's settings imports no round loop
    from ..context import TestContext


def cell_maker(ctx: TestContext) -> tuple[int, int, demand.MakeCell]:
    """(block size, read %, the test's cell builder) from the profile."""
    bs, read = ctx.settings.block_size, ctx.settings.read_pct

    def make_cell(name: str, threads: int, iodepth: int, read_pct: int = read, **kw) -> Workload:
        return ctx.cells.cell(name, "randrw", bs, read_pct, threads=threads, iodepth=iodepth, **kw)

    return bs, read, make_cell


def run(ctx: TestContext) -> DirthSummary:
    bs, read, make_cell = cell_maker(ctx)
    return demand.sweep(ctx, "dirth", make_cell, DirthSummary, block_size=bs, read_pct=read)


def plan(ctx: TestContext) -> TestPlan:
    bs, read, make_cell = cell_maker(ctx)
    return demand.plan(ctx, "dirth", "dirth", make_cell, f"RND {bs_label(bs)}")
