"""Block-size sweep (reviewers' study, seed 001): MB/s of SEQ/RND read and write from 0.5 KiB to 1 MiB.

Two drive states, each a sequence of cells (QD 4 by default, every I/O aligned to its block size):
* fresh: purge, then (by default) one sequential pass over the active range, as the seed's one pass
  of zeros, so that reads return mapped data rather than the controller's zeros for unmapped LBAs;
* used: random-write preconditioning (64 KiB to 1.5x the active range by default) on top of it.
Block sizes below the logical block are skipped with a note.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...engines.results import CellResult
from ...units import bs_label
from ...workload import Workload
from ..fill import default_fill_block_size, fill as seq_fill
from ..plan import TestPlan, once, purge_phase
from .summary import BsSweepSummary, SweepCell
from .settings import BsSweepSettings

if TYPE_CHECKING:     # annotations only: reading a stored run's settings imports no round loop
    from ..context import TestContext


def cell_key(state: str, rw: str, bs: int) -> str:
    return f"{state}_{rw}_{bs_label(bs)}"


def _fill(ctx: TestContext, name: str, rw: str, bs: int, multiple: float) -> Workload:
    ar = ctx.active_range()
    return seq_fill(ctx, bs, ar, multiple * ar * ctx.target.size_bytes, name=name, rw=rw)


def _fresh_fill(ctx: TestContext) -> Workload:
    """One sequential pass over the active range, so that reads return mapped data (the seed's pass of zeros)."""
    bs = default_fill_block_size()
    return _fill(ctx, f"fill_seq_{bs_label(bs)}", "write", bs, 1.0)


def _used_fill(ctx: TestContext) -> Workload:
    pbs = ctx.settings.used_block_size
    return _fill(ctx, f"used_rnd_{bs_label(pbs)}", "randwrite", pbs, ctx.settings.used_multiple)


def _sweep(ctx: TestContext) -> tuple[list[int], list[str], list[str], list[str], int, int]:
    """(block sizes, notes on skipped sizes, workloads, drive states, QD, TC) of the profile."""
    s = ctx.settings
    sizes, notes = ctx.cells.skip_sub_sector(s.block_sizes)
    return sizes, notes, list(s.workloads), list(s.states), s.iodepth, s.threads


def _cells(ctx: TestContext, state: str, workloads: list[str], sizes: list[int], iodepth: int,
           threads: int) -> list[Workload]:
    return [ctx.cells.cell(cell_key(state, rw, bs), rw, bs, threads=threads, iodepth=iodepth)
            for rw in workloads for bs in sizes]


def plan(ctx: TestContext) -> TestPlan:
    sizes, notes, workloads, states, iodepth, threads = _sweep(ctx)
    phases = [purge_phase(ctx)]
    if ctx.settings.fresh_fill:
        w = _fresh_fill(ctx)
        phases.append(once("precondition", f"fresh drive: one sequential {bs_label(w.bs)} pass over the active range "
                                           "(reads then return mapped data, not the controller's zeros)", [w]))
    for state in states:
        if state == "used":
            w = _used_fill(ctx)
            phases.append(once("precondition", f"used drive: random {bs_label(w.bs)} writes of "
                                               f"{ctx.settings.used_multiple:g}x the active range",
                               [w]))
        phases.append(once("sequence", f"{state} drive: {len(workloads)} workloads x {len(sizes)} block sizes, "
                                       f"QD{iodepth} TC{threads}, once each",
                           _cells(ctx, state, workloads, sizes, iodepth, threads)))
    return TestPlan("bs-sweep", phases, notes)


def run(ctx: TestContext) -> BsSweepSummary:
    sizes, notes, workloads, states, iodepth, threads = _sweep(ctx)
    for n in notes:
        ctx.note(n)
    purge = ctx.purger.purge()
    if ctx.settings.fresh_fill:
        ctx.rounds.run_sequence("fresh/fill", [_fresh_fill(ctx)])
    out: list[SweepCell] = []
    for state in states:
        if state == "used":
            ctx.rounds.run_sequence("used/precondition", [_used_fill(ctx)])
        cells = _cells(ctx, state, workloads, sizes, iodepth, threads)

        def track(results):   # the unit in the name: the console and exports read it from there
            return {f"{c.name} mib_s": c.bw_bytes / 2**20 for c in results}

        rounds = ctx.rounds.run_sequence(state, cells, chunk=max(1, len(sizes)), tracking=track)
        by = {c.name: c for r in rounds for c in r.cells}
        out += [_cell(state, rw, bs, c) for rw in workloads for bs in sizes
                if (c := by.get(cell_key(state, rw, bs))) is not None]
    return BsSweepSummary(purge=purge, states=states, workloads=workloads, block_sizes=sizes, iodepth=iodepth,
                          threads=threads, fresh_fill=ctx.settings.fresh_fill, cells=out,
                          notes=notes)


def _cell(state: str, rw: str, bs: int, c: CellResult) -> SweepCell:
    return SweepCell(state, rw, bs, mb_s=c.bw_bytes / 1e6, mib_s=c.bw_bytes / 2**20, iops=c.iops,
                     lat_mean_us=c.lat_mean_ns / 1000)
