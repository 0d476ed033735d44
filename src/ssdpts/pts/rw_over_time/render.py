"""Random-write-over-time renderers: MB/s vs time per block size, the table, text for `show`, headline."""

from __future__ import annotations

from markupsafe import Markup, escape

from ...report import plots
from ...report.context import SectionContext
from ..spec import Headline
from .summary import RwOverTimeSummary


def html(ctx: SectionContext) -> Markup:
    """MB/s vs time, one line per block size; a table of first / final / min MB/s."""
    s: RwOverTimeSummary = ctx.summary
    out = [Markup(f'<p class="note">{escape(n)}</p>') for n in s.notes]
    if not s.block_sizes:
        return Markup("").join(out)
    scale, unit = (60.0, "min") if s.duration_s >= 600 else (1.0, "s")
    series = {f"RND {b.label} W": ([p.t_s / scale for p in b.series], [p.mb_s for p in b.series])
              for b in s.block_sizes if b.series}
    fig = ctx.figure()
    plots.series_plot(fig, series, f"time ({unit})", "MB/s", logy=True)
    out.append(ctx.plot(fig, "mb-vs-time", "random write MB/s vs time, one line per block size",
                        "Each block size starts from a purged drive; MB/s = 10^6 bytes/s."))
    rows = [[b.label, b.first_mb_s, b.final_mb_s, b.min_mb_s, b.fills, b.intervals] for b in s.block_sizes]
    out.append(ctx.table("table", ["Block size", "First interval MB/s", "Final MB/s (last 10 %)", "Min MB/s",
                                   "Drive fills written", "Intervals"], rows,
                         caption="Random write throughput from FOB to the end of the run"))
    return Markup("").join(out)


def text(s: RwOverTimeSummary) -> list[str]:
    lines = [f"  random writes for {s.duration_s:g} s per block size, each from its own purge (MB/s = 10^6 B/s)",
             f"  {'block':>7} {'first MB/s':>11} {'final MB/s':>11} {'min MB/s':>9} {'fills':>6} {'intervals':>9}  purge"]
    for b in s.block_sizes:
        lines.append(f"  {b.label:>7} {b.first_mb_s:>11.1f} {b.final_mb_s:>11.1f} {b.min_mb_s:>9.1f} {b.fills:>6.2f} "
                     f"{b.intervals:>9}  {b.purge.method}{'' if b.purge.snia_purge else ' (not a SNIA purge)'}")
    return lines


def headline(s: RwOverTimeSummary) -> list[Headline]:
    return [Headline(f"rnd_{b.label}_write_final_mb_s", f"RND {b.label} write, final MB/s (last 10 % of the run)",
                     b.final_mb_s, "MB/s") for b in s.block_sizes]
