"""Composite Block Size Workload (CBW, PTS 2.0; ECW in PTS-E 1.1): the JEDEC enterprise mix over a sweep.

Block sizes 0.5K 4 %, 1-3.5K 1 % each, 4K 67 %, 8K 10 %, 16K 7 %, 32K 3 %, 64K 3 %; 50 % of I/Os to
the first 5 % of LBAs, 30 % to the next 15 %, 20 % to the rest; 40/60 R/W. Reads and writes are
reported separately (seed 000 found the read tail was the problem). Offsets are aligned to 4 KiB or the
physical block (512e: the same CBW hits the same 4 KiB pages as on a 4Kn drive). Procedure: pts/demand.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...workload import Workload
from .. import demand
from ..plan import TestPlan
from ..wsat.run import COMPOSITE_ZONES, composite_split
from .summary import BlockSizes, CbwSummary
from .settings import CbwSettings

if TYPE_CHECKING:     # annotations only: reading a stored run's settings imports no round loop
    from ..context import TestContext


@dataclass
class CbwCells:
    split: tuple[tuple[int, int], ...]     # fio bssplit (block size, % of I/Os)
    note: str                              # sub-sector sizes folded into the logical block, or ""
    read_pct: int
    align: int                             # fio blockalign, bytes
    make_cell: demand.MakeCell


def cell_maker(ctx: TestContext) -> CbwCells:
    split, note = composite_split(ctx.target.logical_block_size)
    read = ctx.settings.read_pct
    align = ctx.cells.io_alignment()

    def make_cell(name: str, threads: int, iodepth: int, read_pct: int = read, **kw) -> Workload:
        return ctx.cells.cell(name, "randrw", 4096, read_pct, bssplit=split, distribution=COMPOSITE_ZONES,
                        threads=threads, iodepth=iodepth, align=align, **kw)

    return CbwCells(split, note, read, align, make_cell)


def run(ctx: TestContext) -> CbwSummary:
    c = cell_maker(ctx)
    if c.note:
        ctx.note(c.note)
    return demand.sweep(ctx, "cbw", c.make_cell, CbwSummary, read_pct=c.read_pct, bssplit=list(c.split),
                        zones=COMPOSITE_ZONES, alignment_bytes=c.align,
                        block_sizes_bytes=BlockSizes(logical=ctx.target.logical_block_size,
                                                     physical=ctx.target.physical_block_size),
                        notes=[c.note] if c.note else [])


def plan(ctx: TestContext) -> TestPlan:
    c = cell_maker(ctx)
    out = demand.plan(ctx, "cbw", "cbw", c.make_cell, "composite block size (CBW)")
    out.notes += [c.note] if c.note else []
    return out
