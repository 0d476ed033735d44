"""Block-size sweep renderers: MB/s vs block size per drive state, the table, text for `show`, headline."""

from __future__ import annotations

from markupsafe import Markup, escape

from ...clock import Clock
from ...render.toolkit import notes_html
from ...render import plots
from ...render.context import CompareContext, SectionContext
from ...units import bs_label
from ..spec import Headline, Renderers
from .summary import BsSweepSummary

LABELS = {"read": "SEQ read", "randread": "RND read", "write": "SEQ write", "randwrite": "RND write"}


def _rows(s: BsSweepSummary) -> list[tuple[str, str, list[float | None]]]:
    """(state, workload, MB/s per block size) for every state × workload with at least one result."""
    out = []
    for state in s.states:
        for rw in s.workloads:
            vals = [(c.mb_s if (c := s.cell(state, rw, bs)) else None) for bs in s.block_sizes]
            if any(v is not None for v in vals):
                out.append((state, rw, vals))
    return out


def html(ctx: SectionContext) -> Markup:
    """MB/s vs block size (log x), one panel per drive state and one line per workload; the table."""
    s: BsSweepSummary = ctx.summary
    out = notes_html(s.notes)
    rows = _rows(s)
    if not s.block_sizes or not rows:
        return Markup("").join(out)
    kib = [b / 1024 for b in s.block_sizes]
    panels = []
    for state in s.states:
        series = {}
        for st, rw, vals in rows:
            pts_ = [(k, v) for k, v in zip(kib, vals) if st == state and v is not None]
            if pts_:
                series[LABELS.get(rw, rw)] = ([p[0] for p in pts_], [p[1] for p in pts_])
        panels.append((f"{state} drive", series))
    fig = ctx.figure((11.0, 4.2))
    plots.small_multiples(fig, panels, "block size (KiB)", "MB/s", logx=True, logy=True, xticks=kib,
                          xticklabels=[f"{k:g}" for k in kib])
    out.append(ctx.plot(fig, "mb-vs-bs", "MB/s vs block size, fresh and used",
                        f"QD{s.iodepth}, TC{s.threads}, aligned to the block size; MB/s = 10^6 bytes/s."))
    headers = ["State", "Workload"] + [bs_label(b) for b in s.block_sizes]
    out.append(ctx.table("table", headers, [[st, LABELS.get(rw, rw)] + vals for st, rw, vals in rows],
                         caption="MB/s (10^6 bytes/s) per block size"))
    return Markup("").join(out)


def compare(ctx: CompareContext) -> Markup:
    """MB/s vs block size per drive state and workload, one series per run; the table with % deltas."""
    runs = [v.summary for v in ctx.views]
    sizes = [b for b in runs[0].block_sizes if all(b in s.block_sizes for s in runs[1:])]
    pairs = [(st, rw) for st in runs[0].states for rw in runs[0].workloads
             if all(st in s.states and rw in s.workloads for s in runs[1:])]
    if not sizes or not pairs:
        return Markup('<p class="warn">The runs share no block size, drive state and workload.</p>')
    kib = [b / 1024 for b in sizes]

    def mb_s(s, st, rw, bs):
        c = s.cell(st, rw, bs)
        return c.mb_s if c else None

    panels = [(f"{LABELS.get(rw, rw)}, {st} drive",
               {v.label: (kib, [mb_s(v.summary, st, rw, b) for b in sizes]) for v in ctx.views}) for st, rw in pairs]
    fig = ctx.figure((11.0, 3.2 * ((len(panels) + 3) // 4) + 0.9))
    plots.small_multiples(fig, panels, "block size (KiB)", "MB/s", logx=True, logy=True, xticks=kib,
                          xticklabels=[f"{k:g}" for k in kib])
    out = [ctx.plot(fig, "mb-vs-bs", "MB/s vs block size, one series per run")]
    keys = [(st, LABELS.get(rw, rw), bs_label(b)) for st, rw in pairs for b in sizes]
    vals = [[mb_s(s, st, rw, b) for s in runs] for st, rw in pairs for b in sizes]
    out.append(ctx.side_by_side("table", keys, vals, ["State", "Workload", "Block size"], "MB/s",
                                caption="MB/s (10^6 bytes/s); Δ relative to the first run"))
    return Markup("").join(out)


def text(s: BsSweepSummary, clock: Clock) -> list[str]:
    lines = [f"  MB/s (10^6 bytes/s), QD{s.iodepth} TC{s.threads}",
             "  " + f"{'state':<6} {'workload':<10}" + "".join(f"{bs_label(b):>9}" for b in s.block_sizes)]
    for st, rw, vals in _rows(s):
        lines.append("  " + f"{st:<6} {LABELS.get(rw, rw):<10}"
                     + "".join(f"{v:>9.1f}" if v is not None else f"{'–':>9}" for v in vals))
    return lines


def headline(s: BsSweepSummary) -> list[Headline]:
    """Per state: SEQ read and SEQ write MB/s at the largest block size swept."""
    if not s.block_sizes:
        return []
    bs = max(s.block_sizes)
    return [Headline(f"{state}_{rw}_{bs_label(bs)}_mb_s", f"{LABELS[rw]} {bs_label(bs)}, {state} drive", c.mb_s, "MB/s")
            for state in s.states for rw in ("read", "write") if (c := s.cell(state, rw, bs)) is not None]


RENDERERS = Renderers(html=html, compare=compare, text=text, headline=headline)
