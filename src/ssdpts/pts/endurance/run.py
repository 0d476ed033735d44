"""Endurance: a sustained write workload for hours or days, polling the drive's health as it wears.

One continuous job (default the seed's 4 KiB random write, 16 jobs x QD 6) cut into rounds of the
poll interval; after every round a health snapshot (SMART / NVMe health log / simulator counters)
is stored as step `health:poll:NNNNNN`, its key numbers in the round's tracking variables. The
projection (wear per day and per TB, days to end of life, TBW consumed vs rated, WAF over time)
comes from `ssdpts.health.projection`. Resumable like every test: the workload continues for the
remaining duration and the poll numbering continues.

Drives without health data (loop, zram, files) still run the workload; the summary says that
health data was not available.
"""

from __future__ import annotations

from ..units import parse_duration
from .common import TestContext

NAME = "endurance"
TITLE = "Endurance (sustained writes, wear and WAF projection)"

PHASE = "endurance"
BASELINE = "health:poll:000000"

# built-in workloads: name -> (rw, block size, read %). "rnd4k-write" is seed 002's MX300 run.
WORKLOADS = {
    "rnd4k-write": ("randwrite", 4096, 0),
    "rnd8k-oltp": ("randrw", 8192, 65),
    "seq128k-write": ("write", 128 * 1024, 0),
    "rnd64k-write": ("randwrite", 64 * 1024, 0),
}


def _workload(ctx: TestContext, name: str, runtime_s: float):
    from ..errors import SsdptsError
    from ..units import parse_size

    custom = (ctx.settings.get("workloads") or {}).get(name)
    if custom is not None:
        rw, bs, read = custom["rw"], parse_size(custom.get("bs", "4k")), custom.get("read_pct")
    elif name in WORKLOADS:
        rw, bs, read = WORKLOADS[name]
    else:
        allowed = sorted(set(WORKLOADS) | set(ctx.settings.get("workloads") or {}))
        raise SsdptsError(f"unknown endurance workload {name!r}; allowed: {', '.join(allowed)} "
                          "(or define [tests.endurance.workloads.NAME] in a profile)")
    return ctx.cell(f"endurance_{name}", rw, max(bs, ctx.target.logical_block_size), read, runtime_s=runtime_s)


def _settings(ctx: TestContext) -> dict:
    s = ctx.settings
    return {"duration_s": parse_duration(s.get("duration", "72h")), "poll_s": parse_duration(s.get("poll", "5m")),
            "workload": s.get("workload", "rnd4k-write"), "rated_tbw_tb": s.get("rated_tbw"),
            "dwpd": s.get("dwpd"), "warranty_years": s.get("warranty_years")}


def polls(store, run_id: str, test: str = NAME) -> list[dict]:
    """The stored health polls in order (baseline first), each a health record with `t` (workload seconds)."""
    out = [s["data"] for s in store.steps(run_id, test) if s["kind"] == "health-poll"]
    return sorted(out, key=lambda d: (d.get("t") or 0, d.get("round") or 0))


def run(ctx: TestContext) -> dict:
    from ..health import brief, snapshot
    from ..health.projection import project, waf_between

    cfg = _settings(ctx)
    if ctx.settings.get("purge_first") is True:
        ctx.purge(PHASE)
    base = ctx.store.step(ctx.run_id, ctx.test, BASELINE)
    if base is None:
        base = ctx.store.step(ctx.run_id, ctx.test, "health:before") or snapshot(ctx.target)
        base = dict(base, t=0.0, round=0)
        ctx.store.record_step(ctx.run_id, ctx.test, BASELINE, "health-poll", base)
    ctx.progress.message(f"{ctx.test}: {brief(base)}")

    done = ctx.store.rounds(ctx.run_id, ctx.test, PHASE, with_cells=False)
    last = done[-1].tracking if done else {}
    totals = {"seconds": float(last.get("elapsed_s", 0.0)), "bytes": int(last.get("fio_written_bytes", 0))}
    remaining = cfg["duration_s"] - totals["seconds"]
    max_rounds = int(ctx.settings.get("max_rounds", 10**7))
    if remaining > cfg["poll_s"] * 1e-3 and len(done) < max_rounds:
        cell = _workload(ctx, cfg["workload"], remaining)
        prev = {"snap": polls(ctx.store, ctx.run_id, ctx.test)[-1]}

        def track(phase_, round_no, res, st):
            totals["seconds"] += res.runtime_ms / 1000
            totals["bytes"] += res.write.bytes
            snap = dict(snapshot(ctx.target), t=totals["seconds"], round=round_no)
            ctx.store.record_step(ctx.run_id, ctx.test, f"health:poll:{round_no:06d}", "health-poll", snap)
            w_int = waf_between(prev["snap"], snap)
            w_cum = waf_between(base, snap)
            prev["snap"] = snap

            def since(k):
                a, b = base.get(k), snap.get(k)
                return None if a is None or b is None else b - a

            hw = since("host_written_bytes")
            out = {"iops": res.iops, "mib_s": res.bw_bytes / 2**20, "lat_mean_us": res.lat_mean_ns / 1000,
                   "elapsed_s": totals["seconds"], "fio_written_bytes": totals["bytes"],
                   "host_written_tb": None if hw is None else hw / 1e12,
                   "wear_percent": snap.get("percentage_used"), "waf": w_int, "waf_cumulative": w_cum,
                   "temperature_c": snap.get("temperature_c")}
            return {k: v for k, v in out.items() if v is not None}    # unknown health values: absent, not null

        ctx.progress.round_started(ctx.test, PHASE, len(done) + 1, max_rounds, None,
                                   f"writing for {remaining:,.0f} s more, health every {cfg['poll_s']:g} s")
        ctx.stream([PHASE], [cell], cfg["poll_s"], track, max_rounds=max_rounds)

    rounds = ctx.store.rounds(ctx.run_id, ctx.test, PHASE, with_cells=False)
    series = [dict(r.tracking, round=r.round) for r in rounds]
    pts = polls(ctx.store, ctx.run_id, ctx.test)
    final = pts[-1] if pts else base
    proj = project(pts, rated_tbw_tb=cfg["rated_tbw_tb"], dwpd=cfg["dwpd"], warranty_years=cfg["warranty_years"],
                   capacity_bytes=ctx.target.size_bytes)
    elapsed = series[-1]["elapsed_s"] if series else 0.0
    if elapsed >= cfg["duration_s"] * 0.999:
        stop = "duration reached"
    elif len(rounds) >= max_rounds:
        stop = "round limit"
    else:
        stop = "workload ended early"
    available = any(p.get("available") for p in pts)
    reason = None if available else (final.get("reason") or "no health data")
    if not available:
        ctx.note(f"health data not available: {reason}; the workload ran, no wear/WAF projection")
    ctx.progress.message(f"{ctx.test}: {brief(final)}")
    return {
        "workload": cfg["workload"], "duration_s": cfg["duration_s"], "poll_s": cfg["poll_s"], "elapsed_s": elapsed,
        "stop_reason": stop, "rounds": len(rounds), "polls": len(pts),
        "fio_written_bytes": series[-1]["fio_written_bytes"] if series else 0,
        "health_available": available, "health_reason": reason, "health_source": final.get("source"),
        "rated": {"rated_tbw_tb": cfg["rated_tbw_tb"], "dwpd": cfg["dwpd"], "warranty_years": cfg["warranty_years"],
                  "capacity_bytes": ctx.target.size_bytes},
        "projection": {k: v for k, v in proj.items() if k != "waf_series"},
        "series": series,
        "units": {"elapsed_s": "s of workload", "host_written_tb": "TB (10^12 B) since the start",
                  "wear_percent": "% of rated life used", "waf": "NAND / host writes in the poll interval",
                  "temperature_c": "°C", "mib_s": "MiB/s"},
    }


def text_lines(summary: dict) -> list[str]:
    """The summary as text lines (for `ssdpts endurance` and text renderers of results)."""
    from ..health.projection import summary_lines

    out = [f"workload {summary.get('workload')}: {summary.get('elapsed_s', 0):,.0f} s written "
           f"({summary.get('fio_written_bytes', 0) / 1e12:.4g} TB by fio), {summary.get('polls', 0)} health polls, "
           f"{summary.get('stop_reason')}"]
    if not summary.get("health_available"):
        out.append(f"health data not available: {summary.get('health_reason')}")
        return out
    out += [f"{a:22} {b}" for a, b in summary_lines(summary.get("projection") or {})]
    return out


# ------------------------------------------------------------------------------------------------
# report

def _time_axis(span_s: float) -> tuple[str, float]:
    if span_s < 600:
        return "s", 1.0
    if span_s < 3 * 3600:
        return "min", 60.0
    if span_s < 3 * 86400:
        return "h", 3600.0
    return "days", 86400.0


def report_section(ctx) -> str:
    from markupsafe import Markup, escape

    from ..health.projection import TB, project, summary_lines
    from ..report import plots

    s = ctx.summary
    pts = polls(ctx.store, ctx.run_id, ctx.name)
    rated = s.get("rated") or {}
    proj = project(pts, rated_tbw_tb=rated.get("rated_tbw_tb"), dwpd=rated.get("dwpd"),
                   warranty_years=rated.get("warranty_years"), capacity_bytes=rated.get("capacity_bytes"))
    html: list = []
    if not s.get("health_available"):
        html.append(Markup(f'<p class="warn">Health data not available: {escape(s.get("health_reason") or "")}. '
                           'The workload ran; wear, WAF and the projection need SMART or NVMe health data.</p>'))
    html.append(ctx.table("projection", ["Quantity", "Value"], [[a, b] for a, b in summary_lines(proj)],
                          caption=f"Endurance at this load ({escape(s.get('workload', ''))}, "
                                  f"{s.get('elapsed_s', 0):,.0f} s of writes, health every {s.get('poll_s', 0):g} s)"))
    good = [p for p in pts if p.get("available") and p.get("t") is not None]
    if len(good) >= 2:
        span = good[-1]["t"] - good[0]["t"]
        unit, div = _time_axis(span)
        ts = [p["t"] / div for p in good]
        wear = [p.get("percentage_used") for p in good]
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
            html.append(ctx.plot(fig, "wear-vs-time", "wear indicator vs time",
                                 "Projection: " + (f"end of life in {eol:,.1f} days at this load." if eol else
                                                   "not enough wear change for a projection.")))
            hb = [None if p.get("host_written_bytes") is None else (p["host_written_bytes"] - good[0]["host_written_bytes"]) / TB
                  for p in good] if good[0].get("host_written_bytes") is not None else []
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
                html.append(ctx.plot(fig, "wear-vs-tb", "wear indicator vs TB written",
                                     f"Projection: {tb:,.4g} TB more to end of life." if tb else ""))
        if proj.get("waf_series"):
            fig = ctx.figure()
            plots.series_plot(fig, {"WAF per poll": ([w["t"] / div for w in proj["waf_series"]],
                                                     [w["waf"] for w in proj["waf_series"]])},
                              f"time ({unit})", "write amplification (NAND / host)", ylim0=True)
            html.append(ctx.plot(fig, "waf-vs-time", "write amplification vs time",
                                 f"Overall WAF {proj['waf']:.3f}." if proj.get("waf") else ""))
        temps = [(p["t"] / div, p["temperature_c"]) for p in good if p.get("temperature_c") is not None]
        if temps:
            fig = ctx.figure()
            plots.series_plot(fig, {"temperature": ([a for a, _ in temps], [b for _, b in temps])},
                              f"time ({unit})", "°C")
            html.append(ctx.plot(fig, "temperature", "temperature vs time"))
    series = s.get("series") or []
    if series:
        unit, div = _time_axis(series[-1].get("elapsed_s", 0))
        fig = ctx.figure()
        plots.series_plot(fig, {"IOPS": ([r["elapsed_s"] / div for r in series], [r.get("iops", 0) for r in series])},
                          f"time ({unit})", "IOPS", ylim0=True)
        html.append(ctx.plot(fig, "iops-vs-time", "IOPS vs time"))
        rows = [[r["round"], r.get("elapsed_s"), r.get("iops"), r.get("mib_s"), r.get("host_written_tb"),
                 r.get("wear_percent"), r.get("waf"), r.get("temperature_c")] for r in series]
        tab = ctx.table("polls", ["Poll", "Elapsed (s)", "IOPS", "MiB/s", "Host written (TB)", "Wear (%)",
                                  "WAF (interval)", "Temperature (°C)"], rows, caption="Every poll")
        html.append(Markup(f"<details><summary>Polls ({len(rows)})</summary>{tab}</details>"))
    return Markup("").join(html)
