"""XSR renderers: report section, comparison, text for `show`, headline figures.

Throughput of every interval vs test time with the three access groups coloured, the group-1 average
and the recovery point; mean and max latency vs time; a table of group averages and the recovery time.
"""

from __future__ import annotations

from markupsafe import Markup, escape

from ...clock import Clock
from ...render import plots
from ...render.context import CompareContext, RunView, SectionContext
from ...render.toolkit import Cell, notes_html
from ..spec import Headline, Renderers
from ..wsat.render import time_axis
from .summary import XsrSummary

GROUP_TEXT = {"g1": "Group 1: SEQ 1024K W", "g2": "Group 2: RND 8K W", "g3": "Group 3: SEQ 1024K W"}
COLOURS = {"g1": "#1f77b4", "g2": "#d62728", "g3": "#2ca02c"}


def offsets(view: RunView) -> dict[str, float]:
    """Start of each group on one time axis (s): the groups run back to back, so each starts where the
    previous one's stored intervals end (sum of their fio runtimes)."""
    out, t = {}, 0.0
    for g in ("g1", "g2", "g3"):
        out[g] = t
        t += sum(r.cells[0].runtime_ms for r in view.rounds(g) if r.cells) / 1000
    out["end"] = t
    return out


def group_rows(s: XsrSummary, view: RunView) -> list[list]:
    rows = []
    off = offsets(view)
    nxt = {"g1": "g2", "g2": "g3", "g3": "end"}
    for g, d in s.groups.items():
        rows.append([GROUP_TEXT.get(g, g), d.intervals, off[nxt[g]] - off[g] if g in nxt else None,
                     d.mib_s_mean, d.lat_mean_us, d.lat_max_us])
    return rows


GROUP_HEADERS = ["Access group", "Intervals", "Duration (s)", "Mean MiB/s", "Mean latency (µs)", "Max latency (µs)"]


def recovery_text(s: XsrSummary) -> str:
    if s.recovered and s.recovery_s is not None:
        return f"{s.recovery_s:.1f} s after the start of group 3"
    return "not recovered"


def html(ctx: SectionContext) -> Markup:
    s: XsrSummary = ctx.summary
    out = notes_html(s.notes)
    if not s.groups:
        return Markup("").join(out) + Markup('<p class="warn">No XSR access group in the summary.</p>')
    off = offsets(ctx)
    g1 = s.group1_average_mib_s
    verdict = recovery_text(s)
    cls = "ok" if s.recovered else "bad"
    out.append(Markup(f'<p class="ss {cls}">Recovery (first group-3 interval with throughput ≥ the group-1 average '
                      f'of {g1:,.1f} MiB/s): <strong>{escape(verdict)}</strong>.</p>'))
    out.append(ctx.table("groups", GROUP_HEADERS, group_rows(s, ctx),
                         caption="XSR access groups: averages over every interval"))
    rec_s = s.recovery_s if s.recovered else None
    out.append(ctx.table("recovery", ["Quantity", "Value"], [
        ["Group-1 average (MiB/s)", g1],
        ["Recovery time (s from the start of group 3)", Cell(rec_s, "not recovered" if rec_s is None else None)],
        ["Interval (s)", s.interval_s],
    ], caption="Recovery: the start of the first group-3 interval whose throughput reaches the group-1 average"))
    div, unit = time_axis([off["end"]])
    thr, lat, styles = {}, {}, {}
    for g, d in s.groups.items():
        x = [(off.get(g, 0.0) + p.start_s) / div for p in d.series]
        thr[GROUP_TEXT.get(g, g)] = (x, [p.mib_s for p in d.series])
        styles[GROUP_TEXT.get(g, g)] = {"color": COLOURS.get(g)}
        lat[f"{g} mean"] = (x, [p.lat_mean_us for p in d.series])
        lat[f"{g} max"] = (x, [p.lat_max_us for p in d.series])
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
    out.append(ctx.plot(fig, "throughput-vs-time", "throughput vs time, access groups",
                        "One point per interval at its start; " + verdict + "."))
    fig = ctx.figure((9.0, 4.4))
    plots.series_plot(fig, lat, f"test time ({unit})", "latency (µs)", logy=True, styles=styles)
    out.append(ctx.plot(fig, "latency-vs-time", "mean and maximum latency vs time, access groups"))
    rows = [[g, i, p.start_s, off.get(g, 0.0) + p.start_s, p.mib_s, p.iops, p.lat_mean_us, p.lat_max_us]
            for g, d in s.groups.items() for i, p in enumerate(d.series, start=1)]
    tab = ctx.table("intervals", ["Group", "Interval", "Start in group (s)", "Test time (s)", "MiB/s", "IOPS",
                                  "Mean latency (µs)", "Max latency (µs)"], rows, caption="Every interval as stored")
    out.append(Markup(f"<details><summary>All intervals ({len(rows)})</summary>{tab}</details>"))
    return Markup("").join(out)


def compare(ctx: CompareContext) -> Markup:
    """Throughput vs time, one series per run; group averages and recovery side by side."""
    offs = [offsets(v) for v in ctx.views]
    div, unit = time_axis([o["end"] for o in offs])
    series = {}
    for v, off in zip(ctx.views, offs):
        s: XsrSummary = v.summary
        points = [(off.get(g, 0.0) + p.start_s, p.mib_s) for g, d in s.groups.items() for p in d.series]
        series[v.label] = ([x / div for x, _ in points], [y for _, y in points])
    fig = ctx.figure((9.0, 4.4))
    plots.series_plot(fig, series, f"test time ({unit})", "throughput (MiB/s)", ylim0=True)
    out = [ctx.plot(fig, "throughput-vs-time", "throughput vs time, one series per run")]
    keys, vals = [], []
    for g in ("g1", "g2", "g3"):
        groups = [v.summary.groups.get(g) for v in ctx.views]
        keys.append((GROUP_TEXT[g], "mean MiB/s"))
        vals.append([d.mib_s_mean if d else None for d in groups])
        keys.append((GROUP_TEXT[g], "mean latency (µs)"))
        vals.append([d.lat_mean_us if d else None for d in groups])
    keys.append(("Recovery", "s after the start of group 3 (empty: not recovered)"))
    vals.append([v.summary.recovery_s if v.summary.recovered else None for v in ctx.views])
    out.append(ctx.side_by_side("groups", keys, vals, ["Group", "Quantity"], "value",
                                caption="XSR per run; Δ relative to the first run"))
    return Markup("").join(out)


def text(s: XsrSummary, clock: Clock) -> list[str]:
    lines = [f"  {g}: {v.mib_s_mean:.1f} MiB/s mean over {v.intervals} intervals, "
             f"mean latency {v.lat_mean_us:.0f} µs" for g, v in s.groups.items()]
    rec = f"{s.recovery_s:.1f} s into group 3" if s.recovered and s.recovery_s is not None else "not recovered"
    lines.append(f"  recovery to the group-1 average ({s.group1_average_mib_s:.1f} MiB/s): {rec}")
    return lines


def headline(s: XsrSummary) -> list[Headline]:
    """The group-1 average throughput and the recovery time (not available when not recovered)."""
    return [Headline("xsr_group1_mib_s", "XSR group 1 (SEQ 1024K W) mean throughput", s.group1_average_mib_s, "MiB/s"),
            Headline("xsr_recovery_s", "XSR recovery time after the start of group 3",
                     s.recovery_s if s.recovered else None, "s")]


RENDERERS = Renderers(html=html, compare=compare, text=text, headline=headline)
