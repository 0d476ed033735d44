"""Block-size sweep (reviewers' study, seed 001): MB/s of SEQ/RND read and write from 0.5 KiB to 1 MiB.

Two drive states, each a sequence of cells (QD 4 by default, every I/O aligned to its block size):
* fresh: purge, then (by default) one sequential pass over the active range, as the seed's one pass
  of zeros, so that reads return mapped data rather than the controller's zeros for unmapped LBAs;
* used: random-write preconditioning (64 KiB to 1.5x the active range by default) on top of it.
Block sizes below the logical block are skipped with a note.
"""

from __future__ import annotations

from ...engines.results import CellResult
from ...units import bs_label, parse_size
from ...workload import Workload
from ..common import TestContext
from .summary import BsSweepSummary, SweepCell

DEFAULT_SIZES = ["512", "1k", "2k", "4k", "8k", "16k", "32k", "64k", "128k", "256k", "512k", "1m"]
WORKLOADS = ("read", "randread", "write", "randwrite")
STATES = ("fresh", "used")


def cell_key(state: str, rw: str, bs: int) -> str:
    return f"{state}_{rw}_{bs_label(bs)}"


def _fill(ctx: TestContext, name: str, rw: str, bs: int, multiple: float) -> Workload:
    ar = ctx.active_range()
    return Workload(name=name, rw=rw, bs=bs, threads=1, iodepth=32, range_size=ar,
                    io_size=max(bs, int(multiple * ar * ctx.target.size_bytes) // bs * bs),
                    data_pattern=ctx.settings.get("data_pattern", "random"))


def run(ctx: TestContext) -> BsSweepSummary:
    sizes, notes = ctx.skip_sub_sector([parse_size(b) for b in ctx.settings.get("block_sizes", DEFAULT_SIZES)])
    for n in notes:
        ctx.note(n)
    workloads = [w for w in ctx.settings.get("workloads", list(WORKLOADS))]
    states = list(ctx.settings.get("states", STATES))
    iodepth = int(ctx.settings.get("iodepth", 4))
    threads = int(ctx.settings.get("threads", 1))
    purge = ctx.purge()
    if ctx.settings.get("fresh_fill", True):
        ctx.run_sequence("fresh/fill", [_fill(ctx, "fill_seq_128K", "write", 128 * 1024, 1.0)])
    out: list[SweepCell] = []
    for state in states:
        if state == "used":
            pbs = parse_size(ctx.settings.get("used_block_size", "64k"))
            mult = float(ctx.settings.get("used_multiple", 1.5))
            ctx.run_sequence("used/precondition", [_fill(ctx, f"used_rnd_{bs_label(pbs)}", "randwrite", pbs, mult)])
        cells = [ctx.cell(cell_key(state, rw, bs), rw, bs, threads=threads, iodepth=iodepth)
                 for rw in workloads for bs in sizes]

        def track(results):
            return {c.name: c.bw_bytes / 1e6 for c in results}

        rounds = ctx.run_sequence(state, cells, chunk=max(1, len(sizes)), tracking=track)
        by = {c.name: c for r in rounds for c in r.cells}
        out += [_cell(state, rw, bs, c) for rw in workloads for bs in sizes
                if (c := by.get(cell_key(state, rw, bs))) is not None]
    return BsSweepSummary(purge=purge, states=states, workloads=workloads, block_sizes=sizes, iodepth=iodepth,
                          threads=threads, fresh_fill=bool(ctx.settings.get("fresh_fill", True)), cells=out,
                          notes=notes)


def _cell(state: str, rw: str, bs: int, c: CellResult) -> SweepCell:
    return SweepCell(state, rw, bs, mb_s=c.bw_bytes / 1e6, mib_s=c.bw_bytes / 2**20, iops=c.iops,
                     lat_mean_us=c.lat_mean_ns / 1000)
