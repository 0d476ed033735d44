"""Over-provisioning study (reviewers' study, seed 001): steady-state random write vs active range.

For each active range (100, 75, 50, 25 % of the capacity): purge (the unused part stays unmapped and
acts as extra spare area), WIPC over the active range, random 4 KiB writes of N x the active range
(workload-dependent preconditioning), then rounds of random 4 KiB writes until steady state.
"""

from __future__ import annotations

from ...units import bs_label, parse_size
from ...workload import Workload
from ..common import TestContext, window_summary
from ..results import TrackerKey
from .summary import ActiveRangeResult, OpStudySummary


def phase_of(ar: float) -> str:
    return f"ar={ar:g}"


def run(ctx: TestContext) -> OpStudySummary:
    ars = [float(a) for a in ctx.settings.get("active_ranges", [100, 75, 50, 25])]
    bs = parse_size(ctx.settings.get("block_size", "4k"))
    mult = float(ctx.settings.get("precondition_multiple", 2.0))
    cap = ctx.target.size_bytes
    w = ctx.settings.get("wipc", {})
    wbs = parse_size(w.get("block_size", "128k"))
    out = []
    for ar in ars:
        phase = phase_of(ar)
        frac = ar / 100.0
        purge = ctx.purge(phase)
        if ctx.settings.get("wipc_first", True):
            ctx.run_sequence(f"{phase}/wipc", [Workload(
                name=f"wipc_seq_{bs_label(wbs)}_write", rw="write", bs=wbs, threads=1,
                iodepth=int(w.get("iodepth", 32)), range_size=frac,
                io_size=max(wbs, int(float(w.get("multiple", 2.0)) * frac * cap) // wbs * wbs),
                data_pattern=ctx.settings.get("data_pattern", "random"))])
        cell = ctx.cell(f"rnd_{bs_label(bs)}_w_ar{ar:g}", "randwrite", bs, 0, range_size=frac)
        pc = cell.with_(name=f"pc_rnd_{bs_label(bs)}_ar{ar:g}", runtime_s=None,
                        io_size=max(bs, int(mult * frac * cap / cell.threads) // bs * bs))
        outcome = ctx.run_to_steady_state(phase, [cell], [TrackerKey(cell.name, "iops")], precondition=pc)
        window = window_summary(outcome.rounds, outcome.window_rounds).get(cell.name)
        out.append(ActiveRangeResult(
            active_range_percent=ar, active_bytes=int(frac * cap), extra_spare_bytes=int((1 - frac) * cap),
            purge=purge, steady=outcome.record(), iops=window.iops if window else None,
            mib_s=window.write_mib_s if window else None, lat_mean_us=window.lat_mean_us if window else None,
            iops_per_round=[r.cell(cell.name).iops for r in outcome.rounds]))
    return OpStudySummary(block_size=bs, precondition_multiple=mult, capacity_bytes=cap, active_ranges=out)
