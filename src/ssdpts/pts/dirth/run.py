"""Demand Intensity / Response Time Histogram (DIRTH): latency vs IOPS over a TC x QD sweep.

One operator-chosen block size and R/W mix (default RND 8 KiB 65/35). TC = fio numjobs, QD = iodepth
(ADATA's implementation swaps them; ssdpts does not). See pts/demand.py for the procedure.
"""

from __future__ import annotations

from ..units import parse_size
from .common import TestContext
from .demand import sweep

NAME = "dirth"
TITLE = "Demand Intensity / Response Time Histogram (DIRTH)"


def run(ctx: TestContext) -> dict:
    bs = parse_size(ctx.settings.get("block_size", "8k"))
    read = int(ctx.settings.get("read_pct", 65))

    def make_cell(name, threads, iodepth, read_pct=read, **kw):
        return ctx.cell(name, "randrw", bs, read_pct, threads=threads, iodepth=iodepth, **kw)

    out = sweep(ctx, "dirth", make_cell)
    out["block_size"] = bs
    out["read_pct"] = read
    return out

from .demand_report import compare_section, report_section  # noqa: E402,F401
