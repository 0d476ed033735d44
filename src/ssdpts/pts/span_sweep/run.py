"""Span sweep (seed 001's hypothesis: the early write drop is mapping-table pressure, not free-page exhaustion).

Reads consume no free pages, so random reads over a growing LBA span isolate the map: a drive whose map cache
(DRAM, or host memory on HMB drives) covers only part of the capacity reads slower once the span outgrows it; a
drive that only ran out of free pages reads the same at every span. Every span must hold written data (many
drives answer reads of unwritten LBAs without flash access), so the largest span is written sequentially first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...targets.sim import simulated
from ...units import bs_label
from ...workload import Workload
from ..windows import window_summary
from ..fill import fill as seq_fill
from ..plan import TestPlan, once
from .summary import SpanPoint, SpanSweepSummary
from .settings import SpanSweepSettings

if TYPE_CHECKING:     # annotations only: reading a stored run's settings imports no round loop
    from ..context import TestContext


def span_bytes(ctx: TestContext) -> tuple[list[int], list[str]]:
    """The spans in bytes, ascending, whole blocks, at most the capacity (one each); notes on clipped ones."""
    cap, bs = ctx.target.size_bytes, max(ctx.settings.block_size, ctx.cells.io_alignment())
    out, notes = set(), []
    for unit, v in ctx.settings.spans:
        n = int(v / 100 * cap) if unit == "%" else int(v)
        if n > cap:
            notes.append(f"span {n / 2**30:g} GiB is larger than the {cap / 2**30:.2f} GiB capacity: ran as 100 %")
        out.add(max(bs, min(n, cap) // bs * bs))
    return sorted(out), notes


def cells(ctx: TestContext, span: int) -> list[Workload]:
    s, frac, tag = ctx.settings, span / ctx.target.size_bytes, f"{span // 2**20}m"
    out = [ctx.cells.cell(f"rnd_{bs_label(s.block_size)}_read_{tag}", "randread", s.block_size, 100, range_size=frac)]
    if s.writes:
        out.append(ctx.cells.cell(f"rnd_{bs_label(s.block_size)}_write_{tag}", "randwrite", s.block_size, 0, range_size=frac))
    return out


def fill(ctx: TestContext, span: int) -> Workload:
    return seq_fill(ctx, ctx.settings.fill_block_size, span / ctx.target.size_bytes, span)


def plan(ctx: TestContext) -> TestPlan:
    spans, _ = span_bytes(ctx)
    return TestPlan("span-sweep", [once("precondition", "SEQ fill of the largest span", [fill(ctx, spans[-1])])]
                    + [once(f"span {sp / 2**30:g} GiB", "random I/O over the span", cells(ctx, sp)) for sp in spans])


def run(ctx: TestContext) -> SpanSweepSummary:
    spans, notes = span_bytes(ctx)
    filled = fill(ctx, spans[-1])
    ctx.rounds.run_sequence("fill", [filled])
    points = []
    for sp in spans:
        c = cells(ctx, sp)
        rounds = ctx.rounds.run_sequence(f"span_{sp}", c, chunk=len(c))
        got = window_summary(rounds, [rounds[-1].round])
        points.append(SpanPoint(sp, sp / ctx.target.size_bytes, got[c[0].name], got[c[1].name] if len(c) > 1 else None))
    if simulated(ctx.target):
        notes.append("the simulated drive models no map cache (docs/simulator.md: the whole page map is at hand): "
                     "a change of its read IOPS with the span comes from elsewhere (e.g. the small spans lying in "
                     "the SLC cache the fill wrote first); this run shows the method, not a DRAM-less drive")
    return SpanSweepSummary(target=ctx.target.path, capacity_bytes=ctx.target.size_bytes,
                            block_size=ctx.settings.block_size, filled_bytes=filled.io_size or 0,
                            cell_runtime_s=ctx.settings.cell_runtime, points=points, notes=notes)
