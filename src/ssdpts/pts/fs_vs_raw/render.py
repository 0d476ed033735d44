"""fs-vs-raw renderers: MB/s vs block size on the raw device and on a file (seed 001 Figs 7-9), raw and file IOPS
per workload side by side, the file/raw ratio, text, headline."""

from __future__ import annotations

from markupsafe import Markup

from ...clock import Clock
from ...render import plots
from ...render.context import CompareContext, SectionContext
from ...units import bs_label, format_or_dash
from ..spec import Headline, Renderers
from .summary import FsVsRawSummary, WorkloadPair


def _caption(s: FsVsRawSummary) -> str:
    return (f"{s.placement} ({s.mkfs_command}); the raw workloads span the file's {s.file_bytes / 2**30:.2f} GiB "
            f"of the {s.capacity_bytes / 2**30:.2f} GiB device; {s.cell_runtime_s:g} s per workload"
            + ("; both sides filled once (SEQ writes) first" if s.fill_first else "; no fill (reads may hit unwritten blocks)"))


TABLE_HEADERS = ["Workload", "Raw IOPS", "File IOPS", "File / raw", "Raw MiB/s", "File MiB/s", "Raw mean lat (µs)",
                 "File mean lat (µs)"]


def _row(w: WorkloadPair) -> list:
    return [w.label, w.raw_iops, w.file_iops, w.iops_ratio, w.raw_mib_s, w.file_mib_s, w.raw_lat_mean_us,
            w.file_lat_mean_us]


MB_S = "MB/s (10^6 bytes/s)"


def mb_vs_bs(ctx: SectionContext, s: FsVsRawSummary) -> list[Markup]:
    """Seed 001 Figs 7-9: MB/s vs block size, one panel per access (SEQ read, RND read, SEQ write...), the raw
    device and the file as two lines; drawn when an access ran at two block sizes or more."""
    lines = s.by_access()
    if not lines:
        return []
    raw, on_file = "raw device (no partition)", f"file on {s.filesystem} (partition)"
    sizes = sorted({w.block_size for ws in lines.values() for w in ws})
    panels = [(access, {raw: ([w.block_size / 1024 for w in ws], [w.raw_mb_s for w in ws]),
                        on_file: ([w.block_size / 1024 for w in ws], [w.file_mb_s for w in ws])})
              for access, ws in lines.items()]
    fig = ctx.figure((11.0, 3.6 * ((len(panels) + 3) // 4) + 0.9))
    plots.small_multiples(fig, panels, "block size (KiB)", MB_S, logx=True, xticks=[b / 1024 for b in sizes],
                          xticklabels=[bs_label(b) for b in sizes])
    fill = "after one SEQ fill of each side" if s.fill_first else "no fill first"
    rows = [[access, bs_label(w.block_size), w.block_size, w.raw_mb_s, w.file_mb_s]
            for access, ws in lines.items() for w in ws]
    return [ctx.plot(fig, "mb-vs-bs", "MB/s vs block size, raw device and file system",
                     f"{_caption(s)}; {fill}; MB/s = 10^6 bytes/s."),
            ctx.table("mb-vs-bs", ["Workload", "Block size", "Block size (bytes)", f"Raw {MB_S}", f"File {MB_S}"],
                      rows, caption="the lines of the chart above")]


def html(ctx: SectionContext) -> Markup:
    s: FsVsRawSummary = ctx.summary
    if not s.workloads:
        return Markup("")
    out = mb_vs_bs(ctx, s)
    fig = ctx.figure()
    plots.bar_plot(fig, [w.label for w in s.workloads],
                   {"raw device": [w.raw_iops for w in s.workloads], f"file on {s.filesystem}": [w.file_iops for w in s.workloads]},
                   "workload", "IOPS")
    out.append(ctx.plot(fig, "iops", "IOPS on the raw device and on a file", _caption(s)))
    out.append(ctx.table("table", TABLE_HEADERS, [_row(w) for w in s.workloads], caption=_caption(s)))
    out += [Markup('<p class="note">{}</p>').format(n) for n in s.notes]
    return Markup("").join(out)


def compare(ctx: CompareContext) -> Markup:
    """The file/raw ratio of every workload all runs have, one bar per run; the table with % deltas."""
    runs = [v.summary for v in ctx.views]
    rows = [row for row in ([r.pair(w.name) for r in runs] for w in runs[0].workloads) if all(row)]
    if not rows:
        return Markup('<p class="warn">The runs share no workload.</p>')
    labels = [row[0].label for row in rows]
    ratios = [[p.iops_ratio for p in row] for row in rows]
    fig = ctx.figure()
    plots.bar_plot(fig, labels, {v.label: [r[i] for r in ratios] for i, v in enumerate(ctx.views)}, "workload",
                   "file / raw IOPS")
    return Markup("").join([
        ctx.plot(fig, "ratio", "file / raw IOPS ratio, one bar per run"),
        ctx.side_by_side("table", [(lab,) for lab in labels], ratios, ["Workload"], "file / raw",
                         caption="file / raw IOPS per workload; Δ relative to the first run")])



def text(s: FsVsRawSummary, clock: Clock) -> list[str]:
    header = [f"  {s.placement}; raw span = file size {s.file_bytes / 2**30:.2f} GiB",
              f"  {'workload':<18} {'raw IOPS':>11} {'file IOPS':>11} {'file/raw':>9}"]
    return header + [f"  {w.label:<18} {format_or_dash(w.raw_iops, '11,.0f')} {format_or_dash(w.file_iops, '11,.0f')} "
                     f"{format_or_dash(w.iops_ratio, '9.3f')}" for w in s.workloads]


def headline(s: FsVsRawSummary) -> list[Headline]:
    return [Headline(f"{w.name}_file_raw_ratio", f"{w.label}: file / raw IOPS", w.iops_ratio, "×")
            for w in s.workloads]


RENDERERS = Renderers(html=html, compare=compare, text=text, headline=headline)
