"""file-reuse renderers: IOPS per workload on the created, reused (and recreated) file, the ratio, the file's state."""

from __future__ import annotations

from markupsafe import Markup

from ...clock import Clock
from ...render import plots
from ...render.context import CompareContext, SectionContext
from ...units import format_or_dash
from ..spec import Headline, Renderers
from .summary import CREATED, REUSED, FileReuseSummary


def _caption(s: FileReuseSummary) -> str:
    return (f"{s.placement}; {s.file_bytes / 2**20:,.1f} MiB file (MiB = 2^20 bytes), {s.cell_runtime_s:g} s per "
            f"workload; fio overwrite={int(s.overwrite)}")


def _lat(s: FileReuseSummary, pass_name: str, w: str) -> float | None:
    p = s.pass_(pass_name)
    return p.cells[w].lat_mean_us if p and w in p.cells else None


def _rows(s: FileReuseSummary) -> tuple[list[str], list[list]]:
    others = [p.name for p in s.passes if p.name != CREATED]
    headers = ["Workload", "Created IOPS"] + [h for o in others for h in (f"{o.capitalize()} IOPS", f"{o} / created")]
    headers += ["Created mean lat (µs)", "Reused mean lat (µs)"]
    rows = [[s.labels[w], s.iops(CREATED, w)] + [v for o in others for v in (s.iops(o, w), s.ratio(o, w))]
            + [_lat(s, CREATED, w), _lat(s, REUSED, w)] for w in s.workloads]
    return headers, rows


def html(ctx: SectionContext) -> Markup:
    s: FileReuseSummary = ctx.summary
    fig = ctx.figure()
    plots.bar_plot(fig, [s.labels[w] for w in s.workloads],
                   {f"{p.name} file": [s.iops(p.name, w) for w in s.workloads] for p in s.passes}, "workload", "IOPS")
    out = [ctx.plot(fig, "iops", "IOPS on a file fio created vs the same file reused", _caption(s))]
    headers, rows = _rows(s)
    out.append(ctx.table("table", headers, rows, caption=_caption(s)))
    out.append(ctx.table("file-state", ["Pass", "Deleted first", "File before", "File after", "fio laid it out"],
                         [[p.name, p.removed_first, p.before.describe(), p.after.describe(), p.fio_laid_out]
                          for p in s.passes],
                         caption="The file's extent map (FIEMAP) before and after each pass: written vs allocated "
                                 "but unwritten (fallocate) bytes"))
    out += [Markup('<p class="note">{}</p>').format(n) for n in s.notes]
    return Markup("").join(out)


def compare(ctx: CompareContext) -> Markup:
    runs = [v.summary for v in ctx.views]
    names = [w for w in runs[0].workloads if all(w in r.workloads for r in runs)]
    return ctx.side_by_side("table", [(runs[0].labels[w],) for w in names],
                            [[r.ratio(REUSED, w) for r in runs] for w in names], ["Workload"], "reused / created",
                            caption="IOPS on the reused file over IOPS on the file fio created; Δ relative to the first run")



def text(s: FileReuseSummary, clock: Clock) -> list[str]:
    lines = [f"  {_caption(s)}", f"  {'workload':<16} {'created':>11} {'reused':>11} {'reused/created':>15}"]
    return lines + [f"  {s.labels[w]:<16} {format_or_dash(s.iops(CREATED, w), '11,.0f')} "
                    f"{format_or_dash(s.iops(REUSED, w), '11,.0f')} {format_or_dash(s.ratio(REUSED, w), '15.3f')}"
                    for w in s.workloads]


def headline(s: FileReuseSummary) -> list[Headline]:
    return [Headline(f"{w}_reused_created_ratio", f"{s.labels[w]}: reused / created file IOPS", s.ratio(REUSED, w), "×")
            for w in s.workloads]


RENDERERS = Renderers(html=html, compare=compare, text=text, headline=headline)
