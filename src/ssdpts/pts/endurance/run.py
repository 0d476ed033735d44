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

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ... import health
from ...errors import SsdptsError
from ...health.projection import erase_increments, minutes_per_increment, project, waf_between
from ...health.record import POLL_KIND, HealthSnapshot
from ...records import from_data
from ...capabilities import Capability
from ...store import RoundRecord, Store
from ...units import format_duration
from ...workload import Workload
from ..streaming import STREAM_ROUND_LIMIT
from ..plan import TestPlan, once, purge_phase
from .summary import EndurancePoll, EnduranceSummary, Loop, Projection, RatedEndurance
from .settings import WORKLOADS, EnduranceSettings

if TYPE_CHECKING:     # annotations only: reading a stored run's settings imports no round loop
    from ..context import TestContext

PHASE = "endurance"
BASELINE = "health:poll:000000"


ROWS_PER_POLL = 100      # the simulator's interval log inside each poll: loop ends timed to 1 % of a poll


@dataclass(frozen=True)
class Written:
    """The workload's bytes written by the end of one row of the engine's own clock."""

    end_s: float             # workload seconds
    total_bytes: int
    row_s: float             # the row's length: a loop end read in it is known to this


def written_rows(rounds: list[RoundRecord]) -> tuple[list[Written], str]:
    """Every round's own rows (the simulator's interval log inside the poll, when the engine streams one and it
    holds all the round's bytes), else the round itself (fio's status document at the poll); and whose clock."""
    out: list[Written] = []
    t, total, logged = 0.0, 0, 0
    for r in rounds:
        end, cell = float(r.tracking["elapsed_s"]), r.cells[0]
        rows = [x for x in cell.intervals if "t_ns" in x and "write_bytes" in x]
        if rows and sum(x["write_bytes"] for x in rows) == cell.write.bytes:
            logged += 1
            before = 0
            for x in rows:
                total += x["write_bytes"]
                out.append(Written(min(t + x["t_ns"] / 1e9, end), total, (x["t_ns"] - before) / 1e9))
                before = x["t_ns"]
        else:
            total += cell.write.bytes
            out.append(Written(end, total, end - t))
        t = end
    by = "the simulator's interval log inside each poll" if logged == len(rounds) else \
        "the polls (the engine's status at each)" if not logged else "the simulator's log, else the polls"
    return out, by


def loops(rows: list[Written], loop_bytes: int) -> list[Loop]:
    """Complete loops of `loop_bytes` written: each ends with the first row by whose end the written bytes
    reached its bound (measured to that row, not interpolated); a loop that ended in its predecessor's row has
    no duration known."""
    out: list[Loop] = []
    start, start_row = 0.0, None
    for w in rows:
        while w.total_bytes >= (len(out) + 1) * loop_bytes:
            timed = start_row is not w and w.end_s > start
            duration = w.end_s - start if timed else None
            out.append(Loop(len(out) + 1, start, w.end_s, duration,
                            loop_bytes / duration / 2**20 if duration else None, resolution_s=w.row_s))
            start, start_row = w.end_s, w
    return out


def _workload(ctx: TestContext, name: str, runtime_s: float) -> Workload:
    known = {**WORKLOADS, **ctx.settings.workloads}
    if name not in known:
        allowed = sorted(known)
        raise SsdptsError(f"unknown endurance workload {name!r}; allowed: {', '.join(allowed)} "
                          "(or define [tests.endurance.workloads.NAME] in a profile)")
    rw, bs, read = known[name]
    return ctx.cells.cell(f"endurance_{name}", rw, max(bs, ctx.target.logical_block_size), read, runtime_s=runtime_s)


def polls(store: Store, run_id: str, test: str = "endurance") -> list[HealthSnapshot]:
    """The stored health polls in order (baseline first), each with `t` (workload seconds) and its round."""
    out = [s["data"] for s in store.steps(run_id, test) if s["kind"] == POLL_KIND]
    return sorted(out, key=lambda d: (d.t or 0, d.round or 0))


def _poll(data: dict, t: float, round_no: int) -> HealthSnapshot:
    """A health snapshot (health.snapshot's record) as the poll of `round_no`, `t` workload seconds in."""
    return HealthSnapshot.from_dict(dict(data, t=t, round=round_no))


def plan(ctx: TestContext) -> TestPlan:
    cfg = ctx.settings
    phases = [purge_phase(ctx)] if ctx.settings.purge_first else []
    phases.append(once("stream", f"{cfg.workload} as one continuous job for {format_duration(cfg.duration)}, "
                                 f"a health snapshot every {cfg.poll:g} s",
                       [_workload(ctx, cfg.workload, cfg.duration)]))
    return TestPlan("endurance", phases)


def run(ctx: TestContext) -> EnduranceSummary:
    cfg = ctx.settings
    if ctx.settings.purge_first:
        ctx.purger.purge(PHASE)
    base = ctx.store.step(ctx.run_id, ctx.test, BASELINE)
    if base is None:
        # after a purge of its own the baseline is read after it: the purge's erases are not the workload's wear
        before = None if ctx.settings.purge_first else ctx.store.step(ctx.run_id, ctx.test, "health:before")
        base = _poll(before.to_dict() if before is not None else health.snapshot(ctx.target), 0.0, 0)
        ctx.store.record_step(ctx.run_id, ctx.test, BASELINE, POLL_KIND, base)
    ctx.progress.message(f"{ctx.test}: {health.brief(base)}")

    done = ctx.store.rounds(ctx.run_id, ctx.test, PHASE, with_cells=False)
    last = done[-1].tracking if done else {}
    totals = {"seconds": float(last.get("elapsed_s", 0.0)), "bytes": int(last.get("fio_written_bytes", 0))}
    remaining = cfg.duration - totals["seconds"]
    max_rounds = ctx.settings.max_rounds
    stop = ctx.streams.stop_reason(PHASE)
    if stop is None and remaining > cfg.poll * 1e-3 and len(done) < max_rounds:
        cell = _workload(ctx, cfg.workload, remaining)
        if Capability.STREAMED_LOG in ctx.engine.capabilities:     # rows inside each poll: loop ends timed by them
            cell = cell.with_(log_interval_ms=max(1, round(cfg.poll * 1000 / ROWS_PER_POLL)))
        prev = {"snap": polls(ctx.store, ctx.run_id, ctx.test)[-1]}

        def track(phase_, round_no, res, st):
            totals["seconds"] += res.runtime_ms / 1000
            totals["bytes"] += res.write.bytes
            snap = _poll(health.snapshot(ctx.target), totals["seconds"], round_no)
            ctx.store.record_step(ctx.run_id, ctx.test, f"health:poll:{round_no:06d}", POLL_KIND, snap)
            ctx.progress.health(ctx.test, snap)
            w_int = waf_between(prev["snap"], snap)
            w_cum = waf_between(base, snap)
            prev["snap"] = snap

            def since(k):
                a, b = getattr(base, k), getattr(snap, k)
                return None if a is None or b is None else b - a

            hw = since("host_written_bytes")
            out = {"iops": res.iops, "mib_s": res.bw_bytes / 2**20, "lat_mean_us": res.lat_mean_ns / 1000,
                   "elapsed_s": totals["seconds"], "fio_written_bytes": totals["bytes"],
                   "host_written_tb": None if hw is None else hw / 1e12,
                   "wear_percent": snap.percentage_used, "waf": w_int, "waf_cumulative": w_cum,
                   "temperature_c": snap.temperature_c, "erase_count_avg": snap.erase_count_avg}
            return {k: v for k, v in out.items() if v is not None}    # unknown health values: absent, not null

        ctx.progress.round_started(ctx.test, PHASE, len(done) + 1, max_rounds, None,
                                   f"writing for {remaining:,.0f} s more, health every {cfg.poll:g} s")
        how = ctx.streams.stream([PHASE], [cell], cfg.poll, track, max_rounds=max_rounds)
        stop = ctx.streams.stop_reason(PHASE, "round limit" if how == STREAM_ROUND_LIMIT else "duration reached")
    elif stop is None:   # resumed after the last round, before the reason was stored
        stop = ctx.streams.stop_reason(PHASE, "round limit" if len(done) >= max_rounds else "duration reached")

    rounds = ctx.store.rounds(ctx.run_id, ctx.test, PHASE, with_cells=False)
    series = [dict(r.tracking, round=r.round) for r in rounds]
    pts = polls(ctx.store, ctx.run_id, ctx.test)
    final = pts[-1] if pts else base
    proj = project(pts, rated_tbw_tb=cfg.rated_tbw, dwpd=cfg.dwpd, warranty_years=cfg.warranty_years,
                   capacity_bytes=ctx.target.size_bytes)
    elapsed = series[-1]["elapsed_s"] if series else 0.0
    available = any(p.available for p in pts)
    reason = None if available else (final.reason or "no health data")
    if not available:
        ctx.note(f"health data not available: {reason}; the workload ran, no wear/WAF projection")
    ctx.progress.message(f"{ctx.test}: {health.brief(final)}")
    polled = [from_data(EndurancePoll, p) for p in series]
    loop_bytes = cfg.loop_size or ctx.target.size_bytes
    rows, timed_by = written_rows(ctx.store.rounds(ctx.run_id, ctx.test, PHASE))
    increments = erase_increments(pts)
    per_increment, rate_basis = minutes_per_increment(pts, increments)
    return EnduranceSummary(
        workload=cfg.workload, duration_s=cfg.duration, poll_s=cfg.poll, elapsed_s=elapsed,
        stop_reason=stop, rounds=len(rounds), polls=len(pts),
        fio_written_bytes=int(series[-1]["fio_written_bytes"]) if series else 0,
        health_available=available, health_reason=reason, health_source=final.source or None,
        rated=RatedEndurance(cfg.rated_tbw, cfg.dwpd, cfg.warranty_years, ctx.target.size_bytes),
        projection=from_data(Projection, {k: v for k, v in proj.items() if k != "waf_series"}),
        series=polled, erase_increments=increments, loop_bytes=loop_bytes, loops=loops(rows, loop_bytes),
        loops_timed_by=timed_by, minutes_per_erase_increment=per_increment, erase_rate_basis=rate_basis)
