"""Variants renderers: the same workload in each variant side by side, text for `show`, headline."""

from __future__ import annotations

import textwrap

from markupsafe import Markup, escape

from ...clock import Clock
from ...render.toolkit import notes_html
from ...render import plots
from ...render.context import CompareContext, SectionContext
from ...units import bs_label
from ..spec import Headline, Renderers
from .summary import VariantResult, VariantsSummary, VariantWorkload


def workload_label(w: VariantWorkload) -> str:
    return f"{w.rw} {bs_label(w.block_size)}"


def _by_workload_chart(ctx: SectionContext, s: VariantsSummary) -> Markup:
    """Several workloads: one group of bars per workload, one bar per variant, in MB/s (block sizes differ)."""
    wls = s.all_workloads
    names = list(dict.fromkeys(v.variant for v in s.variants))
    labels = {v.variant: v.label for v in s.variants}
    fig = ctx.figure((10.0, 4.8))
    plots.bar_plot(fig, [workload_label(w) for w in wls],
                   {labels[n]: [(r.mb_s if (r := s.variant(n, w.rw, w.block_size)) else None) for w in wls]
                    for n in names}, "workload", "MB/s (10^6 bytes/s)")
    fig.axes[0].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return ctx.plot(fig, "variants-by-workload", "each workload in each variant, grouped by workload",
                    "MB/s = 10^6 bytes/s. Bars labelled 'page cache' are the host's page cache, not the drive.")


def ran_at(v: VariantResult, w: VariantWorkload) -> str:
    """The jobs and queue depth this variant ran (a working set may set its own jobs: seed 002's 32)."""
    return f"TC{v.threads or w.threads}/QD{v.iodepth or w.iodepth}"


def _cache_text(s: VariantsSummary) -> str:
    return (f"{s.cache_bytes / 2**30:.2f} GiB ({s.cache_source})" if s.cache_bytes else "unknown")


def html(ctx: SectionContext) -> Markup:
    """Bars side by side: IOPS per variant; the page-cache one labelled as such; the table."""
    s: VariantsSummary = ctx.summary
    out = notes_html(s.notes)
    if not s.variants:
        return Markup("").join(out)
    w = s.workload
    if len(s.all_workloads) > 1:
        out.append(_by_workload_chart(ctx, s))
    else:
        fig = ctx.figure((10.0, 4.8))
        plots.bar_plot(fig, [textwrap.fill(v.label, 16) for v in s.variants], {"IOPS": [v.iops for v in s.variants]},
                       "variant", "IOPS")
        for lab in fig.axes[0].get_xticklabels():
            lab.set_rotation(0)
            lab.set_ha("center")
            lab.set_fontsize(7)
        out.append(ctx.plot(fig, "variants", "the same workload in each variant, side by side",
                            f"{w.rw} {bs_label(w.block_size)}; each variant's jobs and queue depth in the table. "
                            "A bar labelled 'page cache' is the host's page cache, not the drive."))
    rows = [[workload_label(wl), v.label, v.iops, v.mb_s, v.lat_mean_us, v.lat_max_us, v.working_set_bytes / 2**30,
             ran_at(v, wl), v.vs_baseline] for wl in s.all_workloads for v in s.results_of(wl)]
    out.append(ctx.table("table", ["Workload", "Variant", "IOPS", "MB/s", "Mean latency (µs)", "Max latency (µs)",
                                   "Working set (GiB)", "Jobs / QD", "× incompressible"], rows,
                         caption=f"Cache size for the working-set variants: {_cache_text(s)}; each variant at the "
                                 "jobs and queue depth it ran"))
    return Markup("").join(out)


def compare(ctx: CompareContext) -> Markup:
    """IOPS of every (workload, variant) the runs share, one bar per run; the table with % deltas."""
    runs = [v.summary for v in ctx.views]
    shared = [(w, x) for w in runs[0].all_workloads for x in runs[0].results_of(w)
              if all(s.variant(x.variant, w.rw, w.block_size) for s in runs[1:])]
    if not shared:
        return Markup('<p class="warn">The runs share no variant of the same workload.</p>')
    several = len({(w.rw, w.block_size) for w, _ in shared}) > 1
    labels = [(f"{workload_label(w)}: " if several else "") + x.label for w, x in shared]
    fig = ctx.figure((10.0, 4.8))
    plots.bar_plot(fig, [textwrap.fill(lab, 16) for lab in labels],
                   {v.label: [v.summary.variant(x.variant, w.rw, w.block_size).iops for w, x in shared]
                    for v in ctx.views}, "variant", "IOPS")
    out = [ctx.plot(fig, "variants", "IOPS per variant, one bar per run",
                    "Bars labelled 'page cache' are the host's page cache, not the drive.")]
    out.append(ctx.side_by_side("table", [(lab,) for lab in labels],
                                [[s.variant(x.variant, w.rw, w.block_size).iops for s in runs] for w, x in shared],
                                ["Variant"], "IOPS", caption="IOPS per variant; Δ relative to the first run"))
    return Markup("").join(out)


def text(s: VariantsSummary, clock: Clock) -> list[str]:
    lines = [f"  variants run back to back in this order; cache for the working-set variants: {_cache_text(s)}"]
    for w in s.all_workloads:
        lines += [f"  {workload_label(w)}",
                  f"  {'variant':<48} {'ran at':>10} {'IOPS':>11} {'MB/s':>9} {'mean µs':>9} {'WS GiB':>8} "
                  f"{'x incompr.':>10}"]
        for v in s.results_of(w):
            lines.append(f"  {v.label:<48} {ran_at(v, w):>10} {v.iops:>11,.0f} {v.mb_s:>9.1f} {v.lat_mean_us:>9.1f} "
                         f"{v.working_set_bytes / 2**30:>8.2f} "
                         + (f"{v.vs_baseline:>10.2f}" if v.vs_baseline is not None else f"{'–':>10}"))
    return lines


def headline(s: VariantsSummary) -> list[Headline]:
    several = len(s.all_workloads) > 1
    return [Headline(f"{v.variant}_iops" + (f"_{w.rw}_{bs_label(w.block_size)}" if several else ""),
                     f"{workload_label(w)} IOPS, {v.label}", v.iops, "IOPS")
            for w in s.all_workloads for v in s.results_of(w)]


RENDERERS = Renderers(html=html, compare=compare, text=text, headline=headline)
