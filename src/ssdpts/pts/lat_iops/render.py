"""lat-iops renderers: per block size x mix, the shared latency-statistics charts (pts/demand_render.py) and a
table of every point and direction; compare overlays each family across runs."""

from __future__ import annotations

from markupsafe import Markup, escape

from ...render.context import CompareContext, SectionContext
from ...render.toolkit import notes_html
from ...units import bs_label
from .. import demand_render
from ..spec import Headline, Renderers
from .summary import LatIopsFamily, LatIopsSummary


def family_title(f: LatIopsFamily) -> str:
    return f"RND {bs_label(f.block_size)} {f.read_pct}/{100 - f.read_pct} (R/W)"


def method(s: LatIopsSummary) -> str:
    done = [f"{p.what} ({p.seconds:,.1f} s, {p.bytes_written / 2**30:,.2f} GiB written)" for p in s.preconditioning]
    pre = ((f"Purged ({s.purge.method}), then p" if s.purge else "P") + "reconditioned first, no steady-state "
           "judgement: " + "; ".join(done) + ".") if done else ""
    w = s.window_rounds
    return (f"{s.rounds} rounds, every point once per round: {s.warmup_s:g} s warm-up (fio ramp_time, not measured) "
            f"+ {s.cell_runtime_s:g} s measured. Each point is the mean of rounds {w[0]}–{w[-1]} "
            f"({len(w)} rounds; no steady-state test). TC = threads, QD = queue depth per thread. {pre}").strip()


def html(ctx: SectionContext) -> Markup:
    s: LatIopsSummary = ctx.summary
    out = notes_html(s.notes)
    out.append(Markup(f'<p class="note">{escape(method(s))}</p>'))
    for f in s.families:
        title = family_title(f)
        out.append(Markup(f"<h3>{escape(title)}</h3>"))
        out.append(demand_render.stat_figures(ctx, f.points, f.prefix, title))
        out.append(ctx.table(f.prefix, demand_render.DIRECTION_HEADERS[:-1] + ["IOPS (read + write)"],
                             [r + [p.iops] for p in f.points for r in demand_render.point_direction_rows([p])],
                             caption=f"{title}: every TC × QD point per direction, mean of the window rounds"))
    return Markup("").join(out)


def compare(ctx: CompareContext) -> Markup:
    """Each block size x mix that every run has, overlaid (one colour per run, a line style per TC)."""
    first: LatIopsSummary = ctx.views[0].summary
    out = []
    for f in first.families:
        runs = [(v.label, fam.points) for v in ctx.views if (fam := v.summary.family(f.block_size, f.read_pct))]
        if len(runs) < len(ctx.views):
            out.append(Markup(f'<p class="warn">{escape(family_title(f))}: not in every run, not compared.</p>'))
            continue
        out.append(Markup(f"<h3>{escape(family_title(f))}</h3>"))
        out.append(demand_render.stat_compare(ctx, runs, f.prefix, family_title(f)))
    return Markup("").join(out)


def text(s: LatIopsSummary) -> list[str]:
    lines = [f"  {method(s)}"]
    for f in s.families:
        lines.append(f"  {family_title(f)}")
        lines.append(f"    {'TC':>3} {'QD':>4} {'IOPS':>11}  dir    {'mean µs':>9} {'p99 µs':>9} {'p99.99 µs':>10} "
                     f"{'max µs':>9}")
        for p in f.points:
            for d in f.directions:
                lat = demand_render.direction_lat(p, d)
                if lat is None:
                    continue
                cols = [demand_render.stat_us(lat, k) for k in ("mean", "99", "99.99", "max")]
                shown = ["–" if v is None else f"{v:,.1f}" for v in cols]
                lines.append(f"    {p.tc:>3} {p.qd:>4} {p.iops:>11,.0f}  {d:<5}  {shown[0]:>9} {shown[1]:>9} "
                             f"{shown[2]:>10} {shown[3]:>9}")
    return lines


def headline(s: LatIopsSummary) -> list[Headline]:
    """Per family: the highest IOPS, and per direction the mean latency at the smallest OIO and the p99.99 at
    the largest (the reviewers' QD1 and high-QD latency figures)."""
    out = []
    for f in s.families:
        if not f.points:
            continue
        title, key = family_title(f), f.prefix.lower().replace(".", "_")
        top = max(f.points, key=lambda p: p.iops)
        out.append(Headline(f"lat_iops_{key}_max_iops", f"{title} highest IOPS (TC{top.tc}/QD{top.qd})", top.iops,
                            "IOPS"))
        low, high = min(f.points, key=lambda p: p.oio), max(f.points, key=lambda p: p.oio)
        for d in f.directions:
            out.append(Headline(f"lat_iops_{key}_{d}_tc{low.tc}_qd{low.qd}_mean_us",
                                f"{title} {d} mean latency at TC{low.tc}/QD{low.qd}",
                                demand_render.stat_us(demand_render.direction_lat(low, d), "mean"), "µs"))
            out.append(Headline(f"lat_iops_{key}_{d}_tc{high.tc}_qd{high.qd}_p99_99_us",
                                f"{title} {d} p99.99 latency at TC{high.tc}/QD{high.qd}",
                                demand_render.stat_us(demand_render.direction_lat(high, d), "99.99"), "µs"))
    return out


RENDERERS = Renderers(html=html, compare=compare, text=text, headline=headline)
