"""span-sweep renderers: RND read (and write) IOPS vs span (log x), the table of spans, text, headline."""

from __future__ import annotations

from markupsafe import Markup

from ...clock import Clock
from ...render import plots
from ...render.context import CompareContext, SectionContext
from ...units import bs_label, format_or_dash
from ..spec import Headline, Renderers
from .summary import SpanSweepSummary


def _gib(n: int) -> float:
    return n / 2**30


def _caption(s: SpanSweepSummary) -> str:
    return (f"RND {bs_label(s.block_size)}, {s.cell_runtime_s:g} s per span; the largest span written "
            f"sequentially first ({s.filled_bytes / 2**30:.2f} GiB); GiB = 2^30 bytes")


def html(ctx: SectionContext) -> Markup:
    s: SpanSweepSummary = ctx.summary
    x = [_gib(p.span_bytes) for p in s.points]
    series = {f"RND {bs_label(s.block_size)} read": (x, [p.read_iops for p in s.points])}
    if any(p.write for p in s.points):
        series[f"RND {bs_label(s.block_size)} write"] = (x, [p.write_iops for p in s.points])
    fig = ctx.figure()
    plots.series_plot(fig, series, "LBA span (GiB, log scale)", "IOPS", logx=True, ylim0=True, xticks=x,
                      xticklabels=[f"{v:.3g}" for v in x])
    out = [ctx.plot(fig, "iops-vs-span", "IOPS vs LBA span", _caption(s))]
    rows = [[_gib(p.span_bytes), 100 * p.span_fraction, p.read_iops, p.read_lat_mean_us, p.read_p99_us, p.write_iops]
            for p in s.points]
    out.append(ctx.table("table", ["Span (GiB)", "Span (% of capacity)", "Read IOPS", "Read mean lat (µs)",
                                   "Read p99 lat (µs)", "Write IOPS"], rows, caption=_caption(s)))
    out += [Markup('<p class="note">{}</p>').format(n) for n in s.notes]
    return Markup("").join(out)


def compare(ctx: CompareContext) -> Markup:
    fig = ctx.figure()
    plots.series_plot(fig, {v.label: ([_gib(p.span_bytes) for p in v.summary.points],
                                      [p.read_iops for p in v.summary.points]) for v in ctx.views},
                      "LBA span (GiB, log scale)", "RND read IOPS", logx=True, ylim0=True)
    return ctx.plot(fig, "iops-vs-span", "RND read IOPS vs LBA span, one line per run")



def text(s: SpanSweepSummary, clock: Clock) -> list[str]:
    lines = [f"  {_caption(s)}", f"  {'span GiB':>10} {'read IOPS':>11} {'mean µs':>9} {'p99 µs':>9} {'write IOPS':>11}"]
    return lines + [f"  {_gib(p.span_bytes):>10.3g} {p.read_iops:>11,.0f} {p.read_lat_mean_us:>9.1f} "
                    f"{format_or_dash(p.read_p99_us, '9.1f')} {format_or_dash(p.write_iops, '11,.0f')}" for p in s.points]


def headline(s: SpanSweepSummary) -> list[Headline]:
    return [Headline("read_iops_largest_over_smallest_span", "RND read IOPS: largest span / smallest span",
                     s.read_iops_drop, "×")]


RENDERERS = Renderers(html=html, compare=compare, text=text, headline=headline)
