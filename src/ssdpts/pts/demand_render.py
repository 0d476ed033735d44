"""DIRTH and CBW renderers (the TC x QD sweep of pts/demand.py), shared by both packages' `render`.

Steady state of the largest point; latency vs IOPS (one line per TC) and IOPS vs QD (one line per
TC) with the Max / Mid / Min operating points marked; a table of every point; per-direction latency
percentiles; response-time histograms of the operating points from each point's own logged measurement
(merged fio json+ bins; the window rounds' bins for runs without one) (CBW: reads and writes drawn
separately, DIRTH: all I/Os).
"""

from __future__ import annotations

import textwrap
from typing import Callable, Sequence

from markupsafe import Markup, escape

from ..clock import Clock
from ..engines.results import merge_bins, percentile_from_bins
from ..render import plots
from ..render.context import CompareContext, SectionContext
from ..render.drives import drives_intro, ordered_part_labels
from ..render.toolkit import Cell, notes_html
from .windows import window_summary
from .demand import DemandPoint, DemandSummary, latency_stat
from ..results import Latency
from .spec import Headline

OP_ORDER = ("max", "mid", "min")
OP_STYLE = {"max": ("Max", "#d62728", "*"), "mid": ("Mid", "#ff7f0e", "D"), "min": ("Min", "#2ca02c", "P")}
PCTS = ("99", "99.9", "99.99")


def op_of(s: DemandSummary) -> dict[str, str]:
    """point name -> 'Max' / 'Mid' / 'Min' (a point can be several)."""
    out: dict[str, list[str]] = {}
    for k, n in s.operating_points.items():
        if n:
            out.setdefault(n, []).append(OP_STYLE[k][0])
    return {n: " / ".join(v) for n, v in out.items()}


def window_bins(ctx: SectionContext, names: Sequence[str],
                window: Sequence[int]) -> dict[str, dict[str, dict[int, int]]]:
    """point -> {'read': bins, 'write': bins, 'all': bins}, merged over the measurement-window rounds."""
    rounds = [r for r in ctx.rounds("") if r.round in set(window)]
    out = {}
    for n in names:
        cells = [c for r in rounds for c in r.cells if c.name == n]
        rb = merge_bins(c.read.bins for c in cells if c.read.bins)
        wb = merge_bins(c.write.bins for c in cells if c.write.bins)
        out[n] = {"read": rb, "write": wb, "all": merge_bins([rb, wb])}
    return out


def op_bins(ctx: SectionContext, op: str) -> dict[str, dict[int, int]] | None:
    """The operating point's own logged measurement period, merged ('read', 'write', 'all'); None if not run."""
    cells = [c for r in ctx.rounds(f"op={op}/measure") for c in r.cells]
    if not cells:
        return None
    rb = merge_bins(c.read.bins for c in cells if c.read.bins)
    wb = merge_bins(c.write.bins for c in cells if c.write.bins)
    return {"read": rb, "write": wb, "all": merge_bins([rb, wb])}


def measurement_rows(s: DemandSummary) -> list[list]:
    """Per operating point: its pre-write and measurement, as stored in the summary."""
    rows = []
    for k in OP_ORDER:
        m = s.operating_measurements.get(k)
        if m is None:
            continue
        pre = m.prewrite_iops
        rows.append([OP_STYLE[k][0], m.point, m.tc, m.qd, m.prewrite_seconds, pre[-1] if pre else None,
                     m.measure_seconds, m.measure_ios, m.iops, m.lat_mean_us, m.lat_max_us])
    return rows


MEASUREMENT_HEADERS = ["Operating point", "Point", "TC", "QD", "Pre-write (s)", "Last pre-write cell IOPS",
                       "Measurement (s)", "Measured I/Os", "IOPS", "Mean latency (µs)", "Max latency (µs)"]


def _pct(bins: dict, p: str) -> float | None:
    v = percentile_from_bins(bins, float(p)) if bins else None
    return None if v is None else v / 1000


def point_rows(s: DemandSummary, bins: dict) -> list[list]:
    """One row per point: TC, QD, OIO, IOPS, mean, p99/p99.9/p99.99 (all I/Os, merged window bins), max."""
    ops = op_of(s)
    rows = []
    for p in s.points:
        b = (bins.get(p.name) or {}).get("all") or {}
        rows.append([p.name, p.tc, p.qd, p.oio, p.iops, p.lat_mean_us]
                    + [_pct(b, q) for q in PCTS] + [p.lat_max_us, ops.get(p.name, "")])
    return rows


POINT_HEADERS = ["Point", "TC", "QD", "OIO", "IOPS", "Mean latency (µs)"] + [f"p{q} (µs)" for q in PCTS] + [
    "Max latency (µs)", "Operating point"]


def direction_rows(s: DemandSummary) -> list[list]:
    """Per point and direction: latency statistics exactly as stored in the summary."""
    return point_direction_rows(s.points, op_of(s))


def point_direction_rows(points: Sequence[DemandPoint], ops: dict[str, str] | None = None) -> list[list]:
    """Per point and direction: the stored latency statistics (DIRECTION_HEADERS; without ops: no
    "Operating point" column)."""
    rows = []
    for p in points:
        for d, lat in (("read", p.read_lat), ("write", p.write_lat)):
            if lat is None:
                continue
            rows.append([p.name, p.tc, p.qd, p.oio, d, lat.mean_us] + [lat.p(q) for q in PCTS]
                        + [lat.p("99.999"), lat.max_us] + ([] if ops is None else [ops.get(p.name, "")]))
    return rows


DIRECTION_HEADERS = ["Point", "TC", "QD", "OIO", "Direction", "Mean (µs)"] + [f"p{q} (µs)" for q in PCTS] + [
    "p99.999 (µs)", "Max (µs)", "Operating point"]


def by_tc(points: list[DemandPoint]) -> dict[int, list[DemandPoint]]:
    out: dict[int, list[DemandPoint]] = {}
    for p in sorted(points, key=lambda p: (-p.tc, p.qd)):
        out.setdefault(p.tc, []).append(p)
    return out


def _mark_ops(ax, s: DemandSummary, x: Callable[[DemandPoint], float], y: Callable[[DemandPoint], float]) -> None:
    for k, n in s.operating_points.items():
        p = s.point(n)
        if p is None:
            continue
        label, col, m = OP_STYLE[k]
        ax.plot([x(p)], [y(p)], linestyle="none", marker=m, markersize=12,
                markerfacecolor="none", markeredgecolor=col, markeredgewidth=1.8, label=f"{label}: TC{p.tc}/QD{p.qd}")


def log_x(ax) -> None:
    """Log x axis labelled like the report's log y axes (1k, 20k, 1M; minor 2x/5x ticks on short spans)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(plots._thousands))
    lo, hi = ax.get_xlim()
    if lo > 0 and hi / lo < 300:
        ax.xaxis.set_minor_locator(LogLocator(base=10, subs=(2.0, 5.0)))
        ax.xaxis.set_minor_formatter(FuncFormatter(plots._thousands))
    else:
        ax.xaxis.set_minor_formatter(NullFormatter())


def histogram(ax, bins: dict[int, int] | None, label: str, color: str, per_decade: int = 20) -> None:
    """fio json+ bins (ns -> count) re-binned on a log µs axis, drawn as steps (counts, log y)."""
    import numpy as np
    if not bins:
        return
    v = np.array(sorted(bins), dtype=float) / 1000
    w = np.array([bins[k] for k in sorted(bins)], dtype=float)
    v = np.maximum(v, 1e-3)
    lo, hi = np.floor(np.log10(v.min())), np.ceil(np.log10(v.max()) + 1e-9)
    hi = max(hi, lo + 1)
    edges = np.logspace(lo, hi, int((hi - lo) * per_decade) + 1)
    counts, edges = np.histogram(v, bins=edges, weights=w)
    nz = np.nonzero(counts)[0]
    a, b = nz.min(), nz.max() + 1
    ax.stairs(counts[a:b], edges[a:b + 1], color=color, linewidth=1.4, label=f"{label} ({int(w.sum()):,} I/Os)",
              baseline=None)


def html(ctx: SectionContext, pattern: str, split_rw: bool) -> Markup:
    """The report section; `pattern`: the test's access pattern in words; `split_rw`: histograms of reads
    and writes apart (CBW) rather than of all I/Os (DIRTH)."""
    s: DemandSummary = ctx.summary
    out = notes_html(s.notes)
    out.append(Markup(f'<p class="note">{escape(pattern)}</p>'))
    out.append(Markup(f"<h3>Preconditioning ({escape(s.PREWRITE)} at the largest TC/QD, to steady state)</h3>"))
    out.append(ctx.steady_block("pc", s.preconditioning, key="preconditioning"))
    out.append(Markup(f"<h3>Steady state (largest demand point; each round starts with a pre-write: "
                      f"{escape(s.PREWRITE)})</h3>"))
    out.append(ctx.steady_block("", s.steady))
    points = s.points
    if not points:
        return Markup("").join(out)
    window = s.steady.window_rounds
    bins = window_bins(ctx, [p.name for p in points], window)
    limit = s.latency_limit_us
    out.append(Markup("<h3>Demand intensity (measurement-window averages)</h3>"))
    chosen = [(k, p) for k, n in s.operating_points.items() if (p := s.point(n)) is not None]
    if chosen:
        txt = "; ".join(f"{OP_STYLE[k][0]} = TC{p.tc}/QD{p.qd} ({p.iops:,.0f} IOPS, {p.lat_mean_us:,.1f} µs mean)"
                        for k, p in chosen)
        warn = "" if s.max_under_limit else (
            f" No point has a mean latency under {limit / 1000:g} ms: Max is the highest IOPS regardless.")
        out.append(Markup(f'<p class="note">Operating points: {escape(txt)}. Max = highest IOPS with mean latency '
                          f'under {limit / 1000:g} ms, Min = smallest OIO, Mid = IOPS closest to '
                          f'(Max + Min) / 2.{escape(warn)}</p>'))
    groups = by_tc(points)
    # latency vs IOPS, one line per TC
    fig = ctx.figure((8.5, 4.8))
    plots.series_plot(fig, {f"TC {tc}": ([p.iops for p in ps], [p.lat_mean_us for p in ps])
                            for tc, ps in groups.items()}, "IOPS (read + write), log scale",
                      "mean latency (µs, log scale)", logy=True)
    ax = fig.axes[0]
    log_x(ax)
    for p in points:
        ax.annotate(f"QD{p.qd}", (p.iops, p.lat_mean_us), textcoords="offset points", xytext=(4, -9),
                    fontsize=6, color="#555555")
    _mark_ops(ax, s, lambda p: p.iops, lambda p: p.lat_mean_us)
    top = max(p.lat_mean_us for p in points)
    if limit and limit <= 10 * top:
        ax.axhline(limit, color="#555555", linestyle="--", linewidth=1, label=f"limit {limit / 1000:g} ms")
    ax.legend(loc="best", fontsize=7, framealpha=0.85, markerscale=0.6)
    out.append(ctx.plot(fig, "latency-vs-iops", "mean latency vs IOPS, one line per TC",
                        "Each line: one thread count, queue depths increasing to the right; Max / Mid / Min "
                        "operating points circled."))
    # IOPS vs QD, one line per TC
    qds = sorted({p.qd for p in points})
    fig = ctx.figure()
    plots.series_plot(fig, {f"TC {tc}": ([p.qd for p in ps], [p.iops for p in ps]) for tc, ps in groups.items()},
                      "queue depth per thread (QD)", "IOPS (read + write)", logx=len(qds) > 1, ylim0=True,
                      xticks=qds)
    _mark_ops(fig.axes[0], s, lambda p: p.qd, lambda p: p.iops)
    fig.axes[0].legend(loc="best", fontsize=7, framealpha=0.85, markerscale=0.6)
    out.append(ctx.plot(fig, "iops-vs-qd", "IOPS vs queue depth, one line per TC"))
    out.append(ctx.table("points", POINT_HEADERS, point_rows(s, bins),
                         caption="Every TC × QD point: IOPS (read + write) and latency of all I/Os; percentiles from "
                                 "the measurement window's merged read + write histograms"))
    tab = ctx.table("directions", DIRECTION_HEADERS, direction_rows(s),
                    caption="Latency per direction (reads and writes separately), measurement window")
    out.append(Markup(f"<details{' open' if split_rw else ''}><summary>Latency per direction "
                      f"({len(points)} points × R/W)</summary>{tab}</details>"))
    out.append(stat_figures(ctx, points, "latency-stats", "mean, p99, p99.9, p99.99, max"))
    # response-time histograms of the operating points
    if chosen:
        out.append(Markup("<h3>Response-time histograms (operating points)</h3>"))
        if s.operating_measurements:
            out.append(ctx.table("operating-measurements", MEASUREMENT_HEADERS, measurement_rows(s),
                                 caption=f"Max / Mid / Min: each point's own pre-write ({s.PREWRITE}) at its TC/QD, "
                                         "then a logged measurement at the test's mix (the histograms below)"))
        own = {k: op_bins(ctx, k) for k, _ in chosen}
        fig = ctx.figure((min(4.2 * len(chosen), 12.6), 4.2))
        for i, (k, p) in enumerate(chosen):
            ax = fig.add_subplot(1, len(chosen), i + 1)
            b = own[k] or bins.get(p.name) or {}
            if split_rw:
                histogram(ax, b.get("read"), "read", "#1f77b4")
                histogram(ax, b.get("write"), "write", "#d62728")
            else:
                histogram(ax, b.get("all"), "all I/Os", "#1f77b4")
            m = s.operating_measurements.get(k) if own[k] else None   # figures of what the histogram shows
            mean = m.lat_mean_us if m is not None and m.lat_mean_us is not None else p.lat_mean_us
            iops = m.iops if m is not None else p.iops
            ax.axvline(mean, color="#555555", linestyle="--", linewidth=1, label=f"mean {mean:,.1f} µs")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(f"{OP_STYLE[k][0]}: TC{p.tc}/QD{p.qd}, {iops:,.0f} IOPS", fontsize=8)
            ax.set_xlabel("response time (µs)")
            ax.set_ylabel("I/Os per bin (count)")
            ax.legend(loc="best", fontsize=6.5, framealpha=0.85)
        what = "reads vs writes" if split_rw else "all I/Os"
        source = ("Each point's own measurement period after its pre-write (merged fio json+ histograms)"
                  if all(own.values()) else f"Measurement-window rounds ({len(window)}) merged")
        out.append(ctx.plot(fig, "histograms", f"response-time histograms, Max / Mid / Min, {what}",
                            f"{source}; 20 bins per decade."))
    return Markup("").join(out)


def parts(ctx: SectionContext) -> Markup:
    """Several drives at once: every point of every drive, recomputed from the stored window rounds."""
    s: DemandSummary = ctx.summary
    window = s.steady.window_rounds
    if not s.points or not window:
        return Markup("")
    rounds = [r for r in ctx.rounds("") if r.round in set(window)]
    if not rounds or not any(c.parts for r in rounds for c in r.cells):
        return Markup("")
    cells = window_summary(rounds, window)
    labels = ordered_part_labels(ctx.run, {p for c in cells.values() for p in c.parts})
    ops = op_of(s)
    rows = []
    for p in s.points:
        parts_ = cells[p.name].parts if p.name in cells else {}
        for label in labels:
            c = parts_.get(label)
            if c is None:
                continue
            rows.append([p.name, Cell(None, ops.get(p.name, "")), p.tc, p.qd, label, c.iops, c.lat_mean_us,
                         c.lat_max_us, c.read_lat.p("99.99") if c.read_lat else None,
                         c.write_lat.p("99.99") if c.write_lat else None])
    if not rows:
        return Markup("")
    return Markup("").join([
        Markup("<h3>Demand intensity per drive (measurement-window averages)</h3>"), drives_intro(labels),
        ctx.table("drives", ["Point", "Operating point", "TC", "QD", "Drive", "IOPS", "Mean latency (µs)",
                             "Max latency (µs)", "Read p99.99 (µs)", "Write p99.99 (µs)"], rows,
                  caption="Every TC × QD point of every drive; operating points are the aggregate's")])


def compare(ctx: CompareContext) -> Markup:
    """Latency vs IOPS per shared TC (one panel per TC, one line per run); operating points side by side."""
    per = [{p.name: p for p in v.summary.points} for v in ctx.views]
    names = [n for n in per[0] if all(n in p for p in per[1:])]
    if not names:
        return Markup('<p class="warn">The runs share no TC × QD point.</p>')
    tcs = sorted({per[0][n].tc for n in names}, reverse=True)
    panels = []
    for tc in tcs:
        ns = sorted((n for n in names if per[0][n].tc == tc), key=lambda n: per[0][n].qd)
        panels.append((f"TC {tc}", {v.label: ([p[n].iops for n in ns], [p[n].lat_mean_us for n in ns])
                                    for v, p in zip(ctx.views, per)}))
    fig = ctx.figure((11.0, 3.4 * ((len(panels) + 3) // 4) + 0.9))
    plots.small_multiples(fig, panels, "IOPS (log scale)", "mean latency (µs, log scale)", logy=True)
    for ax in fig.axes:
        log_x(ax)
    out = [ctx.plot(fig, "latency-vs-iops", "mean latency vs IOPS per TC, one line per run")]
    keys = [(per[0][n].tc, per[0][n].qd) for n in names]
    out.append(ctx.side_by_side("iops", keys, [[p[n].iops for p in per] for n in names], ["TC", "QD"], "IOPS",
                                caption="IOPS per point; Δ relative to the first run"))
    out.append(ctx.side_by_side("latency", keys, [[p[n].lat_mean_us for p in per] for n in names], ["TC", "QD"],
                                "mean µs", caption="Mean latency per point (µs); Δ relative to the first run "
                                                   "(lower is better)"))
    rows = []
    for v in ctx.views:
        s: DemandSummary = v.summary
        row = [v.label]
        for _, n in s.operating_points.items():
            p = s.point(n)
            row += [f"TC{p.tc}/QD{p.qd}" if p else "–", p.iops if p else None, p.lat_mean_us if p else None]
        rows.append(row)
    hdr = ["Run"] + [f"{OP_STYLE[k][0]} {what}" for k in OP_ORDER for what in ("point", "IOPS", "mean latency (µs)")]
    out.append(ctx.table("operating-points", hdr, rows, caption="Operating points per run"))
    out.append(stat_compare(ctx, [(v.label, v.summary.points) for v in ctx.views], "latency-stats",
                            "mean, p99, p99.9, p99.99, max"))
    return Markup("").join(out)


def text(s: DemandSummary, clock: Clock) -> list[str]:
    lines = [f"  preconditioning ({s.PREWRITE} at the largest TC/QD):"] + s.preconditioning.text_lines("    ")
    lines.append(f"  {'TC':>3} {'QD':>4} {'IOPS':>11} {'mean µs':>9} {'max µs':>9}  point")
    for p in s.points:
        mark = ", ".join(k for k, n in s.operating_points.items() if n == p.name)
        lines.append(f"  {p.tc:>3} {p.qd:>4} {p.iops:>11,.0f} {p.lat_mean_us:>9.1f} {p.lat_max_us:>9.1f}  {mark}")
    if s.operating_measurements:
        lines.append("  operating points, own pre-write then logged measurement:")
        for k in OP_ORDER:
            m = s.operating_measurements.get(k)
            if m is None:
                continue
            mean = "–" if m.lat_mean_us is None else f"{m.lat_mean_us:.1f}"
            lines.append(f"  {OP_STYLE[k][0]:>4} TC{m.tc}/QD{m.qd}: pre-write {m.prewrite_seconds:g} s, measured "
                         f"{m.measure_seconds:g} s, {m.iops:,.0f} IOPS, mean {mean} µs, max {m.lat_max_us:.1f} µs")
    return lines


def headline(s: DemandSummary, test: str) -> list[Headline]:
    """IOPS of the Max / Mid / Min operating points, and the mean latency at Max."""
    out = []
    for k, n in s.operating_points.items():
        p = s.point(n)
        if p is None:
            continue
        out.append(Headline(f"{test}_{k}_iops", f"{test.upper()} {OP_STYLE[k][0]} operating point "
                            f"(TC{p.tc}/QD{p.qd}) IOPS", p.iops, "IOPS", s.steady.reached))
        if k == "max":
            out.append(Headline(f"{test}_max_lat_mean_us", f"{test.upper()} Max operating point mean latency",
                                p.lat_mean_us, "µs", s.steady.reached))
    return out


# --- latency statistics vs IOPS (the reviewers' charts: seeds 000 and 003), shared with lat-iops -----------------

STATS = (("mean", "mean"), ("p99", "99"), ("p99.9", "99.9"), ("p99.99", "99.99"), ("max", "max"))
QD_MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*", "h", "<", ">")
TC_STYLES = ("-", "--", ":", "-.")


stat_us = latency_stat     # one statistic of a direction's latency (µs), as the summaries read it


def direction_lat(p: DemandPoint, direction: str) -> Latency | None:
    return p.read_lat if direction == "read" else p.write_lat


def directions_of(points: Sequence[DemandPoint]) -> list[str]:
    """The directions with I/Os at any point: a mixed sweep is charted per direction."""
    return [d for d in ("read", "write") if any(direction_lat(p, d) is not None for p in points)]


def _scale(ax, axis: str, values: Sequence[float]) -> bool:
    """x: linear from zero (a saturated sweep then stands near-vertical instead of zig-zagging over an autoscaled
    26k..28k); y: logarithmic (labelled 1k, 20k, 1M) where the values span more than a decade, else linear from
    zero. Returns whether the axis is logarithmic, for its label to say so."""
    pos = [v for v in values if v and v > 0]
    if axis == "y" and pos and max(pos) / min(pos) > 10:
        plots.log_y(ax)
        return True
    if axis == "x":
        ax.set_xlim(left=0)
    else:
        ax.set_ylim(bottom=0)
    (ax.xaxis if axis == "x" else ax.yaxis).set_major_formatter(plots.thousands_formatter())
    return False


# a line of a statistics figure: (colour, line style, its points); a legend: (title, [(label, colour, style,
# marker)])
StatLine = tuple[str, str, list[DemandPoint]]
StatLegend = tuple[str, list[tuple[str, str, str, str]]]


def stat_panels(fig, lines: Sequence[StatLine], direction: str, qds: Sequence[int],
                legends: Sequence[StatLegend]) -> None:
    """Five panels (mean, p99, p99.9, p99.99, max latency of `direction` vs IOPS), a marker shape per QD, and
    a sixth panel holding the legends: `legends` on top, the QD markers below."""
    from matplotlib.lines import Line2D

    marker = {qd: QD_MARKERS[i % len(QD_MARKERS)] for i, qd in enumerate(sorted(qds))}
    for i, (title, stat) in enumerate(STATS):
        ax = fig.add_subplot(2, 3, i + 1)
        xs, ys = [], []
        for color, style, points in lines:
            xy = [(p.iops, v, p.qd) for p in sorted(points, key=lambda p: p.qd)
                  if (v := stat_us(direction_lat(p, direction), stat)) is not None]
            if not xy:
                continue
            ax.plot([x for x, _, _ in xy], [y for _, y, _ in xy], linestyle=style, linewidth=1.3, color=color)
            for x, y, qd in xy:
                ax.plot([x], [y], linestyle="none", marker=marker[qd], markersize=4, color=color)
            xs += [x for x, _, _ in xy]
            ys += [y for _, y, _ in xy]
        _scale(ax, "x", xs)
        log = _scale(ax, "y", ys)
        ax.set_title(f"{title} {direction} latency", fontsize=8)
        ax.set_xlabel("IOPS (read + write), linear from 0", fontsize=7)
        ax.set_ylabel(f"{title} latency (µs{', log scale' if log else ''})", fontsize=7)
        ax.tick_params(which="both", labelsize=6.5)
        ax.grid(True, which="major", alpha=0.3)
    box = fig.add_subplot(2, 3, 6)
    box.axis("off")
    groups = list(legends) + [("queue depth (marker)", [(f"QD {q}", "#555555", "none", marker[q])
                                                        for q in sorted(qds)])]
    anchors = [(0.0, 1.0, "upper left"), (0.0, 0.0, "lower left"), (1.0, 0.0, "lower right")]
    if len(groups) == 2:
        anchors = [(0.0, 1.0, "upper left"), (1.0, 1.0, "upper right")]
    for (title, entries), (x, y, loc) in zip(groups, anchors):
        handles = [Line2D([], [], color=c, linestyle=st, marker=m, label=label) for label, c, st, m in entries]
        box.add_artist(box.legend(handles=handles, loc=loc, bbox_to_anchor=(x, y), fontsize=6.5, title=title,
                                  title_fontsize=7, frameon=False))


def stat_figures(ctx: SectionContext, points: Sequence[DemandPoint], key: str, what: str) -> Markup:
    """A run's family of latency-vs-IOPS charts: one figure per direction, one line per TC."""
    out = []
    qds = sorted({p.qd for p in points})
    groups = by_tc(list(points))
    colors = {tc: f"C{i % 10}" for i, tc in enumerate(groups)}
    legend = [("thread count (line)", [(f"TC {tc}", colors[tc], "-", "") for tc in sorted(groups)])]
    for d in directions_of(points):
        fig = ctx.figure((11.0, 6.6))
        stat_panels(fig, [(colors[tc], "-", ps) for tc, ps in groups.items()], d, qds, legend)
        out.append(ctx.plot(fig, f"{key}-{d}", f"{what}: {d} latency vs IOPS",
                            f"{d.capitalize()} latency of each point (mean of the measurement window); one line "
                            "per thread count (TC), one marker shape per queue depth (QD); x: IOPS of the point, "
                            "reads + writes."))
    return Markup("").join(out)


def shown_tcs(tcs: Sequence[int]) -> list[int]:
    """The TCs a cross-run overlay draws: all up to three, else the smallest, a middle and the largest."""
    t = sorted(set(tcs))
    return t if len(t) <= 3 else [t[0], t[len(t) // 2], t[-1]]


def stat_compare(ctx: CompareContext, runs: Sequence[tuple[str, Sequence[DemandPoint]]], key: str,
                 what: str) -> Markup:
    """The family overlaid across runs: one colour per run, one line style per TC (the TCs every run has; at
    most three, see `shown_tcs`), one figure per direction."""
    shared = set.intersection(*({(p.tc, p.qd) for p in ps} for _, ps in runs)) if runs else set()
    if not shared:
        return Markup(f'<p class="warn">{escape(what)}: the runs share no TC × QD point.</p>')
    tcs = shown_tcs([tc for tc, _ in shared])
    qds = sorted({qd for _, qd in shared})
    colors = [f"C{i % 10}" for i in range(len(runs))]
    styles = {tc: TC_STYLES[j % len(TC_STYLES)] for j, tc in enumerate(tcs)}
    legends = [("run (colour)", [(textwrap.fill(label, 34), colors[i], "-", "")
                                 for i, (label, _) in enumerate(runs)]),
               ("thread count (line style)", [(f"TC {tc}", "#555555", styles[tc], "") for tc in tcs])]
    out = []
    for d in directions_of([p for _, ps in runs for p in ps]):
        lines = [(colors[i], styles[tc], [p for p in ps if p.tc == tc and (p.tc, p.qd) in shared])
                 for i, (_, ps) in enumerate(runs) for tc in tcs]
        fig = ctx.figure((11.0, 6.6))
        stat_panels(fig, lines, d, qds, legends)
        hidden = sorted({tc for tc, _ in shared} - set(tcs))
        out.append(ctx.plot(fig, f"{key}-{d}", f"{what}: {d} latency vs IOPS, runs overlaid",
                            f"One colour per run, one line style per TC ({', '.join(f'TC {t}' for t in tcs)}"
                            + (f"; TC {', '.join(map(str, hidden))} left out for readability, in the tables"
                               if hidden else "")
                            + "), one marker shape per QD; only the TC × QD points every run has."))
    return Markup("").join(out)
