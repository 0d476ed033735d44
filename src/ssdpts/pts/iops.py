"""SNIA PTS IOPS test: random I/O over a block size x read/write mix matrix.

Purge -> WIPC (SEQ 128 KiB writes, 2x the active range) -> rounds of the whole matrix (outer loop:
mix, inner loop: block size) until the tracking variables are steady (PTS-E 1.1: RND 4 KiB write;
PTS 2.0: also RND 64 KiB 65/35 and RND 1024 KiB read). Result: per cell, the average IOPS
(read + write) over the measurement window.
"""

from __future__ import annotations

from ..units import bs_label, parse_size
from .common import TestContext, Tracker, cell_name, window_summary

NAME = "iops"
TITLE = "IOPS – Block Size x R/W Mix Matrix"


def matrix(ctx: TestContext) -> tuple[list, list[int], list[int], list[str]]:
    sizes, notes = ctx.skip_sub_sector([parse_size(b) for b in ctx.settings["block_sizes"]])
    mixes = [int(m) for m in ctx.settings["mixes"]]
    cells = [ctx.cell(cell_name("rnd", bs, mix), "randrw", bs, mix) for mix in mixes for bs in sizes]
    return cells, sizes, mixes, notes


def trackers(ctx: TestContext, cells) -> list[Tracker]:
    names = {c.name for c in cells}
    out = []
    for bs, mix in ctx.settings.get("tracking", [["4k", 0]]):
        name = cell_name("rnd", parse_size(bs), int(mix))
        if name in names:
            out.append(Tracker(name, "iops"))
    if not out:
        out.append(Tracker(cells[-1].name, "iops"))
    return out


def run(ctx: TestContext) -> dict:
    cells, sizes, mixes, notes = matrix(ctx)
    for n in notes:
        ctx.note(n)
    purge = ctx.purge()
    outcome = ctx.run_to_steady_state("", cells, trackers(ctx, cells), precondition=ctx.wipc())
    summary = window_summary(outcome.rounds, outcome.window_rounds)
    table = {f"{m}/{100 - m}": {bs_label(b): round(summary[cell_name("rnd", b, m)]["iops"], 1) for b in sizes}
             for m in mixes}
    return {"purge": purge, "steady": outcome.to_dict(), "table_iops": table, "cells": summary, "notes": notes,
            "units": {"iops": "IO/s (read + write)", "mib_s": "MiB/s (2^20 bytes/s)", "latency": "µs"}}


# --- report renderers (called by ssdpts.report; matplotlib is imported only when a report is built) ---

def report_section(ctx) -> str:
    """SNIA IOPS report pages: steady state (convergence, window, determination), table, 2D plot, heat map."""
    from markupsafe import Markup, escape

    from ..report import plots
    from ..report.toolkit import bs_mix_matrix, mix_label

    s = ctx.summary
    html = [Markup(f'<p class="note">{escape(n)}</p>') for n in s.get("notes", [])]
    html.append(Markup("<h3>Steady state</h3>"))
    html.append(ctx.steady_block("", s.get("steady")))
    sizes, mixes, by = bs_mix_matrix(s.get("cells", {}))
    if not sizes:
        return Markup("").join(html)
    # convergence of every block size at the write-heaviest mix (SNIA "SS convergence, all BS")
    wmix = min(mixes)
    rounds = ctx.rounds("")
    series = {}
    for bs in sizes:
        name = by[(bs, wmix)][0] if (bs, wmix) in by else None
        pts_ = [(r.round, r.cell(name).iops) for r in rounds if name and any(c.name == name for c in r.cells)]
        if pts_:
            series[f"{bs_label(bs)}"] = ([p[0] for p in pts_], [p[1] for p in pts_])
    if series:
        fig = ctx.figure()
        plots.series_plot(fig, series, "round", "IOPS", logy=True, xticks=[r.round for r in rounds]
                          if len(rounds) <= 30 else None)
        html.append(ctx.plot(fig, "convergence-all-bs", f"convergence, all block sizes, RND {mix_label(wmix)}",
                             "IOPS per round of every block size at the most write-heavy mix."))
    html.append(Markup("<h3>IOPS: block size × R/W mix (measurement-window average)</h3>"))
    headers = ["Block size"] + [mix_label(m) for m in mixes]
    rows = [[bs_label(bs)] + [by[(bs, m)][1]["iops"] if (bs, m) in by else None for m in mixes] for bs in sizes]
    html.append(ctx.table("table", headers, rows, caption="IOPS (read + write), R/W mix columns, block size rows"))
    # 2D plot, log axes, one series per mix
    fig = ctx.figure()
    kib = [b / 1024 for b in sizes]
    series = {mix_label(m): ([b / 1024 for b in sizes if (b, m) in by], [by[(b, m)][1]["iops"] for b in sizes
                                                                       if (b, m) in by]) for m in mixes}
    plots.series_plot(fig, series, "block size (KiB)", "IOPS", logx=True, logy=True, xticks=sorted(kib),
                      xticklabels=[f"{k:g}" for k in sorted(kib)])
    html.append(ctx.plot(fig, "iops-vs-bs", "IOPS vs block size, one series per R/W mix"))
    fig = ctx.figure((8.0, max(3.2, 0.45 * len(sizes) + 1.4)))
    plots.heatmap(fig, [bs_label(b) for b in sizes], [mix_label(m) for m in mixes],
                  [[by[(b, m)][1]["iops"] if (b, m) in by else None for m in mixes] for b in sizes],
                  "R/W mix (% read / % write)", "block size", "IOPS")
    html.append(ctx.plot(fig, "heatmap", "IOPS heat map, block size × R/W mix"))
    from ..report.parts import iops_parts

    html.append(iops_parts(ctx, s))    # several drives at once: each drive's own table and bars (else nothing)
    cell_rows = []
    for (bs, m), (name, c) in by.items():
        cell_rows.append([name, bs_label(bs), mix_label(m), c["iops"], c["read_iops"], c["write_iops"],
                          c["read_mib_s"] + c["write_mib_s"], c.get("lat_mean_us"), c.get("lat_max_us")])
    tab = ctx.table("cells", ["Cell", "Block size", "R/W mix", "IOPS", "Read IOPS", "Write IOPS", "MiB/s",
                              "Mean latency (µs)", "Max latency (µs)"], cell_rows,
                    caption="Every cell, measurement-window averages")
    html.append(Markup(f"<details><summary>All cells ({len(cell_rows)})</summary>{tab}</details>"))
    return Markup("").join(html)


def compare_section(ctx) -> str:
    """IOPS vs block size per mix with one series per run; table side by side with % deltas."""
    from markupsafe import Markup

    from ..report import plots
    from ..report.toolkit import bs_mix_matrix, mix_label

    mats = [bs_mix_matrix(v.summary.get("cells", {})) for v in ctx.views]
    sizes = [b for b in mats[0][0] if all(b in m[0] for m in mats[1:])]
    mixes = [x for x in mats[0][1] if all(x in m[1] for m in mats[1:])]
    if not sizes or not mixes:
        return Markup('<p class="warn">The runs share no IOPS cell (block size and mix).</p>')
    html = []
    fig = ctx.figure((11.0, 3.2 * ((len(mixes) + 3) // 4) + 0.9))
    panels = []
    for m in mixes:
        panels.append((f"R/W {mix_label(m)}", {v.label: ([b / 1024 for b in sizes], [mat[2][(b, m)][1]["iops"]
                                                                                   for b in sizes])
                                             for v, mat in zip(ctx.views, mats)}))
    kib = sorted(b / 1024 for b in sizes)
    plots.small_multiples(fig, panels, "block size (KiB)", "IOPS", logx=True, logy=True, xticks=kib,
                          xticklabels=[f"{k:g}" for k in kib])
    html.append(ctx.plot(fig, "iops-vs-bs", "IOPS vs block size per R/W mix, one series per run"))
    keys = [(bs_label(b), mix_label(m)) for m in mixes for b in sizes]
    vals = [[mat[2][(b, m)][1]["iops"] for mat in mats] for m in mixes for b in sizes]
    html.append(ctx.side_by_side("table", keys, vals, ["Block size", "R/W mix"], "IOPS",
                                 caption="IOPS (read + write), measurement-window averages; Δ relative to the first run"))
    return Markup("").join(html)
