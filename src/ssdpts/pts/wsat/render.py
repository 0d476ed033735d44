"""WSAT renderers: report section, per-drive part, comparison, text for `show`, headline figures.

Per workload: IOPS vs time and vs TGBW (top axis: drive fills), each linear and log; latency median
(runs stored before it was measured have none), mean, p99, p99.9, p99.99 and max vs time; a results
table (fresh and final IOPS, ratio, TGBW, fills, stop reason) and every interval in a collapsible table.
Compare: IOPS, and mean, p99.99 and max latency, vs time and TGBW, one series per run.
"""

from __future__ import annotations

from typing import Callable

from markupsafe import Markup, escape

from ...clock import Clock
from ...render import plots
from ...render.context import CompareContext, SectionContext
from ...render.drives import drives_intro, ordered_part_labels
from ...render.toolkit import Cell, notes_html
from ...units import bs_label
from ..spec import Headline, Renderers
from .run import WORKLOADS
from .summary import WsatInterval, WsatSummary, WsatWorkload

# (label, value of an interval) of the latency series drawn vs time, lowest first
LAT_SERIES: tuple[tuple[str, Callable[[WsatInterval], float | None]], ...] = (
    ("median", lambda x: x.percentiles_us.get("50")), ("mean", lambda x: x.lat_mean_us),
    ("p99", lambda x: x.percentiles_us.get("99")),
    ("p99.9", lambda x: x.percentiles_us.get("99.9")), ("p99.99", lambda x: x.percentiles_us.get("99.99")),
    ("max", lambda x: x.lat_max_us))


def time_axis(seconds: list[float]) -> tuple[float, str]:
    """(divisor, unit) for a time axis: seconds up to 2 min, minutes up to 2 h, then hours."""
    top = max(seconds, default=0.0)
    if top >= 7200:
        return 3600.0, "h"
    if top >= 120:
        return 60.0, "min"
    return 1.0, "s"


def lin_log(fig, series: dict, xlabel: str, ylabel: str, secondary=None, styles: dict | None = None) -> list:
    """Two panels side by side with the same series: linear y (from 0) and log y."""
    from matplotlib.ticker import FuncFormatter
    axes = []
    for i, title in enumerate(("linear scale", "log scale")):
        ax = fig.add_subplot(1, 2, i + 1)
        many = max((len(x) for x, _ in series.values()), default=0) > 60
        for label, (x, y) in series.items():
            st = dict(marker=None if many else "o", markersize=3, linewidth=1.2)
            st.update((styles or {}).get(label, {}))
            ax.plot(x, y, label=label, **st)
        if i == 0:
            ax.set_ylim(bottom=0)
            ax.yaxis.set_major_formatter(FuncFormatter(plots._thousands))
        else:
            plots.log_y(ax)
        if secondary is not None:   # (forward, inverse): a second x scale on top, named in xlabel
            sec = ax.secondary_xaxis("top", functions=secondary)
            sec.tick_params(labelsize=7)
            ax.set_title(" ")      # makes the report leave room above the axes for the top scale
        ax.set_xlabel(xlabel)
        ax.set_ylabel(f"{ylabel} ({title})")
        if series:
            ax.legend(loc="best", fontsize=7, framealpha=0.85)
        axes.append(ax)
    return axes


def _lat_series(series: list[WsatInterval]) -> list[tuple[str, Callable[[WsatInterval], float | None]]]:
    """The latency statistics present in at least one interval."""
    return [(lab, get) for lab, get in LAT_SERIES if any(get(x) is not None for x in series)]


def workload_rows(workloads: dict[str, WsatWorkload]) -> list[list]:
    """The results table: one row per WSAT workload, values exactly as stored."""
    rows = []
    for name, w in workloads.items():
        ratio = w.final_over_fresh
        ss = w.steady_state_of_last_window
        rows.append([name, w.fresh_iops, w.final_iops, Cell(ratio, "–" if ratio is None else f"{ratio:.3f}"),
                     w.tgbw_gb, Cell(w.fills, f"{w.fills:.3f}"), w.elapsed_s, w.rounds, w.stop_reason,
                     Cell(bool(ss and ss.reached), "–" if ss is None else "yes" if ss.reached else "no"),
                     Cell(w.saturation.how, w.saturation.how, "ok" if w.saturation.reached else "bad")])
    return rows


WORKLOAD_HEADERS = ["Workload", "Fresh IOPS (FOB, first interval)", "Final IOPS (mean of last 5 intervals)",
                    "Final / fresh", "TGBW (GB)", "Drive fills", "Elapsed (s)", "Intervals", "Stop reason",
                    "Last 5 intervals steady", "Saturation (the spec's stop: 4 fills or 24 h)"]


def describe(name: str) -> str:
    """'rnd4k-write (RND 4K 0/100)': a workload's name and access pattern."""
    rw, bs, read = WORKLOADS.get(name, ("?", 0, 0))
    return f"{name} ({'RND' if rw.startswith('rand') else 'SEQ'} {bs_label(bs) if bs else 'mixed BS'} " \
           f"{read}/{100 - read})"


def html(ctx: SectionContext) -> Markup:
    s: WsatSummary = ctx.summary
    out = notes_html(s.notes)
    if not s.workloads:
        return Markup("").join(out) + Markup('<p class="warn">No WSAT workload in the summary.</p>')
    out.append(Markup("<h3>Results</h3>"))
    out.append(ctx.table("summary", WORKLOAD_HEADERS, workload_rows(s.workloads),
                         caption="WSAT per workload: fresh-out-of-box vs final IOPS, total GB written "
                                 "(10^9 bytes) and drive fills at the end, why the test stopped, and whether the drive "
                                 "saturated: the spec's stop, or levelled off after leaving its fresh level"))
    for name, w in s.workloads.items():
        series = w.series
        if not series:
            out.append(Markup(f'<p class="warn">{escape(name)}: no intervals stored.</p>'))
            continue
        out.append(Markup(f"<h3>{escape(describe(name))}</h3>"))
        out.append(Markup(f'<p class="note">Purge: {escape(w.purge.method)}'
                          f'{"" if w.purge.snia_purge else " (not a SNIA purge)"}; '
                          f'then {len(series)} intervals of {s.round_time_s:g} s, one continuous job, '
                          f'stopped by: {escape(w.stop_reason)}.</p>'))
        div, unit = time_axis([x.elapsed_s for x in series])
        t = [x.elapsed_s / div for x in series]
        iops = [x.iops for x in series]
        tgbw = [x.tgbw_gb for x in series]
        style = {"IOPS": {"color": "#1f77b4"}}
        fig = ctx.figure((10.0, 4.2))
        lin_log(fig, {"IOPS": (t, iops)}, f"time ({unit})", "IOPS", styles=style)
        out.append(ctx.plot(fig, f"{name}-iops-vs-time", f"{name}: IOPS vs time",
                            f"IOPS of every {s.round_time_s:g} s interval, linear and log."))
        sec = None
        if s.capacity_bytes:
            gb = s.capacity_bytes / 1e9
            sec = (lambda v, gb=gb: v / gb, lambda v, gb=gb: v * gb)
        fig = ctx.figure((10.0, 4.4))
        lin_log(fig, {"IOPS": (tgbw, iops)}, "TGBW (GB written, 10^9 B)"
                + (" · top: drive fills" if sec else ""), "IOPS", secondary=sec, styles=style)
        out.append(ctx.plot(fig, f"{name}-iops-vs-tgbw", f"{name}: IOPS vs TGBW and drive fills",
                            "Bottom axis: total GB written; top axis: the same as drive fills (TGBW / capacity)."))
        stats = _lat_series(series)
        if stats:
            lat = {lab: ([tt for tt, x in zip(t, series) if get(x) is not None],
                         [get(x) for x in series if get(x) is not None]) for lab, get in stats}
            fig = ctx.figure()
            plots.series_plot(fig, lat, f"time ({unit})", "latency (µs)", logy=True, markers=len(t) <= 60)
            out.append(ctx.plot(fig, f"{name}-latency-vs-time", f"{name}: latency vs time",
                                "Median, mean, percentiles (per interval, from fio) and maximum latency."))
        rows = [[i, x.elapsed_s, x.iops, x.mib_s, x.tgbw_gb, x.fills] + [get(x) for _, get in stats]
                for i, x in enumerate(series, start=1)]
        tab = ctx.table(f"{name}-intervals", ["Interval", "Elapsed (s)", "IOPS", "MiB/s", "TGBW (GB)", "Drive fills"]
                        + [f"{lab} latency (µs)" for lab, _ in stats], rows,
                        caption=f"{name}: every interval as stored")
        out.append(Markup(f"<details><summary>All intervals ({len(rows)})</summary>{tab}</details>"))
    return Markup("").join(out)


def parts(ctx: SectionContext) -> Markup:
    """Several drives at once: per workload and drive, fresh and final IOPS and latency of the stored intervals."""
    s: WsatSummary = ctx.summary
    rows = []
    found: set[str] = set()
    for name in s.workloads:
        by: dict = {}
        for r in ctx.rounds(name):
            for c in r.cells:
                for label, p in c.parts.items():
                    found.add(label)
                    by.setdefault(label, []).append(p)
        for label in ordered_part_labels(ctx.run, by):
            vals = by[label]
            tail = [p.iops for p in vals[-5:]]
            n = sum(p.read.ios + p.write.ios for p in vals)
            mean = sum(p.lat_mean_ns * (p.read.ios + p.write.ios) for p in vals) / n / 1000 if n else None
            rows.append([name, label, len(vals), vals[0].iops, sum(tail) / len(tail), mean,
                         max(p.lat_max_ns for p in vals) / 1000])
    if not rows:
        return Markup("")
    return Markup("").join([
        Markup("<h3>WSAT per drive</h3>"), drives_intro(ordered_part_labels(ctx.run, found)),
        ctx.table("drives", ["Workload", "Drive", "Intervals", "Fresh IOPS", "Final IOPS (last 5)",
                             "Mean latency (µs)", "Max latency (µs)"], rows,
                  caption="Per workload and drive: first interval, mean of the last 5 intervals, latency")])


def compare(ctx: CompareContext) -> Markup:
    """IOPS vs TGBW per shared workload (one series per run, linear and log); results side by side."""
    per: list[dict[str, WsatWorkload]] = [v.summary.workloads for v in ctx.views]
    names = [n for n in per[0] if all(n in p for p in per[1:])]
    if not names:
        return Markup('<p class="warn">The runs share no WSAT workload.</p>')
    out = []
    for name in names:
        series = {v.label: ([x.tgbw_gb for x in p[name].series], [x.iops for x in p[name].series])
                  for v, p in zip(ctx.views, per)}
        fig = ctx.figure((10.0, 4.2))
        lin_log(fig, series, "total GB written, TGBW (10^9 bytes)", "IOPS")
        out.append(ctx.plot(fig, f"{name}-iops-vs-tgbw", f"{name}: IOPS vs TGBW, one series per run"))
        div, unit = time_axis([x.elapsed_s for p in per for x in p[name].series])
        series = {v.label: ([x.elapsed_s / div for x in p[name].series], [x.iops for x in p[name].series])
                  for v, p in zip(ctx.views, per)}
        fig = ctx.figure((10.0, 4.2))
        lin_log(fig, series, f"time ({unit})", "IOPS")
        out.append(ctx.plot(fig, f"{name}-iops-vs-time", f"{name}: IOPS vs time, one series per run"))
        out.append(_compare_latency(ctx, name, [p[name] for p in per], div, unit))
    keys, vals = [], []
    quantities: tuple[tuple[str, Callable[[WsatWorkload], float | None]], ...] = (
        ("fresh IOPS", lambda w: w.fresh_iops), ("final IOPS", lambda w: w.final_iops),
        ("TGBW (GB)", lambda w: w.tgbw_gb), ("drive fills", lambda w: w.fills),
        ("final / fresh", lambda w: w.final_over_fresh))
    for name in names:
        for lab, get in quantities:
            keys.append((name, lab))
            vals.append([get(p[name]) for p in per])
    out.append(ctx.side_by_side("summary", keys, vals, ["Workload", "Quantity"], "value",
                                caption="WSAT results per run; Δ relative to the first run"))
    return Markup("").join(out)


# the latency statistics compare overlays across runs (a periodic spike next to a calm drive: seed 004)
COMPARE_LAT = ("mean", "p99.99", "max")


def _compare_latency(ctx: CompareContext, name: str, workloads: list[WsatWorkload], div: float, unit: str) -> Markup:
    """Per statistic: latency vs time and vs TGBW, one series per run (log y: spikes of 100x stay readable)."""
    out = []
    for lab, get in LAT_SERIES:
        if lab not in COMPARE_LAT:
            continue
        for axis, xlabel, x_of in (("time", f"time ({unit})", lambda x: x.elapsed_s / div),
                                   ("tgbw", "total GB written, TGBW (10^9 bytes)", lambda x: x.tgbw_gb)):
            series = {v.label: ([x_of(x) for x in w.series if get(x) is not None],
                                [get(x) for x in w.series if get(x) is not None])
                      for v, w in zip(ctx.views, workloads)}
            series = {k: xy for k, xy in series.items() if xy[0]}
            if not series:
                continue
            fig = ctx.figure()
            plots.series_plot(fig, series, xlabel, f"{lab} latency (µs)", logy=True,
                              markers=max(len(x) for x, _ in series.values()) <= 60)
            out.append(ctx.plot(fig, f"{name}-latency-{lab.replace('.', '_')}-vs-{axis}",
                                f"{name}: {lab} latency vs {'time' if axis == 'time' else 'TGBW'}, one series per run"))
    return Markup("").join(out)


def text(s: WsatSummary, clock: Clock) -> list[str]:
    lines = []
    for name, w in s.workloads.items():
        lines.append(f"  {name}: purge {w.purge.method}{'' if w.purge.snia_purge else ' (not a SNIA purge)'}")
        lines.append(f"    {w.rounds} rounds, {w.tgbw_gb:.2f} GB written ({w.fills:.2f} fills), "
                     f"stopped: {w.stop_reason}")
        lines.append(f"    fresh {w.fresh_iops:,.0f} IOPS -> final {w.final_iops:,.0f} IOPS")
        lines.append(f"    saturation {w.saturation.how}")
    return lines


def headline(s: WsatSummary) -> list[Headline]:
    """Per workload: fresh-out-of-box and final IOPS (not steady-state figures)."""
    out = []
    for name, w in s.workloads.items():
        key = name.replace("-", "_")
        out.append(Headline(f"wsat_{key}_fresh_iops", f"WSAT {name} fresh IOPS (first interval)", w.fresh_iops, "IOPS"))
        out.append(Headline(f"wsat_{key}_final_iops", f"WSAT {name} final IOPS (mean of last 5 intervals)",
                            w.final_iops, "IOPS", unreached="" if w.saturation.reached else f"not reached: {w.wrote}"))
    return out


RENDERERS = Renderers(html=html, parts=parts, compare=compare, text=text, headline=headline)
