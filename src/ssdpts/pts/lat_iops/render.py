"""lat-iops renderers: per block size x mix, the shared latency-statistics charts (pts/demand_render.py) and a
table of every point and direction; compare overlays each family across runs."""

from __future__ import annotations

from markupsafe import Markup, escape

from ...clock import Clock
from ...render import plots
from ...render.context import CompareContext, SectionContext
from ...render.toolkit import notes_html
from ...units import bs_label
from .. import demand_render
from ..spec import Headline, Renderers
from .summary import STATISTICS, FamilyCurve, LatIopsFamily, LatIopsSummary

# the reviewers' chart the headline page shows first (seed 003 names 99 %, 99.99 % and the mean)
HEADLINE_STATISTIC = "p99.99"


def reviewers_key(statistic: str) -> str:
    """The plot key of a reviewers' chart: plots/lat-iops-reviewers-p99_99.png."""
    return "reviewers-" + statistic.replace(".", "_")


def draw_curves(ax, curves: list[FamilyCurve], families: list[str], qds: list[int], x_max: float,
                y_range: tuple[float, float], name_saturation: bool = True) -> bool:
    """Every family x direction as a line (colour per family, solid read, dashed write, a marker per QD); x
    linear from zero to `x_max`, so a saturated family stands as the near-vertical line it is; y over `y_range`,
    logarithmic (and said so) where it spans more than a decade (returned: True when it is). Panels of several
    runs get the same ranges, so their lines compare by eye."""
    marker = {qd: demand_render.QD_MARKERS[i % len(demand_render.QD_MARKERS)] for i, qd in enumerate(sorted(qds))}
    for c in curves:
        color = f"C{families.index(c.family) % 10}"
        style = "-" if c.direction == "read" else "--"
        sat = f", saturated from QD{c.saturated_from_qd}" if name_saturation and c.saturated_from_qd is not None \
            else ""
        ax.plot([p.iops for p in c.points], [p.latency_us for p in c.points], linestyle=style, color=color,
                linewidth=1.5, label=f"{c.label}{sat}")
        for p in c.points:
            ax.plot([p.iops], [p.latency_us], linestyle="none", marker=marker[p.qd], markersize=4, color=color)
    ax.set_xlim(0, x_max * 1.05)
    ax.xaxis.set_major_formatter(plots.thousands_formatter())
    lo, hi = y_range
    log = lo > 0 and hi / lo > 10
    if log:
        ax.set_ylim(lo / 1.3, hi * 1.3)
        plots.log_y(ax)
    else:
        ax.set_ylim(0, hi * 1.08)
        ax.yaxis.set_major_formatter(plots.thousands_formatter())
    return log


def qd_legend(ax, qds: list[int]) -> None:
    """The lines' legend outside the plot, on the right (it hid lines inside), and the QD markers under it."""
    from matplotlib.lines import Line2D

    marker = {qd: demand_render.QD_MARKERS[i % len(demand_render.QD_MARKERS)] for i, qd in enumerate(qds)}
    handles, labels = ax.get_legend_handles_labels()
    handles += [Line2D([], [], color="#555555", linestyle="none", marker=marker[q]) for q in qds]
    labels += [f"QD {q}" for q in qds]
    ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=6.5, frameon=False,
              title="family, direction; QD (marker)", title_fontsize=7)


def reviewers_figures(ctx: SectionContext | CompareContext, summaries: list[tuple[str, LatIopsSummary]],
                      statistics: list[str]) -> Markup:
    """Per statistic one figure: every block size x mix (x direction) as a line at the chart's thread count,
    one panel per run (one run: one panel)."""
    out = []
    families = list(dict.fromkeys(f.label for _, s in summaries for f in s.families))
    tcs = {s.chart_tc for _, s in summaries}
    tc = tcs.pop() if len(tcs) == 1 else None      # runs charted at different TCs say so per panel
    for stat in statistics:
        n = len(summaries)
        fig = ctx.figure((11.0, 5.4) if n == 1 else (min(5.2 * n, 15.6), 5.4))
        logs = []
        per_run = [s.curves(stat) for _, s in summaries]
        points = [p for curves in per_run for c in curves for p in c.points]
        ys = [p.latency_us for p in points if p.latency_us > 0] or [1.0]
        for i, ((label, s), curves) in enumerate(zip(summaries, per_run)):
            ax = fig.add_subplot(1, n, i + 1)
            # the legend is the last panel's: a run's own saturation is named only where it is the only run
            logs.append(draw_curves(ax, curves, families, s.queue_depths, max((p.iops for p in points), default=1.0),
                                    (min(ys), max(ys)), name_saturation=n == 1))
            if n > 1 or tc is None:
                ax.set_title(f"{label}, TC {s.chart_tc}" if n > 1 else f"TC {s.chart_tc}", fontsize=8)
            ax.set_xlabel("IOPS (read + write), linear from 0")
            ax.set_ylabel(f"{stat} latency (µs{', log scale' if logs[-1] else ''})")
        qd_legend(fig.axes[-1], sorted({qd for _, s in summaries for qd in s.queue_depths}))
        fig.ssdpts_right = 0.70 if n == 1 else 0.80
        at = f" at TC {tc}" if tc is not None else ""
        out.append(ctx.plot(fig, reviewers_key(stat), f"{stat} latency vs IOPS{at}, every block size × mix",
                            f"The reviewers' chart: {stat} latency of every block size × R/W mix (colour) and direction "
                            f"(solid: reads, dashed: writes) against the IOPS of the point{at}, queue depths rising "
                            "along each line (marker per QD). x starts at zero, so a family past saturation stands "
                            "near-vertical: more queue, same IOPS, more latency."))
    return Markup("").join(out)


def family_title(f: LatIopsFamily) -> str:
    return f"RND {bs_label(f.block_size)} {f.read_pct}/{100 - f.read_pct} (R/W)"


def method(s: LatIopsSummary) -> str:
    done = [f"{p.what} ({p.seconds:,.1f} s, {p.bytes_written / 2**30:,.2f} GiB written)" for p in s.preconditioning]
    pre = ((f"Purged ({s.purge.method}), then p" if s.purge else "P") + "reconditioned first, no steady-state "
           "judgement: " + "; ".join(done) + ".") if done else ""
    w = s.window_rounds
    return (f"{s.rounds} rounds, every point once per round: {s.warmup_s:g} s warm-up (fio ramp_time, not measured) "
            f"+ {s.cell_runtime_s:g} s measured. Each point is the mean of rounds {w[0]}–{w[-1]} "
            f"({len(w)} rounds; no steady-state test). TC = threads, QD = queue depth per thread. {pre}").strip()


def html(ctx: SectionContext) -> Markup:
    s: LatIopsSummary = ctx.summary
    out = notes_html(s.notes)
    out.append(Markup(f'<p class="note">{escape(method(s))}</p>'))
    out.append(Markup(f"<h3>Latency vs IOPS at TC {s.chart_tc}, every block size × mix (the reviewers' charts)</h3>"))
    out.append(reviewers_figures(ctx, [(ctx.model, s)], list(STATISTICS)))
    out.append(Markup("<h3>Per block size × mix: every thread count</h3>"))
    for f in s.families:
        title = family_title(f)
        out.append(Markup(f"<h3>{escape(title)}</h3>"))
        out.append(demand_render.stat_figures(ctx, f.points, f.prefix, title))
        out.append(ctx.table(f.prefix, demand_render.DIRECTION_HEADERS[:-1] + ["IOPS (read + write)"],
                             [r + [p.iops] for p in f.points for r in demand_render.point_direction_rows([p])],
                             caption=f"{title}: every TC × QD point per direction, mean of the window rounds"))
    return Markup("").join(out)


def compare(ctx: CompareContext) -> Markup:
    """Each block size x mix that every run has, overlaid (one colour per run, a line style per TC)."""
    first: LatIopsSummary = ctx.views[0].summary
    out = [Markup("<h3>Latency vs IOPS, every block size × mix (the reviewers' charts), one panel per run</h3>"),
           reviewers_figures(ctx, [(v.label, v.summary) for v in ctx.views], ["p99.99", "p99", "mean"])]
    for f in first.families:
        runs = [(v.label, fam.points) for v in ctx.views if (fam := v.summary.family(f.block_size, f.read_pct))]
        if len(runs) < len(ctx.views):
            out.append(Markup(f'<p class="warn">{escape(family_title(f))}: not in every run, not compared.</p>'))
            continue
        out.append(Markup(f"<h3>{escape(family_title(f))}</h3>"))
        out.append(demand_render.stat_compare(ctx, runs, f.prefix, family_title(f)))
    return Markup("").join(out)


def text(s: LatIopsSummary, clock: Clock) -> list[str]:
    lines = [f"  {method(s)}"]
    for f in s.families:
        lines.append(f"  {family_title(f)}")
        lines.append(f"    {'TC':>3} {'QD':>4} {'IOPS':>11}  dir    {'mean µs':>9} {'p99 µs':>9} {'p99.99 µs':>10} "
                     f"{'max µs':>9}")
        for p in f.points:
            for d in f.directions:
                lat = demand_render.direction_lat(p, d)
                if lat is None:
                    continue
                cols = [demand_render.stat_us(lat, k) for k in ("mean", "99", "99.99", "max")]
                shown = ["–" if v is None else f"{v:,.1f}" for v in cols]
                lines.append(f"    {p.tc:>3} {p.qd:>4} {p.iops:>11,.0f}  {d:<5}  {shown[0]:>9} {shown[1]:>9} "
                             f"{shown[2]:>10} {shown[3]:>9}")
    return lines


def headline(s: LatIopsSummary) -> list[Headline]:
    """Per family: the highest IOPS, and per direction the mean latency at the smallest OIO and the p99.99 at
    the largest (the reviewers' QD1 and high-QD latency figures)."""
    out = []
    for f in s.families:
        if not f.points:
            continue
        title, key = family_title(f), f.prefix.lower().replace(".", "_")
        top = max(f.points, key=lambda p: p.iops)
        out.append(Headline(f"lat_iops_{key}_max_iops", f"{title} highest IOPS (TC{top.tc}/QD{top.qd})", top.iops,
                            "IOPS"))
        low, high = min(f.points, key=lambda p: p.oio), max(f.points, key=lambda p: p.oio)
        for d in f.directions:
            out.append(Headline(f"lat_iops_{key}_{d}_tc{low.tc}_qd{low.qd}_mean_us",
                                f"{title} {d} mean latency at TC{low.tc}/QD{low.qd}",
                                demand_render.stat_us(demand_render.direction_lat(low, d), "mean"), "µs"))
            out.append(Headline(f"lat_iops_{key}_{d}_tc{high.tc}_qd{high.qd}_p99_99_us",
                                f"{title} {d} p99.99 latency at TC{high.tc}/QD{high.qd}",
                                demand_render.stat_us(demand_render.direction_lat(high, d), "99.99"), "µs"))
    return out


RENDERERS = Renderers(html=html, compare=compare, text=text, headline=headline)
