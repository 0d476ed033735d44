"""Over-provisioning study (reviewers' study, seed 001): steady-state random write vs active range.

For each active range (100, 75, 50, 25 % of the capacity): purge (the unused part stays unmapped and
acts as extra spare area), WIPC over the active range, random 4 KiB writes of N x the active range
(workload-dependent preconditioning), then rounds of random 4 KiB writes until steady state.
"""

from __future__ import annotations

from ..units import bs_label, parse_size
from ..workload import Workload
from .common import TestContext, Tracker, window_summary

NAME = "op-study"
TITLE = "Over-Provisioning: Steady-State Random Write vs Active Range"


def phase_of(ar: float) -> str:
    return f"ar={ar:g}"


def run(ctx: TestContext) -> dict:
    ars = [float(a) for a in ctx.settings.get("active_ranges", [100, 75, 50, 25])]
    bs = parse_size(ctx.settings.get("block_size", "4k"))
    mult = float(ctx.settings.get("precondition_multiple", 2.0))
    cap = ctx.target.size_bytes
    w = ctx.settings.get("wipc", {})
    wbs = parse_size(w.get("block_size", "128k"))
    out = {}
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
        outcome = ctx.run_to_steady_state(phase, [cell], [Tracker(cell.name, "iops")], precondition=pc)
        summ = window_summary(outcome.rounds, outcome.window_rounds).get(cell.name, {})
        out[f"{ar:g}"] = {
            "active_range_percent": ar, "active_bytes": int(frac * cap), "extra_spare_bytes": int((1 - frac) * cap),
            "purge": purge, "steady": outcome.to_dict(), "reached": outcome.reached,
            "iops": summ.get("iops", 0.0), "mib_s": summ.get("write_mib_s", 0.0),
            "lat_mean_us": summ.get("lat_mean_us", 0.0), "rounds": len(outcome.rounds),
            "iops_per_round": [r.cell(cell.name).iops for r in outcome.rounds],
        }
    return {"active_ranges": out, "block_size": bs, "precondition_multiple": mult, "capacity_bytes": cap,
            "units": {"iops": "IO/s, measurement-window average", "active_range_percent": "% of capacity"}}


# --- report ------------------------------------------------------------------------------------

def report_section(ctx) -> str:
    """Steady-state IOPS vs active range (and the gain over AR 100 %), plus each range's steady-state block."""
    from markupsafe import Markup

    from ..report import plots

    s = ctx.summary
    data = s.get("active_ranges", {})
    html = []
    if not data:
        return Markup("")
    items = sorted(data.values(), key=lambda v: -v["active_range_percent"])
    fig = ctx.figure()
    plots.series_plot(fig, {f"RND {bs_label(s.get('block_size', 4096))} W": (
        [v["active_range_percent"] for v in items], [v["iops"] for v in items])},
        "active range (% of capacity)", "steady-state IOPS", ylim0=True,
        xticks=[v["active_range_percent"] for v in items],
        xticklabels=[f"{v['active_range_percent']:g}" for v in items])
    fig.axes[0].invert_xaxis()
    html.append(ctx.plot(fig, "iops-vs-ar", "steady-state IOPS vs active range",
                         "The part of the drive outside the active range is never written after the purge: extra spare area."))
    base = next((v["iops"] for v in items if v["active_range_percent"] == 100), None)
    rows = [[v["active_range_percent"], v["active_bytes"] / 2**30, v["extra_spare_bytes"] / 2**30, v["iops"],
             (v["iops"] / base if base else None), "yes" if v["reached"] else "NOT reached", v["rounds"]]
            for v in items]
    html.append(ctx.table("table", ["Active range (%)", "Active (GiB)", "Extra spare (GiB)", "Steady IOPS",
                                    "× AR 100 %", "Steady state", "Rounds"], rows,
                          caption="Random write steady state per active range"))
    for v in items:
        html.append(Markup(f"<h3>Active range {v['active_range_percent']:g} %</h3>"))
        html.append(ctx.steady_block(phase_of(v["active_range_percent"]), v.get("steady"),
                                     key=f"ar{v['active_range_percent']:g}"))
    return Markup("").join(html)
