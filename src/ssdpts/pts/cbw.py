"""Composite Block Size Workload (CBW, PTS 2.0; ECW in PTS-E 1.1): the JEDEC enterprise mix over a sweep.

Block sizes 0.5K 4 %, 1-3.5K 1 % each, 4K 67 %, 8K 10 %, 16K 7 %, 32K 3 %, 64K 3 %; 50 % of I/Os to
the first 5 % of LBAs, 30 % to the next 15 %, 20 % to the rest; 40/60 R/W. Reads and writes are
reported separately (seed 000 found the read tail was the problem). Procedure: pts/demand.py.
"""

from __future__ import annotations

from .common import TestContext
from .demand import sweep
from .wsat import COMPOSITE_ZONES, composite_split

NAME = "cbw"
TITLE = "Composite Block Size Workload (CBW)"


def run(ctx: TestContext) -> dict:
    split, note = composite_split(ctx.target.logical_block_size)
    if note:
        ctx.note(note)
    read = int(ctx.settings.get("read_pct", 40))
    align = ctx.io_alignment()   # 512e: the same CBW hits the same 4 KiB pages as on a 4Kn drive

    def make_cell(name, threads, iodepth, read_pct=read, **kw):
        return ctx.cell(name, "randrw", 4096, read_pct, bssplit=split, distribution=COMPOSITE_ZONES,
                        threads=threads, iodepth=iodepth, align=align, **kw)

    out = sweep(ctx, "cbw", make_cell)
    out["bssplit"] = [list(x) for x in split]
    out["zones"] = COMPOSITE_ZONES
    out["alignment_bytes"] = align
    out["block_sizes_bytes"] = {"logical": ctx.target.logical_block_size, "physical": ctx.target.physical_block_size}
    out["notes"] = [note] if note else []
    return out

from .demand_report import compare_section, report_section  # noqa: E402,F401
