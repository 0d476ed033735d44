"""SNIA PTS Latency test: TC1/QD1 random I/O, 0.5/4/8 KiB x 100/0, 65/35, 0/100.

Tracking variable: mean latency of RND 4 KiB writes. Reported per cell: mean, max and the
percentiles (99, 99.9, 99.99, 99.999) of total latency, merged over the measurement window's
histograms (fio json+ bins), in microseconds.
"""

from __future__ import annotations

from ..units import parse_size
from .common import TestContext, Tracker, cell_name, window_summary

NAME = "latency"
TITLE = "Latency – Response Time at TC1/QD1"


def run(ctx: TestContext) -> dict:
    sizes, notes = ctx.skip_sub_sector([parse_size(b) for b in ctx.settings["block_sizes"]])
    for n in notes:
        ctx.note(n)
    mixes = [int(m) for m in ctx.settings["mixes"]]
    cells = [ctx.cell(cell_name("rnd", bs, mix), "randrw", bs, mix) for mix in mixes for bs in sizes]
    names = {c.name for c in cells}
    tracked = [Tracker(cell_name("rnd", parse_size(bs), int(mix)), "lat_mean")
               for bs, mix in ctx.settings.get("tracking", [["4k", 0]])
               if cell_name("rnd", parse_size(bs), int(mix)) in names] or [Tracker(cells[-1].name, "lat_mean")]
    purge = ctx.purge()
    outcome = ctx.run_to_steady_state("", cells, tracked, precondition=ctx.wipc())
    summary = window_summary(outcome.rounds, outcome.window_rounds)
    return {"purge": purge, "steady": outcome.to_dict(), "cells": summary, "notes": notes,
            "units": {"latency": "µs (total latency: submission to completion)"}}


# --- report renderers (called by ssdpts.report; matplotlib is imported only when a report is built) ---

from ..units import bs_label  # noqa: E402  (used by the renderers below)

LAT_STATS = (("mean", "mean_us"), ("p99", "p99_us"), ("p99.9", "p99.9_us"), ("p99.99", "p99.99_us"),
             ("p99.999", "p99.999_us"), ("max", "max_us"))


def _lat(d: dict, key: str):
    """A latency statistic from a window-summary direction dict; percentile keys as fio writes them."""
    if key in d:
        return d[key]
    alt = {"p99.0_us": "p99_us", "p99_us": "p99.0_us"}.get(key)
    return d.get(alt) if alt else None


def latency_rows(cells: dict) -> list[tuple[str, str, str, str, dict]]:
    """(cell, block size, mix, direction, stats) for every direction that did I/O."""
    from ..report.toolkit import bs_mix_matrix, mix_label

    sizes, mixes, by = bs_mix_matrix(cells)
    out = []
    for m in mixes:
        for bs in sizes:
            if (bs, m) not in by:
                continue
            name, c = by[(bs, m)]
            for d in ("read", "write"):
                if c.get(f"{d}_lat"):
                    out.append((name, bs_label(bs), mix_label(m), d, c[f"{d}_lat"]))
    return out


def report_section(ctx) -> str:
    """Steady state of mean latency; average/max response-time matrices; percentile table; plots."""
    from markupsafe import Markup, escape

    from ..report import plots
    from ..report.toolkit import bs_mix_matrix, mix_label

    s = ctx.summary
    html = [Markup(f'<p class="note">{escape(n)}</p>') for n in s.get("notes", [])]
    html.append(Markup("<h3>Steady state</h3>"))
    html.append(ctx.steady_block("", s.get("steady")))
    cells = s.get("cells", {})
    sizes, mixes, by = bs_mix_matrix(cells)
    if not sizes:
        return Markup("").join(html)
    # average and maximum latency per round of the tracked cells (SNIA: convergence of ave and max)
    rounds = ctx.rounds("")
    tracked = [k.rpartition(" ")[0] for k in (s.get("steady") or {}).get("trackers", {})]
    series = {}
    for name in tracked:
        got = [(r.round, r.cell(name)) for r in rounds if any(c.name == name for c in r.cells)]
        series[f"{name} mean"] = ([g[0] for g in got], [g[1].lat_mean_ns / 1000 for g in got])
        series[f"{name} max"] = ([g[0] for g in got], [g[1].lat_max_ns / 1000 for g in got])
    if series:
        fig = ctx.figure()
        plots.series_plot(fig, series, "round", "latency (µs)", logy=True,
                          xticks=[r.round for r in rounds] if len(rounds) <= 30 else None)
        html.append(ctx.plot(fig, "convergence-mean-max", "average and maximum latency per round"))
    html.append(Markup("<h3>Response times (measurement window)</h3>"))
    hdr = ["Block size"] + [mix_label(m) for m in mixes]
    for key, what in (("lat_mean_us", "Average"), ("lat_max_us", "Maximum")):
        rows = [[bs_label(b)] + [by[(b, m)][1][key] if (b, m) in by else None for m in mixes] for b in sizes]
        html.append(ctx.table(f"{what.lower()}", hdr, rows,
                              caption=f"{what} response time (µs), block size × R/W mix, reads and writes together"))
    rows = latency_rows(cells)
    table_rows = [[name, bs, mix, d, by_iops(cells, name, d)] + [_lat(st, k) for _, k in LAT_STATS]
                  for name, bs, mix, d, st in rows]
    html.append(ctx.table("percentiles", ["Cell", "Block size", "R/W mix", "Direction", "IOPS"]
                          + [f"{lab} (µs)" for lab, _ in LAT_STATS], table_rows,
                          caption="Latency per direction: mean, percentiles (merged window histograms), max"))
    labels = [f"{bs} {mix} {d}" for _, bs, mix, d, _ in rows]
    fig = ctx.figure((max(8.0, 0.9 * len(labels) + 3), 4.4))
    plots.bar_plot(fig, labels, {lab: [_lat(st, k) for *_, st in rows] for lab, k in LAT_STATS},
                   "block size, R/W mix, direction", "latency (µs)", logy=True, annotate=False)
    html.append(ctx.plot(fig, "percentiles", "mean, percentiles and maximum latency per cell"))
    fig = ctx.figure((8.0, max(3.0, 0.45 * len(sizes) + 1.4)))
    plots.heatmap(fig, [bs_label(b) for b in sizes], [mix_label(m) for m in mixes],
                  [[by[(b, m)][1]["lat_mean_us"] if (b, m) in by else None for m in mixes] for b in sizes],
                  "R/W mix (% read / % write)", "block size", "mean latency (µs)")
    html.append(ctx.plot(fig, "heatmap-mean", "average response time, block size × R/W mix"))
    from ..report.parts import latency_parts

    html.append(latency_parts(ctx, cells))   # several drives at once: each drive's latency, never averaged
    return Markup("").join(html)


def by_iops(cells: dict, name: str, direction: str) -> float:
    return cells[name][f"{direction}_iops"]


def compare_section(ctx) -> str:
    """Mean and p99.99 latency per cell, one series per run; side-by-side tables with % deltas."""
    from markupsafe import Markup

    from ..report import plots

    per_run = [{(n, d): st for n, _, _, d, st in latency_rows(v.summary.get("cells", {}))} for v in ctx.views]
    keys = [k for k in per_run[0] if all(k in p for p in per_run[1:])]
    if not keys:
        return Markup('<p class="warn">The runs share no latency cell.</p>')
    html = []
    for lab, k in (("mean", "mean_us"), ("p99.99", "p99.99_us"), ("max", "max_us")):
        vals = [[_lat(p[key], k) for p in per_run] for key in keys]
        if lab != "max":
            fig = ctx.figure((max(8.0, 0.8 * len(keys) + 3), 4.0))
            plots.bar_plot(fig, [f"{n} {d}" for n, d in keys], {v.label: [row[i] for row in vals]
                                                                for i, v in enumerate(ctx.views)},
                           "cell, direction", f"{lab} latency (µs)", logy=True, annotate=len(keys) <= 6)
            html.append(ctx.plot(fig, f"{lab}", f"{lab} latency per cell, one series per run"))
        html.append(ctx.side_by_side(f"{lab}", keys, vals, ["Cell", "Direction"], f"{lab} µs",
                                     caption=f"{lab} latency (µs); Δ relative to the first run (lower is better)"))
    return Markup("").join(html)
