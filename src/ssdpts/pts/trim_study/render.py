"""TRIM study renderers: IOPS vs time with the TRIM marked, the TRIM and before/after table, text, headline."""

from __future__ import annotations

from markupsafe import Markup

from ...clock import Clock
from ...render import plots
from ...render.context import CompareContext, SectionContext
from ...units import bs_label, format_or_dash
from ..spec import Headline, Renderers
from .summary import AFTER, BEFORE, TrimStudySummary

METRICS = (("write_iops", "write IOPS"), ("read_iops", "read IOPS"), ("write_lat_mean_us", "write mean latency (µs)"),
           ("read_lat_mean_us", "read mean latency (µs)"))


def _trim_line(s: TrimStudySummary) -> str:
    rate = f"{s.trim.gib_per_s:,.2f} GiB/s" if s.trim.gib_per_s is not None else "rate not available"
    return (f"{s.trim.command}: {s.trim.seconds:.3f} s for {s.trim.bytes_trimmed / 2**30:.3f} GiB "
            f"({s.trim.bytes_trimmed} bytes of {s.trim.space_bytes} trimmable), {rate}")


def _iops_figure(ctx, series: dict, spans: list[tuple[float, float, str]]):
    fig = ctx.figure()
    plots.series_plot(fig, series, "time (s): cell run times back to back, the TRIM at its own length", "IOPS", ylim0=True)
    ax = fig.axes[0]
    for start, seconds, label in spans:
        ax.axvspan(start, start + seconds, color="0.6", alpha=0.5, label=label)
        ax.axvline(start, color="0.3", linestyle="--", linewidth=1)
    ax.legend(fontsize=8)
    return fig


def html(ctx: SectionContext) -> Markup:
    s: TrimStudySummary = ctx.summary
    bs = bs_label(s.block_size)
    gap = [(s.trim_start_s, float("nan"))]          # no line drawn across the TRIM
    series = {f"RND {bs} {d}": tuple(zip(*[(r.start_s, getattr(r, f"{d}_iops")) for r in s.of(BEFORE)] + gap
                                         + [(r.start_s, getattr(r, f"{d}_iops")) for r in s.of(AFTER)]))
              for d in ("write", "read")}
    fig = _iops_figure(ctx, series, [(s.trim_start_s, s.trim.seconds, f"TRIM ({s.method}, {s.trim.seconds:.2f} s)")])
    out = [ctx.plot(fig, "iops-vs-time", "IOPS vs time, TRIM marked",
                    f"one point per round, at its start (a round: the write cell, then the read cell, {s.cell_runtime_s:g} s each); "
                    f"{_trim_line(s)}")]
    out.append(ctx.table("trim", ["Command", "Seconds", "Bytes trimmed", "Trimmable bytes", "GiB trimmed", "GiB/s"],
                         [[s.trim.command, s.trim.seconds, s.trim.bytes_trimmed, s.trim.space_bytes,
                           s.trim.bytes_trimmed / 2**30, s.trim.gib_per_s]],
                         caption="The TRIM, timed (trimmable: the device's size, or the file system's free space "
                                 "when fstrim ran; GiB = 2^30 bytes)"))
    rows = [[label, s.level(BEFORE, m), s.level(AFTER, m), s.of(AFTER)[-1].__dict__[m] if s.of(AFTER) else None]
            for m, label in METRICS]
    out.append(ctx.table("before-after", ["Metric", "Before (mean of rounds)", "First round after",
                                          "Last round after"], rows,
                         caption=f"RND {bs}, {len(s.of(BEFORE))} rounds before and {len(s.of(AFTER))} after the TRIM"))
    out += [Markup('<p class="note">{}</p>').format(n) for n in s.notes]
    return Markup("").join(out)


def compare(ctx: CompareContext) -> Markup:
    runs = [v.summary for v in ctx.views]
    rows = [(v.label,) for v in ctx.views]
    values = [[r.trim.seconds, r.trim.gib_per_s, r.level(BEFORE, "write_iops"), r.level(AFTER, "write_iops")]
              for r in runs]
    return ctx.table("table", ["Run", "TRIM seconds", "TRIM GiB/s", "Write IOPS before", "Write IOPS first after"],
                     [list(k) + v for k, v in zip(rows, values)], caption="TRIM duration and effect per run")



def text(s: TrimStudySummary, clock: Clock) -> list[str]:
    lines = [f"  {_trim_line(s)}", f"  {'':<12} {'before':>11} {'after (1st)':>11}"]
    for m, label in METRICS[:2]:
        lines.append(f"  {label:<12} {format_or_dash(s.level(BEFORE, m)):>11} {format_or_dash(s.level(AFTER, m)):>11}")
    return lines


def headline(s: TrimStudySummary) -> list[Headline]:
    return [Headline("trim_seconds", f"TRIM duration ({s.method})", s.trim.seconds, "s"),
            Headline("trim_gib_s", "TRIM rate", s.trim.gib_per_s, "GiB/s"),
            Headline("write_iops_before", f"RND {bs_label(s.block_size)} write IOPS before TRIM",
                     s.level(BEFORE, "write_iops"), "IOPS"),
            Headline("write_iops_after", f"RND {bs_label(s.block_size)} write IOPS right after TRIM",
                     s.level(AFTER, "write_iops"), "IOPS")]


RENDERERS = Renderers(html=html, compare=compare, text=text, headline=headline)
