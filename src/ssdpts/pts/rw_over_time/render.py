"""Random-write-over-time renderers: MB/s vs time per block size, the table, text for `show`, headline."""

from __future__ import annotations

from markupsafe import Markup, escape

from ...clock import Clock
from ...render.toolkit import notes_html
from ...render import plots
from ...render.context import CompareContext, SectionContext
from ..spec import Headline, Renderers
from ...units import format_duration
from .summary import BlockSizeRun, RwOverTimeSummary


def levelled_off(b: BlockSizeRun) -> str:
    """Time to level off in words: '40m00s' or 'not reached'."""
    t = b.stable_after_s
    return "not reached" if t is None else format_duration(t)


def html(ctx: SectionContext) -> Markup:
    """MB/s vs time, one line per block size; a table of first / final / min MB/s."""
    s: RwOverTimeSummary = ctx.summary
    out = notes_html(s.notes)
    if not s.block_sizes:
        return Markup("").join(out)
    scale, unit = (60.0, "min") if s.duration_s >= 600 else (1.0, "s")
    series = {f"RND {b.label} W": ([p.t_s / scale for p in b.series], [p.mb_s for p in b.series])
              for b in s.block_sizes if b.series}
    fig = ctx.figure()
    plots.series_plot(fig, series, f"time ({unit})", "MB/s", logy=True)
    out.append(ctx.plot(fig, "mb-vs-time", "random write MB/s vs time, one line per block size",
                        "Each block size starts from a purged drive; MB/s = 10^6 bytes/s."))
    band = s.block_sizes[0].level_band_pct
    rows = [[b.label, b.first_mb_s, b.final_mb_s, b.min_mb_s, levelled_off(b), b.fills, b.intervals]
            for b in s.block_sizes]
    out.append(ctx.table("table", ["Block size", "First interval MB/s", "Final MB/s (last 10 %)", "Min MB/s",
                                   f"Levelled off after (±{band:g} %)", "Drive fills written", "Intervals"], rows,
                         caption="Random write throughput from FOB to the end of the run. Levelled off: from "
                                 f"then to the end every interval's MB/s stays within ±{band:g} % of the final "
                                 "level (ssdpts's rule, docs/studies.md)"))
    return Markup("").join(out)


def compare(ctx: CompareContext) -> Markup:
    """MB/s vs time per block size, one series per run; first and final MB/s side by side."""
    runs = [{b.block_size: b for b in v.summary.block_sizes} for v in ctx.views]
    sizes = [bs for bs in runs[0] if all(bs in r for r in runs[1:])]
    if not sizes:
        return Markup('<p class="warn">The runs share no block size.</p>')
    scale, unit = (60.0, "min") if max(v.summary.duration_s for v in ctx.views) >= 600 else (1.0, "s")
    panels = [(f"RND {runs[0][bs].label} W", {v.label: ([p.t_s / scale for p in r[bs].series],
                                                         [p.mb_s for p in r[bs].series])
                                              for v, r in zip(ctx.views, runs)}) for bs in sizes]
    fig = ctx.figure((11.0, 3.2 * ((len(panels) + 3) // 4) + 0.9))
    plots.small_multiples(fig, panels, f"time ({unit})", "MB/s", logy=True)
    out = [ctx.plot(fig, "mb-vs-time", "random write MB/s vs time per block size, one series per run")]
    keys = [(runs[0][bs].label, what) for bs in sizes for what in ("first interval", "final (last 10 %)")]
    vals = [[(r[bs].first_mb_s if what == "first interval" else r[bs].final_mb_s) for r in runs]
            for bs in sizes for what in ("first interval", "final (last 10 %)")]
    out.append(ctx.side_by_side("table", keys, vals, ["Block size", "Interval"], "MB/s",
                                caption="Random write MB/s (10^6 bytes/s) from FOB; Δ relative to the first run"))
    return Markup("").join(out)


def text(s: RwOverTimeSummary, clock: Clock) -> list[str]:
    lines = [f"  random writes for {s.duration_s:g} s per block size, each from its own purge (MB/s = 10^6 B/s)",
             f"  {'block':>7} {'first MB/s':>11} {'final MB/s':>11} {'min MB/s':>9} {'levelled off':>12} "
             f"{'fills':>6} {'intervals':>9}  purge"]
    for b in s.block_sizes:
        lines.append(f"  {b.label:>7} {b.first_mb_s:>11.1f} {b.final_mb_s:>11.1f} {b.min_mb_s:>9.1f} "
                     f"{levelled_off(b):>12} {b.fills:>6.2f} "
                     f"{b.intervals:>9}  {b.purge.method}{'' if b.purge.snia_purge else ' (not a SNIA purge)'}")
    return lines


def headline(s: RwOverTimeSummary) -> list[Headline]:
    return [Headline(f"rnd_{b.label}_write_final_mb_s", f"RND {b.label} write, final MB/s (last 10 % of the run)",
                     b.final_mb_s, "MB/s") for b in s.block_sizes]


RENDERERS = Renderers(html=html, compare=compare, text=text, headline=headline)
