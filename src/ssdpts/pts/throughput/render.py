"""Throughput renderers: SNIA report pages, comparison, text for `show`, per-drive parts, headline figures."""

from __future__ import annotations

from markupsafe import Markup

from ...clock import Clock
from ...render import plots
from ...render.context import CompareContext, SectionContext
from ...render.drives import drives_intro, ordered_part_labels
from ...render.matching import Overlay, overlay
from ...render.toolkit import Cell
from ...units import bs_label
from ..spec import Headline, Renderers
from .summary import MB_PER_MIB, ThroughputSummary

DIRECTIONS = ("read", "write")


def _mb(mib_s: float | None) -> float | None:
    return None if mib_s is None else mib_s * MB_PER_MIB


def html(ctx: SectionContext) -> Markup:
    """Per block size: steady state of read and write bandwidth; then the table (MiB/s and MB/s) and bars."""
    s: ThroughputSummary = ctx.summary
    out = []
    rows = []
    for r in s.block_sizes:
        out.append(Markup(f"<h3>Steady state, SEQ {r.label}</h3>"))
        out.append(ctx.steady_block(r.phase, r.steady))
        reached = r.steady.reached
        rows.append([r.label, r.read_mib_s, r.write_mib_s, r.read_mb_s, r.write_mb_s,
                     Cell(reached, "reached" if reached else "NOT reached", "ok" if reached else "bad")])
    if not rows:
        return Markup("").join(out)
    out.append(Markup("<h3>Throughput (measurement-window average)</h3>"))
    out.append(ctx.table("table", ["Block size", "Read MiB/s", "Write MiB/s", "Read MB/s", "Write MB/s",
                                   "Steady state"], rows,
                         caption="Sequential throughput; MiB/s = 2^20 B/s, MB/s = 10^6 B/s"))
    fig = ctx.figure((8.0, 4.0))
    plots.bar_plot(fig, [f"SEQ {r.label}" for r in s.block_sizes],
                   {"read": [r.read_mib_s for r in s.block_sizes], "write": [r.write_mib_s for r in s.block_sizes]},
                   "block size", "MiB/s")
    out.append(ctx.plot(fig, "bars", "sequential read and write throughput per block size"))
    return Markup("").join(out)


def part_rows(run: dict, s: ThroughputSummary) -> tuple[list[str], list[list]]:
    """Rows (block size, drive, read MiB/s, write MiB/s, read MB/s, write MB/s) of each drive of a parallel run."""
    labels = ordered_part_labels(run, {p for r in s.block_sizes for p in r.part_labels()})
    rows = []
    for r in s.block_sizes:
        for label in labels:
            rd, wr = r.part_mib_s(label)
            if rd is None and wr is None:
                continue
            rows.append([r.label, label, rd, wr, _mb(rd), _mb(wr)])
    return labels, rows


def parts(ctx: SectionContext) -> Markup:
    """Per drive of a parallel run: MiB/s and MB/s of each drive, and bars with one bar per drive."""
    s: ThroughputSummary = ctx.summary
    labels, rows = part_rows(ctx.run, s)
    if not rows:
        return Markup("")
    out = [Markup("<h3>Throughput per drive (measurement-window average)</h3>"), drives_intro(labels)]
    out.append(ctx.table("drives", ["Block size", "Drive", "Read MiB/s", "Write MiB/s", "Read MB/s", "Write MB/s"],
                         rows, caption="Sequential throughput of each drive; MiB/s = 2^20 B/s, MB/s = 10^6 B/s"))
    series = {label: [v for r in s.block_sizes for v in r.part_mib_s(label)] for label in labels}   # read, write
    fig = ctx.figure((8.0, 4.0))
    plots.bar_plot(fig, [f"SEQ {r.label} {d}" for r in s.block_sizes for d in DIRECTIONS], series,
                   "block size, direction", "MiB/s")
    out.append(ctx.plot(fig, "drives-bars", "sequential throughput, one bar per drive"))
    return Markup("").join(out)


def throughput_overlay(ctx: CompareContext) -> Overlay[tuple[int, str]]:
    """(block size, direction) -> MiB/s per run and per spec sheet (claimed MB/s converted to MiB/s)."""
    summaries: list[ThroughputSummary] = [v.summary for v in ctx.views]
    runs = [(v.label, {(r.block_size, d): r.mib_s(d) for r in s.block_sizes for d in DIRECTIONS})
            for v, s in zip(ctx.views, summaries)]
    sizes = {r.block_size for s in summaries for r in s.block_sizes}
    largest = max(sizes, default=None)
    sheets = [(sh.label, {(bs, d): v for bs in sizes for d in DIRECTIONS
                          if (v := sh.seq(bs, d, largest)) is not None}) for sh in ctx.options.spec_sheets]
    return overlay(runs, sheets, lambda k: k, lambda k: f"SEQ {bs_label(k[0])} {k[1]}")


def compare(ctx: CompareContext) -> Markup:
    """Bars per block size and direction, one series per run (spec sheets hatched); table with % deltas."""
    ov = throughput_overlay(ctx)
    if not ov.keys:
        return ov.note() + Markup('<p class="warn">The runs share no throughput block size.</p>')
    keys = [(bs_label(bs), d) for bs, d in ov.keys]
    fig = ctx.figure((8.0, 4.0))
    plots.bar_plot(fig, [f"{bs} {d}" for bs, d in keys], {label: ov.column(label) for label in ov.series},
                   "block size, direction", "MiB/s", dashed=ov.spec_sheets)
    out = [ov.note(), ctx.plot(fig, "bars", "sequential throughput, one series per run")]
    out.append(ctx.side_by_side("table", keys, [ov.values[k] for k in ov.keys], ["Block size", "Direction"], "MiB/s",
                                series=ov.series, caption="Sequential throughput in MiB/s (spec sheets: claimed MB/s "
                                                          "× 10^6/2^20); Δ relative to the first run"))
    return Markup("").join(out)


def _f(v: float | None, width: int) -> str:
    return f"{'–':>{width}}" if v is None else f"{v:>{width}.1f}"


def text(s: ThroughputSummary, clock: Clock) -> list[str]:
    lines = [f"  {'block':>7} {'read MiB/s':>11} {'write MiB/s':>12} {'read MB/s':>10} {'write MB/s':>11}"]
    for r in s.block_sizes:
        lines.append(f"  {r.label:>7} {_f(r.read_mib_s, 11)} {_f(r.write_mib_s, 12)} {_f(r.read_mb_s, 10)} "
                     f"{_f(r.write_mb_s, 11)}")
        for label in sorted(r.part_labels()):   # several drives at once: the aggregate above, each drive here
            rd, wr = r.part_mib_s(label)
            lines.append(f"  {'':>7} {_f(rd, 11)} {_f(wr, 12)} {_f(_mb(rd), 10)} {_f(_mb(wr), 11)}  {label}")
        lines.append(f"    purge: {r.purge.method}{'' if r.purge.snia_purge else ' (not a SNIA purge)'}")
        lines += r.steady.text_lines("    ")
    return lines


def headline(s: ThroughputSummary) -> list[Headline]:
    """SEQ read and write MiB/s of every block size."""
    out = []
    for r in s.block_sizes:
        for d, v in (("read", r.read_mib_s), ("write", r.write_mib_s)):
            out.append(Headline(f"seq{r.label}_{d}_mib_s", f"SEQ {r.label} {d} (measurement window)", v, "MiB/s",
                                r.steady.reached))
    return out


RENDERERS = Renderers(html=html, parts=parts, compare=compare, text=text, headline=headline)
