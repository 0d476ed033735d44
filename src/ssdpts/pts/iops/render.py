"""IOPS renderers: SNIA report pages, comparison, text for `show`, per-drive parts, headline figures."""

from __future__ import annotations

from markupsafe import Markup

from ...clock import Clock
from ...render import plots
from ...render.context import CompareContext, SectionContext
from ...render.drives import drives_intro, part_key
from ...render.matching import Overlay, describe_bs_mix, mix_canonical, overlay
from ...render.toolkit import bs_mix_matrix, mix_label
from ...units import bs_label
from ..matrix import drive_labels, section_head
from ..spec import Headline, Renderers
from .summary import IopsSummary


def html(ctx: SectionContext) -> Markup:
    """SNIA IOPS report pages: steady state (convergence, window, determination), table, 2D plot, heat map."""
    s: IopsSummary = ctx.summary
    out, sizes, mixes, by = section_head(ctx, s)
    if not sizes:
        return Markup("").join(out)
    # convergence of every block size at the write-heaviest mix (SNIA "SS convergence, all BS")
    wmix = min(mixes)
    rounds = ctx.rounds("")
    series = {}
    for bs in sizes:
        name = by[(bs, wmix)][0] if (bs, wmix) in by else None
        points = [(r.round, r.cell(name).iops) for r in rounds if name and any(c.name == name for c in r.cells)]
        if points:
            series[bs_label(bs)] = ([p[0] for p in points], [p[1] for p in points])
    if series:
        fig = ctx.figure()
        plots.series_plot(fig, series, "round", "IOPS", logy=True, xticks=[r.round for r in rounds]
                          if len(rounds) <= 30 else None)
        out.append(ctx.plot(fig, "convergence-all-bs", f"convergence, all block sizes, RND {mix_label(wmix)}",
                            "IOPS per round of every block size at the most write-heavy mix."))
    out.append(Markup("<h3>IOPS: block size × R/W mix (measurement-window average)</h3>"))
    headers = ["Block size"] + [mix_label(m) for m in mixes]
    rows = [[bs_label(bs)] + [by[(bs, m)][1].iops if (bs, m) in by else None for m in mixes] for bs in sizes]
    out.append(ctx.table("table", headers, rows, caption="IOPS (read + write), R/W mix columns, block size rows"))
    fig = ctx.figure()
    kib = [b / 1024 for b in sizes]
    series = {mix_label(m): ([b / 1024 for b in sizes if (b, m) in by], [by[(b, m)][1].iops for b in sizes
                                                                       if (b, m) in by]) for m in mixes}
    plots.series_plot(fig, series, "block size (KiB)", "IOPS", logx=True, logy=True, xticks=sorted(kib),
                      xticklabels=[f"{k:g}" for k in sorted(kib)])
    out.append(ctx.plot(fig, "iops-vs-bs", "IOPS vs block size, one series per R/W mix"))
    fig = ctx.figure((8.0, max(3.2, 0.45 * len(sizes) + 1.4)))
    plots.heatmap(fig, [bs_label(b) for b in sizes], [mix_label(m) for m in mixes],
                  [[by[(b, m)][1].iops if (b, m) in by else None for m in mixes] for b in sizes],
                  "R/W mix (% read / % write)", "block size", "IOPS")
    out.append(ctx.plot(fig, "heatmap", "IOPS heat map, block size × R/W mix"))
    fig = ctx.figure((8.0, 5.6))
    plots.bars_3d(fig, [bs_label(b) for b in sizes], [mix_label(m) for m in mixes],
                  [[by[(b, m)][1].iops if (b, m) in by else None for m in mixes] for b in sizes],
                  "R/W mix (% read / % write)", "block size", "IOPS")
    out.append(ctx.plot(fig, "bars-3d", "IOPS 3-D bars, block size × R/W mix",
                        "The heat map's values as bar heights (linear scale)."))
    out += latency_section(ctx, s)
    out += series_section(ctx, s)
    cell_rows = [[name, bs_label(bs), mix_label(m), c.iops, c.read_iops, c.write_iops, c.mib_s, c.lat_mean_us,
                  c.lat_max_us] for (bs, m), (name, c) in by.items()]
    tab = ctx.table("cells", ["Cell", "Block size", "R/W mix", "IOPS", "Read IOPS", "Write IOPS", "MiB/s",
                              "Mean latency (µs)", "Max latency (µs)"], cell_rows,
                    caption="Every cell, measurement-window averages")
    out.append(Markup(f"<details><summary>All cells ({len(cell_rows)})</summary>{tab}</details>"))
    return Markup("").join(out)


def latency_section(ctx: SectionContext, s: IopsSummary) -> list[Markup]:
    """Per cell and direction: mean, p99, p99.9, p99.99 and max latency of the measurement window."""
    rows = [[f"{bs_label(c.block_size)} {mix_label(c.read_pct)}", c.direction, c.mean_us, c.p99_us, c.p99_9_us,
             c.p99_99_us, c.max_us, c.percentiles_from] for c in s.latencies()]
    if not rows:
        return []
    return [Markup("<h3>Latency per cell (measurement window)</h3>"),
            ctx.table("latency", ["Block size, R/W mix", "Direction", "Mean (µs)", "p99 (µs)", "p99.9 (µs)",
                                  "p99.99 (µs)", "Max (µs)", "Percentiles from"], rows,
                      caption="Total latency of every cell per direction; a percentile fio did not report: –. "
                              "A percentile from fewer I/Os than it needs is listed under Conformance")]


def series_section(ctx: SectionContext, s: IopsSummary) -> list[Markup]:
    """IOPS and mean latency per logged interval of the `interval_cells`, with their coefficients of variation."""
    if not s.series:
        return [Markup('<p class="note">IOPS and latency over time inside a cell: not available (no cell was '
                       'logged per interval; the <code>interval_cells</code> setting chooses them).</p>')]
    out = [Markup("<h3>IOPS and latency over time inside a cell</h3>")]
    fig = ctx.figure((8.0, 5.6))
    plots.over_time(fig, [("IOPS (read + write)", {n: (v.t_s, v.iops) for n, v in s.series.items()}),
                          ("mean latency (µs)", {n: (v.t_s, v.lat_mean_us) for n, v in s.series.items()})],
                    "time from the cell's start (s)")
    first = next(iter(s.series.values()))
    out.append(ctx.plot(fig, "over-time", f"IOPS and latency per {first.interval_s * 1000:g} ms, round {first.round}",
                        f"Per-interval averages ({first.source}) in the last round of the measurement window."))
    rows = [[n, v.round, v.interval_s * 1000, len(v.t_s), v.source, v.iops_cv * 100 if v.iops_cv is not None else None,
             v.lat_cv * 100 if v.lat_cv is not None else None, min(v.iops, default=None), max(v.iops, default=None)]
            for n, v in s.series.items()]
    out.append(ctx.table("over-time", ["Cell", "Round", "Interval (ms)", "Intervals", "Source", "IOPS CV (%)",
                                       "Latency CV (%)", "Min IOPS", "Max IOPS"], rows,
                         caption="Coefficient of variation = standard deviation / mean over the intervals"))
    return out


def parts(ctx: SectionContext) -> Markup:
    """Per drive of a parallel run: the BS × mix IOPS table; grouped bars of the tracked cells, one bar per drive."""
    s: IopsSummary = ctx.summary
    labels = drive_labels(ctx, s)
    if not labels:
        return Markup("")
    out = [Markup("<h3>IOPS per drive (measurement-window average)</h3>"), drives_intro(labels)]
    for label in labels:
        sizes, mixes, by = bs_mix_matrix({n: c.parts[label] for n, c in s.cells.items() if label in c.parts})
        rows = [[bs_label(bs)] + [by[(bs, m)][1].iops if (bs, m) in by else None for m in mixes] for bs in sizes]
        out.append(ctx.table(f"drive-{part_key(label)}", ["Block size"] + [mix_label(m) for m in mixes], rows,
                             caption=f"IOPS (read + write) of {label}, R/W mix columns, block size rows"))
    names = [t.key.cell for t in s.steady.aggregate_trackers if t.key.cell in s.cells] or list(s.cells)[-1:]
    if names:
        fig = ctx.figure()
        series = {label: [s.cells[n].parts[label].iops if label in s.cells[n].parts else None for n in names]
                  for label in labels}
        plots.bar_plot(fig, names, series, "cell", "IOPS (read + write)")
        out.append(ctx.plot(fig, "drives-tracked", "IOPS of the tracked cells, one bar per drive",
                            "Measurement-window averages of each drive on its own."))
    rows = [[name, label, p.iops, p.read_iops, p.write_iops, p.mib_s, p.lat_mean_us, p.lat_max_us]
            for label in labels for name, c in s.cells.items() if (p := c.parts.get(label)) is not None]
    tab = ctx.table("drive-cells", ["Cell", "Drive", "IOPS", "Read IOPS", "Write IOPS", "MiB/s", "Mean latency (µs)",
                                    "Max latency (µs)"], rows, caption="Every cell of every drive, measurement-window averages")
    out.append(Markup(f"<details><summary>All cells per drive ({len(rows)})</summary>{tab}</details>"))
    return Markup("").join(out)


def iops_overlay(ctx: CompareContext) -> Overlay[tuple[int, int]]:
    """(block size, read %) -> IOPS per run and per spec sheet, mixes matched only as --match-mix says."""
    runs = [(v.label, {k: c.iops for k, (_, c) in bs_mix_matrix(v.summary.cells)[2].items()}) for v in ctx.views]
    sheets = [(s.label, s.iops) for s in ctx.options.spec_sheets]
    return overlay(runs, sheets, mix_canonical(ctx.options), describe_bs_mix)


def compare(ctx: CompareContext) -> Markup:
    """IOPS vs block size per mix with one series per run (spec sheets dashed); table side by side with % deltas."""
    ov = iops_overlay(ctx)
    if not ov.keys:
        return ov.note() + Markup('<p class="warn">The runs share no IOPS cell (block size and mix).</p>')
    sizes = list(dict.fromkeys(b for b, _ in ov.keys))
    mixes = list(dict.fromkeys(m for _, m in ov.keys))
    out = [ov.note()]
    fig = ctx.figure((11.0, 3.2 * ((len(mixes) + 3) // 4) + 0.9))
    panels = []
    for m in mixes:
        series = {}
        for label in ov.series:
            pts = [(b / 1024, ov.values[(b, m)][ov.series.index(label)]) for b in sizes if (b, m) in ov.values]
            pts = [(x, y) for x, y in pts if y is not None]
            series[label] = ([x for x, _ in pts], [y for _, y in pts])
        panels.append((f"R/W {mix_label(m)}", series))
    kib = sorted(b / 1024 for b in sizes)
    plots.small_multiples(fig, panels, "block size (KiB)", "IOPS", logx=True, logy=True, xticks=kib,
                          xticklabels=[f"{k:g}" for k in kib], dashed=ov.spec_sheets)
    out.append(ctx.plot(fig, "iops-vs-bs", "IOPS vs block size per R/W mix, one series per run"))
    keys = sorted(ov.keys, key=lambda k: (mixes.index(k[1]), sizes.index(k[0])))
    out.append(ctx.side_by_side("table", [(bs_label(b), mix_label(m)) for b, m in keys], [ov.values[k] for k in keys],
                                ["Block size", "R/W mix"], "IOPS", series=ov.series,
                                caption="IOPS (read + write), measurement-window averages; spec sheets: the claimed "
                                        "figure; Δ relative to the first run"))
    return Markup("").join(out)


def text(s: IopsSummary, clock: Clock) -> list[str]:
    sizes, mixes, by = bs_mix_matrix(s.cells)
    lines = ["  IOPS (read + write), measurement-window average",
             "  " + f"{'R/W mix':>8}" + "".join(f"{bs_label(b):>11}" for b in sizes)]
    for m in mixes:
        lines.append("  " + f"{mix_label(m):>8}" + "".join(
            f"{by[(b, m)][1].iops:>11,.0f}" if (b, m) in by else f"{'–':>11}" for b in sizes))
    return lines


def headline(s: IopsSummary) -> list[Headline]:
    """The tracked cells' IOPS (RND 4K W, and PTS 2.0's 64K 65/35 and 1024K R when tracked)."""
    out = []
    for t in s.steady.aggregate_trackers:
        c = s.cells.get(t.key.cell)
        if c is not None:
            out.append(Headline(f"{t.key.cell}_iops", f"{t.key.cell} IOPS (measurement window)", c.iops, "IOPS",
                                s.steady.reached))
    return out


RENDERERS = Renderers(html=html, parts=parts, compare=compare, text=text, headline=headline)
