"""Latency renderers: SNIA report pages, comparison, text for `show`, per-drive parts, headline figures."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from markupsafe import Markup

from ...clock import Clock
from ...render import plots
from ...render.context import CompareContext, SectionContext
from ...render.drives import drives_intro, part_key
from ...render.matching import Overlay, describe_bs_mix, match_note, mix_canonical, overlay
from ...render.toolkit import bs_mix_matrix, mix_label
from ...units import bs_label
from ...results import CellWindow, Latency
from ..matrix import drive_labels, section_head
from ..spec import Headline, Renderers
from .summary import LatencySummary

PERCENTILES = ("99", "99.9", "99.99", "99.999")


def _stat(q: str) -> Callable[[Latency], float | None]:
    return lambda lat: lat.p(q)


# (label, value in µs) of the statistics every latency table shows, in column order
LAT_STATS: tuple[tuple[str, Callable[[Latency], float | None]], ...] = (
    ("mean", lambda lat: lat.mean_us), *((f"p{q}", _stat(q)) for q in PERCENTILES), ("max", lambda lat: lat.max_us))


def stat(lat: Latency, label: str) -> float | None:
    return dict(LAT_STATS)[label](lat)


@dataclass
class DirectionRow:
    """One direction of one cell that did I/O."""

    cell: str
    block_size: str
    mix: str
    direction: str            # read | write
    iops: float
    lat: Latency

    @property
    def key(self) -> tuple[str, str]:
        return self.cell, self.direction


def direction_rows(cells: dict[str, CellWindow]) -> list[DirectionRow]:
    """Every direction that did I/O, in matrix order (mix, then block size)."""
    sizes, mixes, by = bs_mix_matrix(cells)
    out = []
    for m in mixes:
        for bs in sizes:
            if (bs, m) not in by:
                continue
            name, c = by[(bs, m)]
            for d, lat, iops in (("read", c.read_lat, c.read_iops), ("write", c.write_lat, c.write_iops)):
                if lat is not None:
                    out.append(DirectionRow(name, bs_label(bs), mix_label(m), d, iops, lat))
    return out


def _table_rows(rows: list[DirectionRow]) -> list[list]:
    return [[r.cell, r.block_size, r.mix, r.direction, r.iops] + [f(r.lat) for _, f in LAT_STATS] for r in rows]


TABLE_HEADERS = ["Cell", "Block size", "R/W mix", "Direction", "IOPS"] + [f"{lab} (µs)" for lab, _ in LAT_STATS]


def html(ctx: SectionContext) -> Markup:
    """Steady state of mean latency; average/max response-time matrices; percentile table; plots."""
    s: LatencySummary = ctx.summary
    out, sizes, mixes, by = section_head(ctx, s)
    if not sizes:
        return Markup("").join(out)
    # average and maximum latency per round of the tracked cells (SNIA: convergence of ave and max)
    rounds = ctx.rounds("")
    series = {}
    for name in (t.key.cell for t in s.steady.aggregate_trackers):
        got = [(r.round, r.cell(name)) for r in rounds if any(c.name == name for c in r.cells)]
        series[f"{name} mean"] = ([g[0] for g in got], [g[1].lat_mean_ns / 1000 for g in got])
        series[f"{name} max"] = ([g[0] for g in got], [g[1].lat_max_ns / 1000 for g in got])
    if series:
        fig = ctx.figure()
        plots.series_plot(fig, series, "round", "latency (µs)", logy=True,
                          xticks=[r.round for r in rounds] if len(rounds) <= 30 else None)
        out.append(ctx.plot(fig, "convergence-mean-max", "average and maximum latency per round"))
    out.append(Markup("<h3>Response times (measurement window)</h3>"))
    hdr = ["Block size"] + [mix_label(m) for m in mixes]
    for what, value in (("Average", lambda c: c.lat_mean_us), ("Maximum", lambda c: c.lat_max_us)):
        rows = [[bs_label(b)] + [value(by[(b, m)][1]) if (b, m) in by else None for m in mixes] for b in sizes]
        out.append(ctx.table(what.lower(), hdr, rows,
                             caption=f"{what} response time (µs), block size × R/W mix, reads and writes together"))
    rows = direction_rows(s.cells)
    out.append(ctx.table("percentiles", TABLE_HEADERS, _table_rows(rows),
                         caption="Latency per direction: mean, percentiles (merged window histograms), max"))
    labels = [f"{r.block_size} {r.mix} {r.direction}" for r in rows]
    fig = ctx.figure((max(8.0, 0.9 * len(labels) + 3), 4.4))
    plots.bar_plot(fig, labels, {lab: [f(r.lat) for r in rows] for lab, f in LAT_STATS},
                   "block size, R/W mix, direction", "latency (µs)", logy=True, annotate=False)
    out.append(ctx.plot(fig, "percentiles", "mean, percentiles and maximum latency per cell"))
    fig = ctx.figure((8.0, max(3.0, 0.45 * len(sizes) + 1.4)))
    plots.heatmap(fig, [bs_label(b) for b in sizes], [mix_label(m) for m in mixes],
                  [[by[(b, m)][1].lat_mean_us if (b, m) in by else None for m in mixes] for b in sizes],
                  "R/W mix (% read / % write)", "block size", "mean latency (µs)")
    out.append(ctx.plot(fig, "heatmap-mean", "average response time, block size × R/W mix"))
    return Markup("").join(out)


def part_cells(s: LatencySummary, label: str) -> dict[str, CellWindow]:
    """One drive's cells of a parallel run (its own window averages and merged histograms)."""
    return {n: c.parts[label] for n, c in s.cells.items() if label in c.parts}


def parts(ctx: SectionContext) -> Markup:
    """Per drive: mean, p99 … p99.999 and max per cell and direction (never averaged across drives)."""
    s: LatencySummary = ctx.summary
    labels = drive_labels(ctx, s)
    if not labels:
        return Markup("")
    out = [Markup("<h3>Latency per drive (measurement window)</h3>"), drives_intro(labels)]
    per: dict[str, dict[tuple[str, str], Latency]] = {}
    for label in labels:
        rows = direction_rows(part_cells(s, label))
        per[label] = {r.key: r.lat for r in rows}
        out.append(ctx.table(f"drive-{part_key(label)}", TABLE_HEADERS, _table_rows(rows),
                             caption=f"Latency of {label} per direction: mean, percentiles (its own merged window "
                                     f"histograms), max"))
    keys = [k for k in per[labels[0]] if all(k in p for p in per.values())]
    if keys:
        series = {f"{label} {lab}": [stat(per[label][key], lab) for key in keys]
                  for label in labels for lab in ("mean", "p99.99")}
        fig = ctx.figure((max(8.0, 0.9 * len(keys) * len(labels) + 3), 4.4))
        plots.bar_plot(fig, [f"{n} {d}" for n, d in keys], series, "cell, direction", "latency (µs)", logy=True,
                       annotate=False)
        fig.axes[0].legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7)
        fig.ssdpts_right = 0.76
        out.append(ctx.plot(fig, "drives-latency", "mean and p99.99 latency per cell, per drive"))
    return Markup("").join(out)


def latency_overlays(ctx: CompareContext) -> dict[str, Overlay[tuple[int, int, str]]]:
    """Statistic (mean, p99 … p99.999, max) -> (block size, read %, direction) -> µs per run and spec sheet
    (its QD1 latency claims sit on the 100/0 cell for reads, 0/100 for writes)."""
    per_run = []
    for v in ctx.views:
        sizes, mixes, by = bs_mix_matrix(v.summary.cells)
        per_run.append((v.label, {(bs, m, d): lat for (bs, m), (_, c) in by.items()
                                  for d, lat in (("read", c.read_lat), ("write", c.write_lat)) if lat is not None}))
    out = {}
    for lab, f in LAT_STATS:
        runs = [(label, {k: f(lat) for k, lat in lats.items()}) for label, lats in per_run]
        sheets = [(sh.label, {(bs, 100 if d == "read" else 0, d): v for (bs, d, st), v in sh.latency_us.items()
                              if st == lab}) for sh in ctx.options.spec_sheets]
        out[lab] = overlay(runs, sheets, mix_canonical(ctx.options), describe_bs_mix)
    return out


def _load(ctx: CompareContext) -> str:
    """' at TC1/QD1' when every run's latency test ran at one load (the profile's threads and iodepth), else
    each run's."""
    loads = [f"TC{v.settings.threads}/QD{v.settings.iodepth}" for v in ctx.views]
    return f" at {loads[0]}" if len(set(loads)) == 1 else f" at {', '.join(loads)} (run order)"


def compare(ctx: CompareContext) -> Markup:
    """Mean, p99 … p99.999 and max per cell and direction, one row per run and spec sheet; plots of mean,
    p99.99 and max (spec sheets hatched); side-by-side p99.99 with % deltas."""
    ovs = latency_overlays(ctx)
    first = ovs["mean"]
    if not first.keys:
        return first.note() + Markup('<p class="warn">The runs share no latency cell.</p>')
    series = list(dict.fromkeys(s for ov in ovs.values() for s in ov.series))
    out = [match_note(first.match, [s.label for s in ctx.options.spec_sheets if s.label not in series])]
    labels = [describe_bs_mix(k) for k in first.keys]
    for lab in ("mean", "p99.99", "max"):     # max: the seeds' QD1 max latency per drive (seed 004's table)
        ov = ovs[lab]
        fig = ctx.figure((max(8.0, 0.8 * len(labels) + 3), 4.0))
        # linear from zero: bars on a log axis make a 2x difference look like a few percent
        plots.bar_plot(fig, labels, {s: ov.column(s) for s in ov.series}, "block size, R/W mix, direction",
                       f"{lab} latency (µs)", annotate=len(labels) <= 6, dashed=ov.spec_sheets)
        out.append(ctx.plot(fig, lab, f"{lab} latency per cell{_load(ctx)}, one series per run"))
    row_keys = [(bs_label(bs), mix_label(m), d) for bs, m, d in first.keys]
    key_headers = ["Block size", "R/W mix", "Direction"]
    rows = []
    for i, k in enumerate(first.keys):
        for s in series:
            rows.append([*row_keys[i], s] + [ov.values[k][ov.series.index(s)] if s in ov.series else None
                                             for ov in ovs.values()])
    out.append(ctx.table("percentiles", key_headers + ["Series"] + [f"{lab} (µs)" for lab in ovs], rows,
                         caption="Latency per direction: mean, percentiles (merged window histograms), max; spec "
                                 "sheets: the claimed figure, – where nothing is claimed"))
    ov = ovs["p99.99"]
    out.append(ctx.side_by_side("p99.99", row_keys, [ov.values[k] for k in ov.keys],
                                key_headers, "p99.99 µs", series=ov.series,
                                caption="p99.99 latency (µs); Δ relative to the first run (lower is better)"))
    return Markup("").join(out)


def _f(v: float | None) -> str:
    return f"{'–':>9}" if v is None else f"{v:>9.1f}"


def text(s: LatencySummary, clock: Clock) -> list[str]:
    """Per cell: mean and max of both directions together, percentiles of the direction the cell is about."""
    lines = [f"  {'cell':18} {'mean µs':>9} {'max µs':>9} " + " ".join(f"{'p' + q:>9}" for q in PERCENTILES)]
    for name, c in s.cells.items():
        lat = c.main_lat
        lines.append(f"  {name:18} {c.lat_mean_us:>9.1f} {c.lat_max_us:>9.1f} "
                     + " ".join(_f(lat.p(q) if lat else None) for q in PERCENTILES))
    labels = sorted({p for c in s.cells.values() for p in c.parts})
    if labels:   # several drives at once: the aggregate above, each drive here
        lines.append(f"  per drive ({len(labels)} in lock-step; IOPS, mean latency µs):")
        for name, c in s.cells.items():
            per = "  ".join(f"{p}: {c.parts[p].iops:,.0f} / {c.parts[p].lat_mean_us:.1f}" for p in labels
                            if p in c.parts)
            lines.append(f"    {name:18} {per}")
    return lines


def headline(s: LatencySummary) -> list[Headline]:
    """Mean and p99.99 latency of the tracked cells (PTS: RND 4K write), in the direction they are about."""
    out = []
    for t in s.steady.aggregate_trackers:
        c = s.cells.get(t.key.cell)
        lat = c.main_lat if c is not None else None
        if lat is None:
            continue
        out.append(Headline(f"{t.key.cell}_lat_mean_us", f"{t.key.cell} mean latency (measurement window)",
                            lat.mean_us, "µs", s.steady.reached))
        out.append(Headline(f"{t.key.cell}_lat_p99.99_us", f"{t.key.cell} p99.99 latency (measurement window)",
                            lat.p("99.99"), "µs", s.steady.reached))
    return out


RENDERERS = Renderers(html=html, parts=parts, compare=compare, text=text, headline=headline)
