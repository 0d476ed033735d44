"""Over-provisioning renderers: IOPS vs active range (steady state or not, said per point), MB/s over time
per active range (seed 001 Fig 13), each range's steady state, text, headline."""

from __future__ import annotations

from markupsafe import Markup

from ...clock import Clock
from ...render import plots
from ...render.context import CompareContext, SectionContext
from ...units import bs_label
from ..spec import Headline, Renderers
from .run import cell_name, phase_of
from .summary import ActiveRangeResult, OpStudySummary


def _by_range(s: OpStudySummary) -> list[ActiveRangeResult]:
    """Largest active range first (the baseline, AR 100 %), then shrinking."""
    return sorted(s.active_ranges, key=lambda a: -a.active_range_percent)


def _gain(a: ActiveRangeResult, base: ActiveRangeResult | None) -> float | None:
    return a.iops / base.iops if base and base.iops and a.iops is not None else None


def over_time(ctx: SectionContext, s: OpStudySummary) -> list[Markup]:
    """Seed 001 Fig 13: random-write MB/s over time, one line per active range (spare-area size), from the
    stored rounds; the time axis is the rounds' measured run times back to back."""
    lines, rows = {}, []
    for a in _by_range(s):
        t, points = 0.0, []
        for r in ctx.rounds(phase_of(a.active_range_percent)):
            c = next((c for c in r.cells if c.name == cell_name(s.block_size, a.active_range_percent)), None)
            if c is None:
                continue
            t += c.runtime_ms / 1000
            points.append((t, c.write.bw_bytes / 1e6))
            rows.append([a.active_range_percent, a.extra_spare_bytes / 2**30, r.round, t, c.write.bw_bytes / 1e6,
                         c.write.iops])
        if points:
            lines[f"AR {a.active_range_percent:g} % (extra spare {a.extra_spare_bytes / 2**30:.2f} GiB)"] = (
                [p[0] for p in points], [p[1] for p in points])
    if not lines:
        return []
    scale, unit = (60.0, "min") if max(x[-1] for x, _ in lines.values()) >= 120 else (1.0, "s")
    fig = ctx.figure()
    plots.series_plot(fig, {k: ([v / scale for v in x], y) for k, (x, y) in lines.items()},
                      f"time in the measurement rounds ({unit})", "write MB/s (10^6 bytes/s)", ylim0=True)
    plots.legend_above(fig, fig.axes[0])      # four lines across the plot leave "best" no free corner
    return [ctx.plot(fig, "mb-vs-time", f"RND {bs_label(s.block_size)} write MB/s vs time, one line per active range",
                     "Each active range from its own purge, WIPC and random-write preconditioning; then its "
                     "measurement rounds, each point the end of one round (the rounds' measured run times back to "
                     "back). The rest of the drive is extra spare area."),
            ctx.table("mb-vs-time", ["Active range (%)", "Extra spare (GiB)", "Round", "Time (s)",
                                     "Write MB/s (10^6 bytes/s)", "Write IOPS"], rows,
                      caption="the lines of the chart above, one row per round")]


def not_reached_words(ranges: list[ActiveRangeResult]) -> str:
    """"AR 100 %, 75 %": the active ranges whose loop did not reach steady state, largest first."""
    percents = sorted({a.active_range_percent for a in ranges}, reverse=True)
    return "AR " + ", ".join(f"{p:g} %" for p in percents)


def iops_vs_ar(fig, series: dict[str, list[ActiveRangeResult]]) -> str:
    """IOPS against the active range (largest left), one line per series; a point whose loop did not reach
    steady state is hollow and named in the legend. Only a plot whose every point reached steady state has
    "steady-state IOPS" on its axis. Returns the plot's title."""
    known = {label: [a for a in ranges if a.iops is not None] for label, ranges in series.items()}
    unreached = [a for ranges in known.values() for a in ranges if not a.reached]
    ylabel = "IOPS (last-window mean)" if unreached else "steady-state IOPS"
    ticks = sorted({a.active_range_percent for ranges in known.values() for a in ranges}, reverse=True)
    plots.series_plot(fig, {label: ([a.active_range_percent for a in ranges], [a.iops for a in ranges])
                            for label, ranges in known.items()},
                      "active range (% of capacity)", ylabel, ylim0=True, xticks=ticks,
                      xticklabels=[f"{t:g}" for t in ticks])
    ax = fig.axes[0]
    if unreached:
        ax.plot([a.active_range_percent for a in unreached], [a.iops for a in unreached], linestyle="none",
                marker="o", markersize=9, markerfacecolor="white", markeredgecolor="tab:red", markeredgewidth=1.6,
                label=f"steady state NOT reached ({not_reached_words(unreached)})", zorder=3)
        ax.legend()
    ax.invert_xaxis()
    return f"{ylabel} vs active range" + (f", steady state NOT reached at {not_reached_words(unreached)}"
                                            if unreached else "")


def html(ctx: SectionContext) -> Markup:
    """Steady-state IOPS vs active range (and the gain over AR 100 %), plus each range's steady-state block."""
    s: OpStudySummary = ctx.summary
    items = _by_range(s)
    if not items:
        return Markup("")
    out = []
    fig = ctx.figure()
    title = iops_vs_ar(fig, {f"RND {bs_label(s.block_size)} W": items})
    out.append(ctx.plot(fig, "iops-vs-ar", title,
                        "The part of the drive outside the active range is never written after the purge: extra "
                        "spare area. Each point is the mean of the steady-state loop's last window of rounds: its "
                        "measurement window where steady state was reached; a hollow point did not reach it."))
    out += over_time(ctx, s)
    base = s.at(100)
    rows = [[a.active_range_percent, a.active_bytes / 2**30, a.extra_spare_bytes / 2**30, a.iops, _gain(a, base),
             "yes" if a.reached else "NOT reached", a.rounds] for a in items]
    out.append(ctx.table("table", ["Active range (%)", "Active (GiB)", "Extra spare (GiB)", "IOPS (window mean)",
                                   "× AR 100 %", "Steady state", "Rounds"], rows,
                         caption="Random write steady state per active range"))
    for a in items:
        out.append(Markup(f"<h3>Active range {a.active_range_percent:g} %</h3>"))
        out.append(ctx.steady_block(phase_of(a.active_range_percent), a.steady, key=f"ar{a.active_range_percent:g}"))
    return Markup("").join(out)


def compare(ctx: CompareContext) -> Markup:
    """Steady-state IOPS vs active range, one series per run; the table with % deltas."""
    runs = [v.summary for v in ctx.views]
    ars = [a.active_range_percent for a in _by_range(runs[0]) if all(s.at(a.active_range_percent) for s in runs[1:])]
    if not ars:
        return Markup('<p class="warn">The runs share no active range.</p>')
    fig = ctx.figure()
    title = iops_vs_ar(fig, {v.label: [v.summary.at(a) for a in ars] for v in ctx.views})
    out = [ctx.plot(fig, "iops-vs-ar", f"{title}; one series per run")]
    out.append(ctx.side_by_side("table", [(f"{a:g}",) for a in ars], [[s.at(a).iops for s in runs] for a in ars],
                                ["Active range (%)"], "IOPS",
                                caption="Random write steady state per active range; Δ relative to the first run"))
    return Markup("").join(out)


def text(s: OpStudySummary, clock: Clock) -> list[str]:
    base = s.at(100)
    lines = [f"  RND {bs_label(s.block_size)} write, steady state per active range (rest of the drive: extra spare)",
             f"  {'AR %':>5} {'active GiB':>11} {'IOPS':>11} {'x AR 100':>9}  steady state"]
    for a in _by_range(s):
        gain = _gain(a, base)
        lines.append(f"  {a.active_range_percent:>5g} {a.active_bytes / 2**30:>11.2f} "
                     + (f"{a.iops:>11,.0f}" if a.iops is not None else f"{'–':>11}")
                     + (f" {gain:>9.2f}" if gain is not None else f" {'–':>9}")
                     + f"  {'reached' if a.reached else 'NOT REACHED'} after {a.rounds} rounds; purge: {a.purge.method}"
                     + ("" if a.purge.snia_purge else " (not a SNIA purge)"))
        lines += a.steady.text_lines("    ")[1:]
    return lines


def headline(s: OpStudySummary) -> list[Headline]:
    return [Headline(f"ar{a.active_range_percent:g}_iops", f"RND {bs_label(s.block_size)} W IOPS at active range "
                     f"{a.active_range_percent:g} %", a.iops, "IOPS", a.reached) for a in _by_range(s)]


RENDERERS = Renderers(html=html, compare=compare, text=text, headline=headline)
