"""Purge-study renderers: mean burst IOPS per method as bars, the table with each method's share of the reference."""

from __future__ import annotations

from markupsafe import Markup

from ...clock import Clock
from ...render import plots
from ...render.context import SectionContext
from ...render.toolkit import notes_html
from ...units import format_duration
from ..spec import Headline, Renderers
from .summary import PurgeStudySummary


def _caption(s: PurgeStudySummary) -> str:
    return (f"Before every method: SEQ writes of {s.dirty_bytes / 2**30:,.2f} GiB and RND 4K writes for "
            f"{format_duration(s.dirty_rnd_s)}; after it: {s.burst_cells} x {format_duration(s.burst_s)} RND 4K "
            f"write bursts at TC{s.threads}/QD{s.iodepth}. Reference: "
            + (f"{s.reference} (the first SNIA purge)" if s.reference else "none (no SNIA purge measured)"))


def html(ctx: SectionContext) -> Markup:
    s: PurgeStudySummary = ctx.summary
    out = notes_html(s.notes)
    measured = [m for m in s.methods if m.mean_iops is not None]
    if measured:
        fig = ctx.figure()
        groups = [f"{m.applied}\n({'SNIA purge' if m.snia_purge else 'not a SNIA purge'})" for m in measured]
        plots.bar_plot(fig, groups, {"mean RND 4K write IOPS": [m.mean_iops for m in measured]},
                       "method applied to the used drive", "IOPS (RND 4K write)")
        out.append(ctx.plot(fig, "iops-by-method", "RND 4K write IOPS after each purge method", _caption(s)))
    rows = [[m.method, m.label, m.mean_iops, m.percent_of_reference, m.method_s,
             ", ".join(f"{x:,.0f}" for x in m.burst_iops) or "not run", m.note] for m in s.methods]
    out.append(ctx.table("methods", ["Method", "What ran", "Mean IOPS", "% of reference", "Method time (s)",
                                     "IOPS per burst", "Note"], rows, caption=_caption(s)))
    return Markup("").join(out)


def text(s: PurgeStudySummary, clock: Clock) -> list[str]:
    lines = [f"  reference: {s.reference or 'none (no SNIA purge measured)'}"]
    for m in s.methods:
        if m.mean_iops is None:
            lines.append(f"  {m.method:10} {m.label}: {m.note}")
            continue
        share = f"{m.percent_of_reference:5.1f} % of the reference" if m.percent_of_reference is not None else \
            "no reference"
        lines.append(f"  {m.method:10} {m.mean_iops:>12,.0f} IOPS  {share}  ({m.label})")
    return lines


def headline(s: PurgeStudySummary) -> list[Headline]:
    return [Headline(f"purge_study_{m.method.replace('-', '_')}_pct", f"RND 4K write IOPS after {m.method}, % of "
                     "the SNIA purge's", m.percent_of_reference, "%") for m in s.methods if m.method != s.reference]


RENDERERS = Renderers(html=html, text=text, headline=headline)
