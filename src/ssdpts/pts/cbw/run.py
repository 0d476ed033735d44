"""Composite Block Size Workload (CBW, PTS 2.0; ECW in PTS-E 1.1): the JEDEC enterprise mix over a sweep.

Block sizes 0.5K 4 %, 1-3.5K 1 % each, 4K 67 %, 8K 10 %, 16K 7 %, 32K 3 %, 64K 3 %; 50 % of I/Os to
the first 5 % of LBAs, 30 % to the next 15 %, 20 % to the rest; 40/60 R/W. Reads and writes are
reported separately (seed 000 found the read tail was the problem). Procedure: pts/demand.py.
"""

from __future__ import annotations

from ...workload import Workload
from ..common import TestContext
from ..demand import sweep
from ..wsat.run import COMPOSITE_ZONES, composite_split
from .summary import CbwSummary


def run(ctx: TestContext) -> CbwSummary:
    split, note = composite_split(ctx.target.logical_block_size)
    if note:
        ctx.note(note)
    read = int(ctx.settings.get("read_pct", 40))

    def make_cell(name: str, threads: int, iodepth: int, read_pct: int = read, **kw) -> Workload:
        return ctx.cell(name, "randrw", 4096, read_pct, bssplit=split, distribution=COMPOSITE_ZONES,
                        threads=threads, iodepth=iodepth, **kw)

    return sweep(ctx, "cbw", make_cell, CbwSummary, read_pct=read, bssplit=list(split), zones=COMPOSITE_ZONES,
                 notes=[note] if note else [])
