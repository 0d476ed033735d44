"""WSAT report and compare sections (see pts/wsat.py for what the summary holds).

Per workload: IOPS vs time and vs TGBW (top axis: drive fills), each linear and log; latency mean,
p99, p99.9, p99.99 and max vs time; a results table (fresh and final IOPS, ratio, TGBW, fills,
stop reason) and every interval in a collapsible table. Matplotlib is only imported when rendering.
"""

from __future__ import annotations

# (tracking key, label) of the latency series drawn vs time, lowest first
LAT_SERIES = (("lat_mean_us", "mean"), ("p99_us", "p99"), ("p99.9_us", "p99.9"), ("p99.99_us", "p99.99"),
              ("lat_max_us", "max"))


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

    from ..report import plots

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


def _pct_keys(series: list[dict]) -> list[tuple[str, str]]:
    present = {k for s in series for k in s}
    return [(k, lab) for k, lab in LAT_SERIES if k in present]


def workload_rows(workloads: dict) -> list[list]:
    """The results table: one row per WSAT workload, values exactly as stored."""
    from ..report.toolkit import Cell

    rows = []
    for name, w in workloads.items():
        fresh, final = w.get("fresh_iops"), w.get("final_iops")
        ratio = final / fresh if fresh else None
        ss = w.get("steady_state_of_last_window") or {}
        rows.append([name, fresh, final, Cell(ratio, "–" if ratio is None else f"{ratio:.3f}"),
                     w.get("tgbw_gb"), Cell(w.get("fills"), f"{w.get('fills', 0.0):.3f}"),
                     w.get("elapsed_s"), w.get("rounds"), w.get("stop_reason", "–"),
                     Cell(bool(ss.get("reached")), "–" if not ss else "yes" if ss.get("reached") else "no")])
    return rows


WORKLOAD_HEADERS = ["Workload", "Fresh IOPS (FOB, first interval)", "Final IOPS (mean of last 5 intervals)",
                    "Final / fresh", "TGBW (GB)", "Drive fills", "Elapsed (s)", "Intervals", "Stop reason",
                    "Last 5 intervals steady"]


def report_section(ctx) -> str:
    if not ctx.summary.get("workloads"):   # an older or foreign summary: the core's generic section
        from ..report.core import generic_section

        return generic_section(ctx)
    from markupsafe import Markup, escape

    from ..report import plots
    from ..units import bs_label
    from .wsat import WORKLOADS

    s = ctx.summary
    workloads = s.get("workloads") or {}
    cap = s.get("capacity_bytes") or 0
    html = [Markup(f'<p class="note">{escape(n)}</p>') for n in s.get("notes", []) if isinstance(n, str)]
    if not workloads:
        return Markup('<p class="warn">No WSAT workload in the summary.</p>')
    html.append(Markup("<h3>Results</h3>"))
    html.append(ctx.table("summary", WORKLOAD_HEADERS, workload_rows(workloads),
                          caption="WSAT per workload: fresh-out-of-box vs final IOPS, total GB written "
                                  "(10^9 bytes) and drive fills at the end, and why the test stopped"))
    from ..report.parts import wsat_parts

    html.append(wsat_parts(ctx, s))   # several drives at once, when the intervals carry parts (else nothing)
    for name, w in workloads.items():
        series = w.get("series") or []
        if not series:
            html.append(Markup(f'<p class="warn">{escape(name)}: no intervals stored.</p>'))
            continue
        rw, bs, read = WORKLOADS.get(name, ("?", 0, 0))
        what = f"{name} ({'RND' if rw.startswith('rand') else 'SEQ'} {bs_label(bs) if bs else 'mixed BS'} " \
               f"{read}/{100 - read})"
        html.append(Markup(f"<h3>{escape(what)}</h3>"))
        purge = w.get("purge") or {}
        if purge:
            html.append(Markup(f'<p class="note">Purge: {escape(str(purge.get("method")))}'
                               f'{"" if purge.get("snia_purge") else " (not a SNIA purge)"}; '
                               f'then {len(series)} intervals of {s.get("round_time_s", 0):g} s, one continuous job, '
                               f'stopped by: {escape(str(w.get("stop_reason")))}.</p>'))
        secs = [x.get("elapsed_s", 0.0) for x in series]
        div, unit = time_axis(secs)
        t = [x / div for x in secs]
        iops = [x.get("iops", 0.0) for x in series]
        tgbw = [x.get("tgbw_gb", 0.0) for x in series]
        style = {"IOPS": {"color": "#1f77b4"}}
        fig = ctx.figure((10.0, 4.2))
        lin_log(fig, {"IOPS": (t, iops)}, f"time ({unit})", "IOPS", styles=style)
        html.append(ctx.plot(fig, f"{name}-iops-vs-time", f"{name}: IOPS vs time",
                             f"IOPS of every {s.get('round_time_s', 0):g} s interval, linear and log."))
        sec = None
        if cap:
            gb = cap / 1e9
            sec = (lambda v, gb=gb: v / gb, lambda v, gb=gb: v * gb)
        fig = ctx.figure((10.0, 4.4))
        lin_log(fig, {"IOPS": (tgbw, iops)}, "TGBW (GB written, 10^9 B)"
                + (" · top: drive fills" if sec else ""), "IOPS", secondary=sec, styles=style)
        html.append(ctx.plot(fig, f"{name}-iops-vs-tgbw", f"{name}: IOPS vs TGBW and drive fills",
                             "Bottom axis: total GB written; top axis: the same as drive fills (TGBW / capacity)."))
        keys = _pct_keys(series)
        if keys:
            lat = {lab: ([tt for tt, x in zip(t, series) if x.get(k) is not None],
                         [x[k] for x in series if x.get(k) is not None]) for k, lab in keys}
            fig = ctx.figure()
            plots.series_plot(fig, lat, f"time ({unit})", "latency (µs)", logy=True, markers=len(t) <= 60)
            html.append(ctx.plot(fig, f"{name}-latency-vs-time", f"{name}: latency vs time",
                                 "Mean, percentiles (per interval, from fio) and maximum latency."))
        rows = []
        for i, x in enumerate(series, start=1):
            rows.append([i, x.get("elapsed_s"), x.get("iops"), x.get("mib_s"), x.get("tgbw_gb"), x.get("fills")]
                        + [x.get(k) for k, _ in keys])
        tab = ctx.table(f"{name}-intervals", ["Interval", "Elapsed (s)", "IOPS", "MiB/s", "TGBW (GB)", "Drive fills"]
                        + [f"{lab} latency (µs)" for _, lab in keys], rows,
                        caption=f"{name}: every interval as stored")
        html.append(Markup(f"<details><summary>All intervals ({len(rows)})</summary>{tab}</details>"))
    return Markup("").join(html)


def compare_section(ctx) -> str:
    """IOPS vs TGBW per shared workload (one series per run, linear and log); results side by side."""
    if not all(v.summary.get("workloads") for v in ctx.views):
        from ..report.compare import generic_compare

        return generic_compare(ctx)
    from markupsafe import Markup

    per = [v.summary.get("workloads") or {} for v in ctx.views]
    names = [n for n in per[0] if all(n in p for p in per[1:])]
    if not names:
        return Markup('<p class="warn">The runs share no WSAT workload.</p>')
    html = []
    for name in names:
        series = {v.label: ([x.get("tgbw_gb", 0.0) for x in p[name].get("series") or []],
                            [x.get("iops", 0.0) for x in p[name].get("series") or []]) for v, p in zip(ctx.views, per)}
        fig = ctx.figure((10.0, 4.2))
        lin_log(fig, series, "total GB written, TGBW (10^9 bytes)", "IOPS")
        html.append(ctx.plot(fig, f"{name}-iops-vs-tgbw", f"{name}: IOPS vs TGBW, one series per run"))
        secs = [x.get("elapsed_s", 0.0) for p in per for x in p[name].get("series") or []]
        div, unit = time_axis(secs)
        series = {v.label: ([x.get("elapsed_s", 0.0) / div for x in p[name].get("series") or []],
                            [x.get("iops", 0.0) for x in p[name].get("series") or []]) for v, p in zip(ctx.views, per)}
        fig = ctx.figure((10.0, 4.2))
        lin_log(fig, series, f"time ({unit})", "IOPS")
        html.append(ctx.plot(fig, f"{name}-iops-vs-time", f"{name}: IOPS vs time, one series per run"))
    keys, vals = [], []
    for name in names:
        for key, lab in (("fresh_iops", "fresh IOPS"), ("final_iops", "final IOPS"), ("tgbw_gb", "TGBW (GB)"),
                         ("fills", "drive fills")):
            keys.append((name, lab))
            vals.append([p[name].get(key) for p in per])
        keys.append((name, "final / fresh"))
        vals.append([(p[name]["final_iops"] / p[name]["fresh_iops"]) if p[name].get("fresh_iops") else None
                     for p in per])
    html.append(ctx.side_by_side("summary", keys, vals, ["Workload", "Quantity"], "value",
                                 caption="WSAT results per run; Δ relative to the first run"))
    return Markup("").join(html)
