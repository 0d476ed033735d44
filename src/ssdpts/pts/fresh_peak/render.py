"""Fresh-peak renderers: FOB peak beside the steady state of the same run, text for `show`, headline."""

from __future__ import annotations

from markupsafe import Markup

from ...clock import Clock
from ...render import plots
from ...render.context import CompareContext, SectionContext
from ...units import bs_label
from ..spec import Headline, Renderers
from .summary import FreshPeakSummary, PeakResult

LABELS = {"randread": "RND read", "randwrite": "RND write", "read": "SEQ read", "write": "SEQ write"}


def _name(s: FreshPeakSummary, r: PeakResult) -> str:
    return f"{LABELS.get(r.rw, r.rw)} {bs_label(s.block_size)}"


def html(ctx: SectionContext) -> Markup:
    """FOB peak IOPS beside the steady-state IOPS of the same run; a table with mean latency."""
    s: FreshPeakSummary = ctx.summary
    if not s.results:
        return Markup("")
    groups = [_name(s, r) for r in s.results]
    series = {"fresh (FOB peak)": [r.iops for r in s.results]}
    if any(r.steady for r in s.results):
        series["steady state"] = [r.steady.iops if r.steady else None for r in s.results]
    fig = ctx.figure()
    plots.bar_plot(fig, groups, series, "workload", "IOPS")
    out = [ctx.plot(fig, "fresh-vs-steady", "FOB peak IOPS vs steady state",
                    f"TC{s.threads}/QD{s.iodepth}, {s.runtime_s:g} s right after the purge."
                    + ("" if len(series) > 1 else " No steady-state test in this run to compare with."))]
    rows = [[g, r.iops, r.latency.mean_us, r.latency.p("99"), r.mb_s, r.steady.iops if r.steady else None,
             r.fresh_over_steady, r.steady.source if r.steady else ""] for g, r in zip(groups, s.results)]
    out.append(ctx.table("table", ["Workload", "FOB IOPS", "Mean latency (µs)", "p99 (µs)", "MB/s",
                                   "Steady-state IOPS", "FOB / steady", "Steady-state source"], rows,
                         caption="Fresh-out-of-box peak, the state vendors quote"))
    return Markup("").join(out)


def compare(ctx: CompareContext) -> Markup:
    """FOB peak IOPS per workload, one bar per run; the table with % deltas."""
    runs = [v.summary for v in ctx.views]
    same_bs = all(s.block_size == runs[0].block_size for s in runs[1:])
    rws = [r.rw for r in runs[0].results if same_bs and all(s.result(r.rw) for s in runs[1:])]
    if not rws:
        return Markup('<p class="warn">The runs share no fresh-peak workload at the same block size.</p>')
    groups = [_name(runs[0], runs[0].result(rw)) for rw in rws]
    fig = ctx.figure()
    plots.bar_plot(fig, groups, {v.label: [v.summary.result(rw).iops for rw in rws] for v in ctx.views},
                   "workload", "IOPS")
    out = [ctx.plot(fig, "fresh-peak", "FOB peak IOPS, one bar per run")]
    out.append(ctx.side_by_side("table", [(g,) for g in groups], [[s.result(rw).iops for s in runs] for rw in rws],
                                ["Workload"], "FOB IOPS", caption="Fresh-out-of-box peak IOPS; Δ relative to the first run"))
    return Markup("").join(out)


def text(s: FreshPeakSummary, clock: Clock) -> list[str]:
    lines = [f"  {s.state}: TC{s.threads}/QD{s.iodepth}, {s.runtime_s:g} s per workload",
             f"  {'workload':<14} {'FOB IOPS':>11} {'mean µs':>9} {'p99 µs':>9} {'steady IOPS':>12} {'FOB/steady':>10}"]
    for r in s.results:
        p99 = r.latency.p("99")
        lines.append(f"  {_name(s, r):<14} {r.iops:>11,.0f} {r.latency.mean_us:>9.1f} "
                     + (f"{p99:>9.1f}" if p99 is not None else f"{'–':>9}")
                     + (f" {r.steady.iops:>12,.0f}" if r.steady else f" {'–':>12}")
                     + (f" {r.fresh_over_steady:>10.2f}" if r.fresh_over_steady is not None else f" {'–':>10}")
                     + (f"  ({r.steady.source})" if r.steady else ""))
    return lines


def headline(s: FreshPeakSummary) -> list[Headline]:
    return [Headline(f"fob_{r.rw}_{bs_label(s.block_size)}_iops", f"{_name(s, r)} IOPS, fresh out of box",
                     r.iops, "IOPS") for r in s.results]


RENDERERS = Renderers(html=html, compare=compare, text=text, headline=headline)
