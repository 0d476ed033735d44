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

from ... import health
from ...errors import SsdptsError
from ...health.projection import project, waf_between
from ...records import from_data
from ...store import Store
from ...units import format_duration, parse_duration, parse_size
from ...workload import Workload
from ..common import TestContext
from ..plan import TestPlan, once, purge_phase
from .summary import EndurancePoll, EnduranceSummary, Projection, RatedEndurance

PHASE = "endurance"
BASELINE = "health:poll:000000"

# built-in workloads: name -> (rw, block size, read %). "rnd4k-write" is seed 002's MX300 run.
WORKLOADS = {
    "rnd4k-write": ("randwrite", 4096, 0),
    "rnd8k-oltp": ("randrw", 8192, 65),
    "seq128k-write": ("write", 128 * 1024, 0),
    "rnd64k-write": ("randwrite", 64 * 1024, 0),
}


def _workload(ctx: TestContext, name: str, runtime_s: float) -> Workload:
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


def polls(store: Store, run_id: str, test: str = "endurance") -> list[dict]:
    """The stored health polls in order (baseline first), each a health record with `t` (workload seconds)."""
    out = [s["data"] for s in store.steps(run_id, test) if s["kind"] == "health-poll"]
    return sorted(out, key=lambda d: (d.get("t") or 0, d.get("round") or 0))


def plan(ctx: TestContext) -> TestPlan:
    cfg = _settings(ctx)
    phases = [purge_phase(ctx)] if ctx.settings.get("purge_first") is True else []
    phases.append(once("stream", f"{cfg['workload']} as one continuous job for {format_duration(cfg['duration_s'])}, "
                                 f"a health snapshot every {cfg['poll_s']:g} s",
                       [_workload(ctx, cfg["workload"], cfg["duration_s"])]))
    return TestPlan("endurance", phases)


def run(ctx: TestContext) -> EnduranceSummary:
    cfg = _settings(ctx)
    if ctx.settings.get("purge_first") is True:
        ctx.purge(PHASE)
    base = ctx.store.step(ctx.run_id, ctx.test, BASELINE)
    if base is None:
        base = ctx.store.step(ctx.run_id, ctx.test, "health:before") or health.snapshot(ctx.target)
        base = dict(base, t=0.0, round=0)
        ctx.store.record_step(ctx.run_id, ctx.test, BASELINE, "health-poll", base)
    ctx.progress.message(f"{ctx.test}: {health.brief(base)}")

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
            snap = dict(health.snapshot(ctx.target), t=totals["seconds"], round=round_no)
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
    ctx.progress.message(f"{ctx.test}: {health.brief(final)}")
    return EnduranceSummary(
        workload=cfg["workload"], duration_s=cfg["duration_s"], poll_s=cfg["poll_s"], elapsed_s=elapsed,
        stop_reason=stop, rounds=len(rounds), polls=len(pts),
        fio_written_bytes=int(series[-1]["fio_written_bytes"]) if series else 0,
        health_available=available, health_reason=reason, health_source=final.get("source"),
        rated=RatedEndurance(cfg["rated_tbw_tb"], cfg["dwpd"], cfg["warranty_years"], ctx.target.size_bytes),
        projection=from_data(Projection, {k: v for k, v in proj.items() if k != "waf_series"}),
        series=[from_data(EndurancePoll, p) for p in series])
