"""Over-provisioning study (reviewers' study, seed 001): steady-state random write vs active range.

For each active range (100, 75, 50, 25 % of the capacity): purge (the unused part stays unmapped and
acts as extra spare area), WIPC over the active range, random 4 KiB writes of N x the active range
(workload-dependent preconditioning), then rounds of random 4 KiB writes until steady state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...units import bs_label
from ...workload import Workload
from ..windows import window_summary
from ..fill import fill as seq_fill
from ..plan import TestPlan, once, purge_phase, steady_loop
from ...results import TrackerKey
from .summary import ActiveRangeResult, OpStudySummary
from .settings import OpStudySettings

if TYPE_CHECKING:     # annotations only: reading a stored run's settings imports no round loop
    from ..context import TestContext


def phase_of(ar: float) -> str:
    return f"ar={ar:g}"


def cell_name(block_size: int, ar: float) -> str:
    """The random-write cell of one active range, as its rounds store it."""
    return f"rnd_{bs_label(block_size)}_w_ar{ar:g}"


def active_ranges(ctx: TestContext) -> list[float]:
    return [float(a) for a in ctx.settings.active_ranges]


def _range_cells(ctx: TestContext, ar: float) -> tuple[Workload | None, Workload, Workload]:
    """For one active range: (WIPC over the range or None, the random-write cell, its preconditioning)."""
    s = ctx.settings
    bs, mult = s.block_size, s.precondition_multiple
    cap = ctx.target.size_bytes
    frac = ar / 100.0
    wbs = s.wipc.block_size
    wipc = None
    if s.wipc_first:
        # the seed's WIPC: one job at the fill's QD unless [wipc] iodepth says otherwise
        wipc = seq_fill(ctx, wbs, frac, s.wipc.multiple * frac * cap, name=f"wipc_seq_{bs_label(wbs)}_write",
                        iodepth=s.wipc.iodepth)
    cell = ctx.cells.cell(cell_name(bs, ar), "randwrite", bs, 0, range_size=frac)
    pc = cell.with_(name=f"pc_rnd_{bs_label(bs)}_ar{ar:g}", runtime_s=None,
                    io_size=max(bs, int(mult * frac * cap / cell.threads) // bs * bs))
    return wipc, cell, pc


def plan(ctx: TestContext) -> TestPlan:
    phases = []
    for ar in active_ranges(ctx):
        wipc, cell, pc = _range_cells(ctx, ar)
        phases.append(purge_phase(ctx))
        if wipc is not None:
            phases.append(once("precondition", f"{phase_of(ar)}: WIPC, SEQ {bs_label(wipc.bs)} writes over {ar:g} % "
                                                "of the capacity", [wipc]))
        phases.append(once("precondition", f"{phase_of(ar)}: workload-dependent preconditioning, RND "
                                            f"{bs_label(cell.bs)} writes of "
                                            f"{ctx.settings.precondition_multiple:g}x the range", [pc]))
        phases.append(steady_loop(ctx, [cell], f"{phase_of(ar)}: rounds of RND {bs_label(cell.bs)} writes over {ar:g} % "
                                               "of the capacity (the rest: extra spare area), tracking IOPS"))
    return TestPlan("op-study", phases)


def run(ctx: TestContext) -> OpStudySummary:
    cap = ctx.target.size_bytes
    out = []
    for ar in active_ranges(ctx):
        phase = phase_of(ar)
        frac = ar / 100.0
        purge = ctx.purger.purge(phase)
        wipc, cell, pc = _range_cells(ctx, ar)
        if wipc is not None:
            ctx.rounds.run_sequence(f"{phase}/wipc", [wipc])
        outcome = ctx.rounds.run_to_steady_state(phase, [cell], [TrackerKey(cell.name, "iops")], precondition=pc)
        window = window_summary(outcome.rounds, outcome.window_rounds).get(cell.name)
        out.append(ActiveRangeResult(
            active_range_percent=ar, active_bytes=int(frac * cap), extra_spare_bytes=int((1 - frac) * cap),
            purge=purge, steady=outcome.record(), iops=window.iops if window else None,
            mib_s=window.write_mib_s if window else None, lat_mean_us=window.lat_mean_us if window else None,
            iops_per_round=[r.cell(cell.name).iops for r in outcome.rounds]))
    return OpStudySummary(block_size=ctx.settings.block_size, precondition_multiple=ctx.settings.precondition_multiple,
                          capacity_bytes=cap, active_ranges=out)
