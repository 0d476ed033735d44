"""Demand Intensity / Response Time Histogram (DIRTH): latency vs IOPS over a TC x QD sweep.

One operator-chosen block size and R/W mix (default RND 8 KiB 65/35). TC = fio numjobs, QD = iodepth
(ADATA's implementation swaps them; ssdpts does not). See pts/demand.py for the procedure.
"""

from __future__ import annotations

from ...units import parse_size
from ...workload import Workload
from ..common import TestContext
from ..demand import sweep
from .summary import DirthSummary


def run(ctx: TestContext) -> DirthSummary:
    bs = parse_size(ctx.settings.get("block_size", "8k"))
    read = int(ctx.settings.get("read_pct", 65))

    def make_cell(name: str, threads: int, iodepth: int, read_pct: int = read, **kw) -> Workload:
        return ctx.cell(name, "randrw", bs, read_pct, threads=threads, iodepth=iodepth, **kw)

    return sweep(ctx, "dirth", make_cell, DirthSummary, block_size=bs, read_pct=read)
