"""XSR report and compare sections (see pts/xsr.py for what the summary holds).

Throughput of every interval vs test time with the three access groups coloured, the group-1 average
and the recovery point; mean and max latency vs time; a table of group averages and the recovery time.
"""

from __future__ import annotations

GROUP_TEXT = {"g1": "Group 1: SEQ 1024K W", "g2": "Group 2: RND 8K W", "g3": "Group 3: SEQ 1024K W"}
COLOURS = {"g1": "#1f77b4", "g2": "#d62728", "g3": "#2ca02c"}


def offsets(view) -> dict[str, float]:
    """Start of each group on one time axis (s): the groups run back to back, so each starts where the
    previous one's stored intervals end (sum of their fio runtimes)."""
    out, t = {}, 0.0
    for g in ("g1", "g2", "g3"):
        out[g] = t
        t += sum(r.cells[0].runtime_ms for r in view.rounds(g) if r.cells) / 1000
    out["end"] = t
    return out


def group_rows(s: dict, view) -> list[list]:
    rows = []
    off = offsets(view)
    nxt = {"g1": "g2", "g2": "g3", "g3": "end"}
    for g, d in (s.get("groups") or {}).items():
        ser = d.get("series") or []
        rows.append([GROUP_TEXT.get(g, g), d.get("intervals"), off[nxt[g]] - off[g] if g in off else None,
                     d.get("mib_s_mean"), d.get("lat_mean_us"),
                     max((x.get("lat_max_us", 0.0) for x in ser), default=None)])
    return rows


GROUP_HEADERS = ["Access group", "Intervals", "Duration (s)", "Mean MiB/s", "Mean latency (µs)", "Max latency (µs)"]


def recovery_text(s: dict) -> str:
    if s.get("recovered") and s.get("recovery_s") is not None:
        return f"{s['recovery_s']:.1f} s after the start of group 3"
    return "not recovered"


def report_section(ctx) -> str:
    if not ctx.summary.get("groups"):   # an older or foreign summary: the core's generic section
        from ..report.core import generic_section

        return generic_section(ctx)
    from markupsafe import Markup, escape

    from ..report import plots
    from ..report.toolkit import Cell
    from .wsat_report import time_axis

    s = ctx.summary
    groups = s.get("groups") or {}
    html = [Markup(f'<p class="note">{escape(n)}</p>') for n in s.get("notes", []) if isinstance(n, str)]
    if not groups:
        return Markup('<p class="warn">No XSR access group in the summary.</p>')
    off = offsets(ctx)
    g1 = s.get("group1_average_mib_s")
    verdict = recovery_text(s)
    cls = "ok" if s.get("recovered") else "bad"
    html.append(Markup(f'<p class="ss {cls}">Recovery (first group-3 interval with throughput ≥ the group-1 average '
                       f'of {g1 or 0:,.1f} MiB/s): <strong>{escape(verdict)}</strong>.</p>'))
    html.append(ctx.table("groups", GROUP_HEADERS, group_rows(s, ctx),
                          caption="XSR access groups: averages over every interval"))
    rec_s = s.get("recovery_s") if s.get("recovered") else None
    html.append(ctx.table("recovery", ["Quantity", "Value"], [
        ["Group-1 average (MiB/s)", g1],
        ["Recovery time (s from the start of group 3)", Cell(rec_s, "not recovered" if rec_s is None else None)],
        ["Interval (s)", s.get("interval_s")],
    ], caption="Recovery: the start of the first group-3 interval whose throughput reaches the group-1 average"))
    div, unit = time_axis([off["end"]])
    thr, lat, styles = {}, {}, {}
    for g, d in groups.items():
        ser = d.get("series") or []
        x = [(off.get(g, 0.0) + p.get("start_s", 0.0)) / div for p in ser]
        thr[GROUP_TEXT.get(g, g)] = (x, [p.get("mib_s", 0.0) for p in ser])
        styles[GROUP_TEXT.get(g, g)] = {"color": COLOURS.get(g)}
        lat[f"{g} mean"] = (x, [p.get("lat_mean_us", 0.0) for p in ser])
        lat[f"{g} max"] = (x, [p.get("lat_max_us", 0.0) for p in ser])
        styles[f"{g} mean"] = {"color": COLOURS.get(g), "linestyle": "-"}
        styles[f"{g} max"] = {"color": COLOURS.get(g), "linestyle": ":", "marker": "^"}
    fig = ctx.figure((9.0, 4.4))
    plots.series_plot(fig, thr, f"test time ({unit})", "throughput (MiB/s)", ylim0=True, styles=styles)
    ax = fig.axes[0]
    if g1:
        ax.axhline(g1, color="#555555", linestyle="--", linewidth=1, label=f"group-1 average {g1:,.0f} MiB/s")
    if rec_s is not None:
        ax.axvline((off["g3"] + rec_s) / div, color="#2ca02c", linestyle="-.", linewidth=1,
                   label=f"recovered after {rec_s:.1f} s")
    ax.legend(loc="best", fontsize=7, framealpha=0.85)
    html.append(ctx.plot(fig, "throughput-vs-time", "throughput vs time, access groups",
                         "One point per interval at its start; " + verdict + "."))
    fig = ctx.figure((9.0, 4.4))
    plots.series_plot(fig, lat, f"test time ({unit})", "latency (µs)", logy=True, styles=styles)
    html.append(ctx.plot(fig, "latency-vs-time", "mean and maximum latency vs time, access groups"))
    rows = []
    for g, d in groups.items():
        for i, p in enumerate(d.get("series") or [], start=1):
            rows.append([g, i, p.get("start_s"), off.get(g, 0.0) + p.get("start_s", 0.0), p.get("mib_s"),
                         p.get("iops"), p.get("lat_mean_us"), p.get("lat_max_us")])
    tab = ctx.table("intervals", ["Group", "Interval", "Start in group (s)", "Test time (s)", "MiB/s", "IOPS",
                                  "Mean latency (µs)", "Max latency (µs)"], rows, caption="Every interval as stored")
    html.append(Markup(f"<details><summary>All intervals ({len(rows)})</summary>{tab}</details>"))
    return Markup("").join(html)


def compare_section(ctx) -> str:
    """Throughput vs time, one series per run; group averages and recovery side by side."""
    if not all(v.summary.get("groups") for v in ctx.views):
        from ..report.compare import generic_compare

        return generic_compare(ctx)
    from markupsafe import Markup

    from ..report import plots
    from .wsat_report import time_axis

    offs = [offsets(v) for v in ctx.views]
    div, unit = time_axis([o["end"] for o in offs])
    series = {}
    for v, off in zip(ctx.views, offs):
        xs, ys = [], []
        for g, d in (v.summary.get("groups") or {}).items():
            for p in d.get("series") or []:
                xs.append((off.get(g, 0.0) + p.get("start_s", 0.0)) / div)
                ys.append(p.get("mib_s", 0.0))
        series[v.label] = (xs, ys)
    fig = ctx.figure((9.0, 4.4))
    plots.series_plot(fig, series, f"test time ({unit})", "throughput (MiB/s)", ylim0=True)
    html = [ctx.plot(fig, "throughput-vs-time", "throughput vs time, one series per run")]
    keys, vals = [], []
    for g in ("g1", "g2", "g3"):
        keys.append((GROUP_TEXT[g], "mean MiB/s"))
        vals.append([((v.summary.get("groups") or {}).get(g) or {}).get("mib_s_mean") for v in ctx.views])
        keys.append((GROUP_TEXT[g], "mean latency (µs)"))
        vals.append([((v.summary.get("groups") or {}).get(g) or {}).get("lat_mean_us") for v in ctx.views])
    keys.append(("Recovery", "s after the start of group 3 (empty: not recovered)"))
    vals.append([v.summary.get("recovery_s") if v.summary.get("recovered") else None for v in ctx.views])
    html.append(ctx.side_by_side("groups", keys, vals, ["Group", "Quantity"], "value",
                                 caption="XSR per run; Δ relative to the first run"))
    return Markup("").join(html)
