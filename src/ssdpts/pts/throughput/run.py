"""SNIA PTS Throughput test: large-block sequential read and write.

For each block size (PTS-E: 128 KiB and 1024 KiB; PTS-C: 1024 KiB): its own purge and WIPC with
SEQ writes at that block size, then rounds of [SEQ read, SEQ write] until both bandwidths are steady.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...units import bs_label
from ...workload import Workload
from ..cells import cell_name
from ..windows import window_summary
from ...results import TrackerKey
from ..plan import TestPlan, purge_phase, steady_loop, wipc_phase
from .summary import BlockSizeResult, ThroughputSummary
from .settings import ThroughputSettings

if TYPE_CHECKING:     # annotations only: reading a stored run's settings imports no round loop
    from ..context import TestContext


def block_sizes(ctx: TestContext) -> list[tuple[int, str, Workload, Workload]]:
    """Per block size (its own purge, WIPC and loop): (bytes, phase name, SEQ read cell, SEQ write cell)."""
    # every SEQ cell walks the whole active range from its start (docs/coverage.md: why not continuing)
    return [(bs, f"bs={bs_label(bs)}",
             ctx.cells.cell(cell_name("seq", bs, 100), "read", bs, 100),
             ctx.cells.cell(cell_name("seq", bs, 0), "write", bs, 0))
            for bs in ctx.settings.block_sizes]


def trackers(ctx: TestContext, read: Workload, write: Workload) -> list[TrackerKey]:
    """The profile's spec names the tracking variable(s): PTS-E 1.1 SEQ write, PTS 2.0 read and write."""
    directions = ctx.settings.tracking
    return [TrackerKey(c.name, f"{d}_bw") for d, c in (("read", read), ("write", write)) if d in directions]


def plan(ctx: TestContext) -> TestPlan:
    phases = []
    for bs, phase, read, write in block_sizes(ctx):
        phases += [purge_phase(ctx), wipc_phase(ctx, bs),
                   steady_loop(ctx, [read, write], f"{phase}: rounds of SEQ {bs_label(bs)} read, SEQ {bs_label(bs)} "
                                                   "write, tracking " + ", ".join(
                                                       t.label for t in trackers(ctx, read, write)))]
    return TestPlan("throughput", phases)


def run(ctx: TestContext) -> ThroughputSummary:
    results = []
    for bs, phase, read, write in block_sizes(ctx):
        purge = ctx.purger.purge(phase)
        outcome = ctx.rounds.run_to_steady_state(phase, [read, write],
                                          trackers(ctx, read, write),
                                          precondition=ctx.cells.wipc(bs))
        results.append(BlockSizeResult(block_size=bs, purge=purge, steady=outcome.record(), read_cell=read.name,
                                       write_cell=write.name,
                                       cells=window_summary(outcome.rounds, outcome.window_rounds)))
    return ThroughputSummary(block_sizes=results)
