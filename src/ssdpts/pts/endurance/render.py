"""Endurance renderers: projection table, wear / WAF / temperature / IOPS over time, text lines, headline."""

from __future__ import annotations

from markupsafe import Markup, escape

from ...clock import Clock
from ...health.projection import TB, project, summary_lines
from ...health.record import HealthSnapshot
from ...records import to_data
from ...render import plots
from ...render.context import CompareContext, SectionContext
from ..spec import Headline, Renderers
from .run import polls
from .summary import EnduranceSummary


def text_lines(s: EnduranceSummary, clock: Clock) -> list[str]:
    """The summary as text lines (`ssdpts endurance` and `ssdpts show`), every span and rate on the run's clock
    and the bytes named by what wrote them (`clock.writer`: no fio ran on a simulated drive)."""
    sec = clock.unit("s")
    out = [f"workload {s.workload}: {s.elapsed_s:,.0f} {sec} written ({s.fio_written_bytes / 1e12:.4g} TB by "
           f"{clock.writer}), {s.polls} health polls, {s.stop_reason}"]
    if not s.health_available:
        out.append(f"health data not available: {s.health_reason}")
        return out
    out += [f"{a:22} {b}" for a, b in summary_lines(to_data(s.projection), clock)]
    if s.erase_increments:
        out.append(f"{'erase count':22} {len(s.erase_increments)} increments to {s.erase_increments[-1].count}")
    if s.minutes_per_erase_increment is not None or s.erase_rate_basis:
        out.append(f"{'min per erase count':22} " + (
            f"{s.minutes_per_erase_increment:,.3g} {clock.unit('min')} per increment ({s.erase_rate_basis})"
            if s.minutes_per_erase_increment is not None else f"not available: {s.erase_rate_basis}"))
    if s.loops:
        out.append(f"{'loops':22} {loops_line(s, clock)}")
    return out


def loops_line(s: EnduranceSummary, clock: Clock) -> str:
    """How many loops, their measured durations on the run's clock, and whose clock timed them to what."""
    sec = clock.unit("s")
    durs = [lp.duration_s for lp in s.loops if lp.duration_s is not None]
    line = f"{len(s.loops)} of {s.loop_bytes / 2**30:,.2f} GiB" + (
        f", {min(durs):,.2f} {sec} to {max(durs):,.2f} {sec} each" if durs else "")
    if len(durs) < len(s.loops):
        line += f"; {len(s.loops) - len(durs)} ended in the row the loop before ended in (not timed)"
    rows = [lp.resolution_s for lp in s.loops if lp.resolution_s is not None]
    if not rows:
        return line + " (times interpolated inside the polls: stored by an older ssdpts)"
    return line + f" (ends timed by {s.loops_timed_by}, to {max(rows):,.3g} {sec})"


def text(s: EnduranceSummary, clock: Clock) -> list[str]:
    return ["  " + line for line in text_lines(s, clock)]


def headline(s: EnduranceSummary) -> list[Headline]:
    p = s.projection
    return [Headline("waf", "write amplification (NAND / host writes)", p.waf, ""),
            Headline("wear_per_day", "wear per day at this load", p.wear_per_day, "%/day"),
            Headline("days_to_eol", "days to end of life at this load", p.days_to_eol, "days")]


def compare(ctx: CompareContext) -> Markup:
    """IOPS vs time, one series per run; the projection's key figures side by side."""
    fig = ctx.figure()
    span = max((v.summary.series[-1].elapsed_s for v in ctx.views if v.summary.series), default=0.0)
    unit, div = _time_axis(span)
    plots.series_plot(fig, {v.label: ([p.elapsed_s / div for p in v.summary.series], [p.iops for p in v.summary.series])
                            for v in ctx.views}, f"time ({unit})", "IOPS", ylim0=True)
    out = [ctx.plot(fig, "iops-vs-time", "IOPS vs time, one series per run")]
    rows = [("WAF", lambda s: s.projection.waf), ("wear per day (%)", lambda s: s.projection.wear_per_day),
            ("wear per TB written (%)", lambda s: s.projection.wear_per_tb),
            ("days to end of life", lambda s: s.projection.days_to_eol),
            ("TB to end of life", lambda s: s.projection.tb_to_eol),
            ("host TB per day", lambda s: s.projection.host_tb_per_day)]
    out.append(ctx.side_by_side("projection", [(label,) for label, _ in rows],
                                [[get(v.summary) for v in ctx.views] for _, get in rows], ["Quantity"], "",
                                caption="Endurance projection at each run's load (– : not available); "
                                        "Δ relative to the first run"))
    return Markup("").join(out)


def _time_axis(span_s: float) -> tuple[str, float]:
    if span_s < 600:
        return "s", 1.0
    if span_s < 3 * 3600:
        return "min", 60.0
    if span_s < 3 * 86400:
        return "h", 3600.0
    return "days", 86400.0


def _erase_count_html(ctx: SectionContext, s: EnduranceSummary, pts: list[HealthSnapshot]) -> Markup:
    """Seed 002: the average erase count (attribute 173) against time and TB written; minutes per increment."""
    good = [p for p in pts if p.available and p.t is not None and p.erase_count_avg is not None]
    if len(good) < 2:
        return Markup("")
    out = []
    unit, div = _time_axis(good[-1].t - good[0].t)
    fig = ctx.figure()
    plots.series_plot(fig, {"average erase count": ([p.t / div for p in good],
                                                    [p.erase_count_avg for p in good])},
                      f"time ({unit})", "average erase count (P/E cycles)", ylim0=True)
    out.append(ctx.plot(fig, "erase-count-vs-time", "average erase count vs time",
                        "The drive's average block erase count (ATA 173 and kin) at every health poll."))
    h0 = good[0].host_written_bytes
    if h0 is not None and all(p.host_written_bytes is not None for p in good):
        fig = ctx.figure()
        plots.series_plot(fig, {"average erase count": ([(p.host_written_bytes - h0) / TB for p in good],
                                                        [p.erase_count_avg for p in good])},
                          "host data written (TB, 10^12 B)", "average erase count (P/E cycles)", ylim0=True)
        out.append(ctx.plot(fig, "erase-count-vs-tb", "average erase count vs TB written"))
    rows = [[i.count, i.t_s / 60, i.host_written_tb, i.steps, i.polls,
             i.minutes if i.minutes is not None else "first seen (start not known)"] for i in s.erase_increments]
    out.append(ctx.table("erase-increments", ["Erase count", "Reached at (min)", "Host written (TB)", "Steps",
                                              "Polls since previous", "Minutes per increment"], rows,
                         caption=f"Every whole increment of the average erase count (resolution: the "
                                 f"{s.poll_s:g} s poll interval)" if rows else
                                 "The average erase count did not reach a new whole value in this run"))
    rate = (f"{s.minutes_per_erase_increment:,.3g} minutes per increment of the average erase count: "
            f"{s.erase_rate_basis}" if s.minutes_per_erase_increment is not None else
            f"Minutes per increment of the average erase count: not available ({s.erase_rate_basis})")
    if s.erase_rate_basis:
        out.append(Markup(f'<p class="note">{escape(rate)}.</p>'))
    return Markup("").join(out)


def _loops_html(ctx: SectionContext, s: EnduranceSummary, unit: str, div: float) -> Markup:
    """Long-run throughput vs time and the time each loop of the workload took (seed 002: LOG mtimes)."""
    fig = ctx.figure()
    plots.series_plot(fig, {"MiB/s": ([r.elapsed_s / div for r in s.series], [r.mib_s for r in s.series])},
                      f"time ({unit})", "MiB/s", ylim0=True)
    out = [ctx.plot(fig, "mib-vs-time", "throughput vs time")]
    if s.loops:
        fig = ctx.figure()
        plots.bar_plot(fig, [str(lp.index) for lp in s.loops],
                       {"loop duration": [lp.duration_s or 0.0 for lp in s.loops]},
                       f"loop ({s.loop_bytes / 2**30:,.2f} GiB each)", "duration (s)", annotate=len(s.loops) <= 20)
        out.append(ctx.plot(fig, "loop-durations", "time per loop of the workload"))
    rows = [[lp.index, lp.start_s, lp.end_s, lp.duration_s if lp.duration_s is not None else "not timed",
             lp.mib_s, lp.resolution_s] for lp in s.loops]
    out.append(ctx.table("loops", ["Loop", "Start (s)", "End (s)", "Duration (s)", "MiB/s", "Timed to (s)"], rows,
                         caption=f"Loops of {s.loop_bytes / 2**30:,.2f} GiB written, complete loops only: "
                                 f"{loops_line(s, ctx.clock)}" if rows else
                                 f"No complete loop of {s.loop_bytes / 2**30:,.2f} GiB was written"))
    return Markup("").join(out)


def html(ctx: SectionContext) -> Markup:
    """Projection table; wear vs time and vs TB written with the fitted projection; WAF, temperature, IOPS."""
    s: EnduranceSummary = ctx.summary
    pts = polls(ctx.store, ctx.run_id, ctx.name)
    rated = s.rated
    # the fits and the WAF series are recomputed from the stored polls (the summary keeps the figures)
    proj = project(pts, rated_tbw_tb=rated.rated_tbw_tb, dwpd=rated.dwpd, warranty_years=rated.warranty_years,
                   capacity_bytes=rated.capacity_bytes)
    out: list = []
    if not s.health_available:
        out.append(Markup(f'<p class="warn">Health data not available: {escape(s.health_reason or "")}. '
                           'The workload ran; wear, WAF and the projection need SMART or NVMe health data.</p>'))
    out.append(ctx.table("projection", ["Quantity", "Value"], [[a, b] for a, b in summary_lines(proj, ctx.clock)],
                          caption=f"Endurance at this load ({escape(s.workload)}, "
                                  f"{s.elapsed_s:,.0f} s of writes, health every {s.poll_s:g} s)"))
    good = [p for p in pts if p.available and p.t is not None]
    if len(good) >= 2:
        span = good[-1].t - good[0].t
        unit, div = _time_axis(span)
        ts = [p.t / div for p in good]
        wear = [p.percentage_used for p in good]
        if any(w is not None for w in wear):
            fig = ctx.figure()
            series = {"wear indicator": ([t for t, w in zip(ts, wear) if w is not None], [w for w in wear if w is not None])}
            styles = {}
            fit = proj.get("wear_fit_time") or {}
            if fit.get("slope") is not None:
                x1 = ts[-1]
                eol_t = (100.0 - fit["intercept"]) / fit["slope"] / div if fit["slope"] > 0 else None
                if eol_t is not None and eol_t <= 10 * max(ts[-1], 1e-9):
                    x1 = eol_t
                xs = [ts[0], x1]
                series["projection"] = (xs, [fit["slope"] * x * div + fit["intercept"] for x in xs])
                styles["projection"] = {"linestyle": "--", "marker": None, "color": "#d62728"}
            plots.series_plot(fig, series, f"time ({unit})", "% of rated life used", styles=styles)
            eol = proj.get("days_to_eol")
            out.append(ctx.plot(fig, "wear-vs-time", "wear indicator vs time",
                                 "Projection: " + (f"end of life in {eol:,.1f} days at this load." if eol else
                                                   "not enough wear change for a projection.")))
            hb = [None if p.host_written_bytes is None else (p.host_written_bytes - good[0].host_written_bytes) / TB
                  for p in good] if good[0].host_written_bytes is not None else []
            pairs = [(x, w) for x, w in zip(hb, wear) if x is not None and w is not None]
            if len(pairs) >= 2:
                fig = ctx.figure()
                series = {"wear indicator": ([x for x, _ in pairs], [w for _, w in pairs])}
                styles = {}
                f2 = proj.get("wear_fit_tb") or {}
                if f2.get("slope") is not None:
                    x1 = pairs[-1][0]
                    if f2["slope"] > 0 and (100 - f2["intercept"]) / f2["slope"] <= 10 * max(x1, 1e-12):
                        x1 = (100 - f2["intercept"]) / f2["slope"]
                    xs = [pairs[0][0], x1]
                    series["projection"] = (xs, [f2["slope"] * x + f2["intercept"] for x in xs])
                    styles["projection"] = {"linestyle": "--", "marker": None, "color": "#d62728"}
                plots.series_plot(fig, series, "host data written (TB, 10^12 B)", "% of rated life used", styles=styles)
                tb = proj.get("tb_to_eol")
                out.append(ctx.plot(fig, "wear-vs-tb", "wear indicator vs TB written",
                                     f"Projection: {tb:,.4g} TB more to end of life." if tb else ""))
        if proj.get("waf_series"):
            fig = ctx.figure()
            plots.series_plot(fig, {"WAF per poll": ([w["t"] / div for w in proj["waf_series"]],
                                                     [w["waf"] for w in proj["waf_series"]])},
                              f"time ({unit})", "write amplification (NAND / host)", ylim0=True)
            out.append(ctx.plot(fig, "waf-vs-time", "write amplification vs time",
                                 f"Overall WAF {proj['waf']:.3f}." if proj.get("waf") else ""))
        temps = [(p.t / div, p.temperature_c) for p in good if p.temperature_c is not None]
        if temps:
            fig = ctx.figure()
            plots.series_plot(fig, {"temperature": ([a for a, _ in temps], [b for _, b in temps])},
                              f"time ({unit})", "°C")
            out.append(ctx.plot(fig, "temperature", "temperature vs time"))
    series = s.series
    out.append(_erase_count_html(ctx, s, pts))
    if series:
        unit, div = _time_axis(series[-1].elapsed_s)
        fig = ctx.figure()
        plots.series_plot(fig, {"IOPS": ([r.elapsed_s / div for r in series], [r.iops for r in series])},
                          f"time ({unit})", "IOPS", ylim0=True)
        out.append(ctx.plot(fig, "iops-vs-time", "IOPS vs time"))
        out.append(_loops_html(ctx, s, unit, div))
        rows = [[r.round, r.elapsed_s, r.iops, r.mib_s, r.host_written_tb, r.wear_percent, r.waf, r.temperature_c]
                for r in series]
        tab = ctx.table("polls", ["Poll", "Elapsed (s)", "IOPS", "MiB/s", "Host written (TB)", "Wear (%)",
                                  "WAF (interval)", "Temperature (°C)"], rows, caption="Every poll")
        out.append(Markup(f"<details><summary>Polls ({len(rows)})</summary>{tab}</details>"))
    return Markup("").join(out)


RENDERERS = Renderers(html=html, compare=compare, text=text, headline=headline)
