"""SLC-cache renderers: the bandwidth-vs-time chart with its steps, text for `show`, headline figures."""

from __future__ import annotations

from markupsafe import Markup, escape

from ...clock import Clock
from ...render.toolkit import notes_html
from .steps import MIB, Step
from ...render import plots
from ...render.context import CompareContext, SectionContext
from ..spec import Headline, Renderers
from .summary import SlcCacheSummary


def _mb_s(st: Step) -> float:
    return st.mib_s * MIB / 1e6


def html(ctx: SectionContext) -> Markup:
    """Sequential-write MiB/s vs time with the detected steps, the step table and the cache estimate."""
    s: SlcCacheSummary = ctx.summary
    out = notes_html(s.notes)
    if s.drop_detected and s.cache_bytes is not None:
        out.append(Markup(
            f"<p><b>SLC cache estimate: {s.cache_gib:.2f} GiB</b> ({s.cache_bytes / 1e9:.2f} GB) written at "
            f"{s.cache_speed_mib_s:.0f} MiB/s before the first drop at {s.first_drop_s:.1f} s "
            f"(then {s.after_drop_mib_s:.0f} MiB/s); {share_text(s)}; {escape(resolution_text(s))}.</p>"))
    else:
        out.append(Markup(f'<p class="note">No drop detected: {escape(s.note)}</p>'))
    ref = s.reference
    if ref is not None and ref.slc_capacity_bytes:
        out.append(Markup(f'<p class="note">Reference ({escape(ref.source)}): {ref.slc_capacity_bytes / 2**30:.2f} GiB'
                          + (f", estimate error {ref.error * 100:+.1f} %" if ref.error is not None else "") + ".</p>"))
    if s.series:
        fig = ctx.figure()
        series = {"sequential write": ([p.t_s for p in s.series], [p.mib_s for p in s.series])}
        styles = {"sequential write": {"marker": None}}
        for st in s.steps:
            label = f"step {st.index + 1}: {st.mib_s:.0f} MiB/s, {st.duration_s:.1f} s"
            series[label] = ([st.start_s, st.end_s], [st.mib_s, st.mib_s])
            styles[label] = {"linestyle": "--", "linewidth": 2.0, "marker": None}
        plots.series_plot(fig, series, "time (s)", "MiB/s", styles=styles, ylim0=True)
        out.append(ctx.plot(fig, "mib-vs-time", "sequential write MiB/s vs time (SLC cache steps)",
                            "Bandwidth per interval of one continuous SEQ write from FOB; dashed: detected steps."))
    out.append(_fill_levels_html(ctx, s))
    rows = [[st.index + 1, st.start_s, st.duration_s, st.mib_s, _mb_s(st), st.bytes / 2**30] for st in s.steps]
    out.append(ctx.table("steps", ["Step", "Start (s)", "Duration (s)", "MiB/s", "MB/s", "Written (GiB)"], rows,
                         caption="Plateaus of the sequential write (the cache is everything before the first drop)"))
    return Markup("").join(out)


def share_text(s: SlcCacheSummary) -> str:
    """The cache as a share of the capacity, and in native-cell terms when bits per cell are known."""
    if s.share_percent is None:
        return "share of the capacity: not available (no drop detected)"
    native = (f", {s.native_share_percent:.1f} % in {s.bits_per_cell}-bit native terms ({s.bits_per_cell_source})"
              if s.native_share_percent is not None else f"; in native terms: {s.bits_per_cell_source}")
    return f"{s.share_percent:.1f} % of the {s.capacity_bytes / 2**30:.2f} GiB capacity{native}"


def _fill_levels_html(ctx: SectionContext, s: SlcCacheSummary) -> Markup:
    """Cache size against the fill level, chart and table (seed 000: how the cache shrinks as the drive fills)."""
    if not s.fill_levels:
        return Markup("")
    out = []
    measured = [f for f in s.fill_levels if f.cache_bytes is not None]
    if measured:
        fig = ctx.figure()
        plots.series_plot(fig, {"SLC cache": ([f.fill_percent for f in measured], [f.cache_gib for f in measured])},
                          "drive filled before the probe (% of capacity)", "SLC cache (GiB)", ylim0=True)
        out.append(ctx.plot(fig, "cache-vs-fill", "SLC cache size vs fill level",
                            "Each point: purge, SEQ fill of that share of the drive, idle, then a SEQ probe; "
                            "the cache is what the probe wrote before its first drop."))
    rows = [[f.fill_percent, f.idle_s, f.cache_gib if f.cache_gib is not None else "not reached",
             f.share_percent, f.cache_mib_s, f.after_drop_mib_s, f.probe_bytes / 2**30] for f in s.fill_levels]
    out.append(ctx.table("fill-levels", ["Fill (% of capacity)", "Idle before probe (s)", "SLC cache (GiB)",
                                         "Cache (% of capacity)", "MiB/s in cache", "MiB/s after drop",
                                         "Probe wrote (GiB)"], rows,
                         caption="SLC cache against the drive's fill level (0 %: the FOB measurement above; "
                                 "\"not reached\": no drop before the probe ended)"))
    return Markup("").join(out)


def compare(ctx: CompareContext) -> Markup:
    """MiB/s vs time of every run on one chart; the cache estimates side by side."""
    fig = ctx.figure()
    series = {v.label: ([p.t_s for p in v.summary.series], [p.mib_s for p in v.summary.series]) for v in ctx.views}
    plots.series_plot(fig, series, "time (s)", "MiB/s", styles={k: {"marker": None} for k in series}, ylim0=True)
    out = [ctx.plot(fig, "mib-vs-time", "sequential write MiB/s vs time, one series per run")]
    rows = [("SLC cache estimate (GiB)", lambda s: s.cache_gib), ("MiB/s in the cache", lambda s: s.cache_speed_mib_s),
            ("MiB/s after the first drop", lambda s: s.after_drop_mib_s), ("first drop (s)", lambda s: s.first_drop_s)]
    out.append(ctx.side_by_side("estimate", [(label,) for label, _ in rows],
                                [[get(v.summary) for v in ctx.views] for _, get in rows], ["Quantity"], "",
                                caption="SLC cache estimates (– : no drop detected); Δ relative to the first run"))
    return Markup("").join(out)


def resolution_text(s: SlcCacheSummary) -> str:
    """The estimate's resolution: one interval's bytes at the cache's speed, as a share of the estimate."""
    how = "automatic" if s.interval_auto else "profile"
    if s.resolution_fraction is None:
        return f"sampled every {s.interval_s * 1000:g} ms ({how})"
    return (f"resolution ±{s.resolution_fraction * 100:.1f} % (one {s.interval_s * 1000:g} ms interval, {how})"
            + (": too coarse for this cache, see the slc-resolution deviation" if s.resolution_fraction > 0.05 else ""))


def text(s: SlcCacheSummary, clock: Clock) -> list[str]:
    lines = [f"  wrote {s.written_bytes / 2**30:.2f} GiB of {s.planned_bytes / 2**30:.2f} GiB planned in "
             f"{s.elapsed_s:,.1f} s ({s.intervals} intervals), stopped: {s.stop_reason}"]
    if s.drop_detected and s.cache_bytes is not None:
        lines.append(f"  SLC cache estimate: {s.cache_gib:.2f} GiB ({s.cache_bytes / 1e9:.2f} GB) at "
                     f"{s.cache_speed_mib_s:.0f} MiB/s before the first drop at {s.first_drop_s:.1f} s "
                     f"(then {s.after_drop_mib_s:.0f} MiB/s)")
        lines.append(f"  {share_text(s)}; {resolution_text(s)}")
    else:
        lines.append(f"  no drop detected: {s.note}")
    if s.reference is not None and s.reference.slc_capacity_bytes:
        lines.append(f"  reference ({s.reference.source}): {s.reference.slc_capacity_bytes / 2**30:.2f} GiB"
                     + (f", estimate error {s.reference.error * 100:+.1f} %" if s.reference.error is not None else ""))
    for f in s.fill_levels:
        cache = f"{f.cache_gib:.2f} GiB ({f.share_percent:.1f} % of capacity)" if f.cache_gib is not None else \
            "not reached (no drop)"
        lines.append(f"  fill {f.fill_percent:g} %: SLC cache {cache}")
    if s.steps:
        lines.append(f"  {'step':>4} {'start s':>9} {'duration s':>11} {'MiB/s':>9} {'MB/s':>9} {'GiB':>8}")
        for st in s.steps:
            lines.append(f"  {st.index + 1:>4} {st.start_s:>9.1f} {st.duration_s:>11.1f} {st.mib_s:>9.1f} "
                         f"{_mb_s(st):>9.1f} {st.bytes / 2**30:>8.2f}")
    return lines


def headline(s: SlcCacheSummary) -> list[Headline]:
    out = [Headline("slc_cache_gib", "SLC cache estimate (bytes before the first drop)", s.cache_gib, "GiB")]
    out.append(Headline("slc_cache_share", "SLC cache as a share of the capacity", s.share_percent, "%"))
    if s.cache_speed_mib_s is not None:
        out.append(Headline("slc_cache_mib_s", "sequential write in the cache", s.cache_speed_mib_s, "MiB/s"))
    if s.after_drop_mib_s is not None:
        out.append(Headline("after_drop_mib_s", "sequential write after the first drop", s.after_drop_mib_s, "MiB/s"))
    return out


RENDERERS = Renderers(html=html, compare=compare, text=text, headline=headline)
