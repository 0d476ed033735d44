"""Write Saturation (WSAT): from fresh-out-of-box, write until the drive saturates.

Purge, no preconditioning, then one continuous job (RND 4 KiB writes by default; PTS 2.0 optional
workloads too) until 4x the capacity is written, the time limit or the round limit. The job is
never restarted between rounds: rounds are cut from fio's periodic status, so the drive never idles.
Per round: IOPS, MiB/s, latency mean/percentiles/max, and TGBW (total GB written, 10^9 bytes) and
drive fills (TGBW / capacity) for the x axes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...errors import SsdptsError
from ...steady import evaluate
from ...units import format_duration
from ...workload import Workload
from ...workload.spec import DEFAULT_PERCENTILES
from ..streaming import STREAM_ROUND_LIMIT
from ..plan import Phase, PlannedCell, TestPlan, purge_phase
from .summary import WsatInterval, WsatSummary, WsatWorkload
from .settings import WORKLOADS, WsatSettings

if TYPE_CHECKING:     # annotations only: reading a stored run's settings imports no round loop
    from ..context import TestContext

COMPOSITE_SPLIT = ((512, 4), (1024, 1), (1536, 1), (2048, 1), (2560, 1), (3072, 1), (3584, 1), (4096, 67),
                   (8192, 10), (16384, 7), (32768, 3), (65536, 3))
COMPOSITE_ZONES = "zoned:50/5:30/15:20/80"
# the median too: the reviews plot median, p99, p99.9, p99.99 and max per round (seed 000)
PERCENTILES = (50.0, *DEFAULT_PERCENTILES)


def composite_split(logical_block: int) -> tuple[tuple[tuple[int, int], ...], str]:
    """The CBW block-size split; sizes below the logical block are folded into it (with a note)."""
    if logical_block <= 512:
        return COMPOSITE_SPLIT, ""
    small = sum(p for b, p in COMPOSITE_SPLIT if b < logical_block)
    kept = [(b, p + (small if b == logical_block else 0)) for b, p in COMPOSITE_SPLIT if b >= logical_block]
    return tuple(kept), (f"sub-{logical_block // 1024}K sizes ({small} % of I/Os) folded into "
                         f"{logical_block // 1024}K: the device's logical block is {logical_block} bytes")


def workload_note(ctx: TestContext, name: str) -> str:
    """The CBW workload's note on sub-sector block sizes folded into the logical block, or ""."""
    return composite_split(ctx.target.logical_block_size)[1] if name == "cbw" else ""


def workload_cell(ctx: TestContext, name: str, **kw) -> Workload:
    if name not in WORKLOADS:
        raise SsdptsError(f"unknown WSAT workload {name!r}; allowed: {', '.join(WORKLOADS)}")
    rw, bs, read = WORKLOADS[name]
    if name == "cbw":
        split, _ = composite_split(ctx.target.logical_block_size)
        return ctx.cells.cell(f"wsat_{name}", rw, 4096, read, bssplit=split, distribution=COMPOSITE_ZONES,
                        align=ctx.cells.io_alignment(), percentiles=PERCENTILES, **kw)
    return ctx.cells.cell(f"wsat_{name}", rw, max(bs, ctx.target.logical_block_size), read, percentiles=PERCENTILES, **kw)


@dataclass
class SaturationLimits:
    drives: int
    capacity_bytes: int          # all drives: fills and TGBW count them all
    round_s: float               # one round: an interval cut from fio's status
    time_limit_s: float
    target_bytes: float          # capacity_multiple x capacity
    max_rounds: int


def limits(ctx: TestContext) -> SaturationLimits:
    drives = len(ctx.target.drives())
    cap = ctx.target.size_bytes * drives
    s = ctx.settings
    return SaturationLimits(drives, cap, s.round_time, s.time_limit, s.capacity_multiple * cap, s.max_rounds)


def saturation_cell(ctx: TestContext, name: str, lim: SaturationLimits, remaining_bytes: float,
                    remaining_s: float) -> Workload:
    """The one continuous job: size-bound at `remaining_bytes` written (all drives), time-bound at `remaining_s`."""
    probe = workload_cell(ctx, name, runtime_s=1)
    per_thread = int(remaining_bytes / lim.drives / probe.threads) // probe.max_bs * probe.max_bs
    # a write target of N x capacity over reads and writes: io_size counts both directions
    reads = probe.reads / 100
    per_thread = int(per_thread / max(1 - reads, 1e-9)) // probe.max_bs * probe.max_bs
    return workload_cell(ctx, name, runtime_s=remaining_s, io_size=max(per_thread, probe.max_bs),
                         range_size=ctx.active_range())


def stop_reason(cell: Workload, drives: int, lim: SaturationLimits, how: str, new_bytes: int) -> str:
    """What stopped the job, from how its stream ended and the bytes it moved (read + write, the unit of
    fio's io_size), not from summed interval times (fio rounds them to ms)."""
    if how == STREAM_ROUND_LIMIT:
        return "round limit"
    # fio stops a job at its io_size exactly; one block per job of slack for the last I/O
    planned = (cell.io_size or 0) * cell.threads * drives
    if planned and new_bytes >= planned - cell.max_bs * cell.threads * drives:
        return f"{lim.target_bytes / lim.capacity_bytes:g}x capacity written"
    return "time limit"


def plan(ctx: TestContext) -> TestPlan:
    lim = limits(ctx)
    phases = []
    notes = []
    for name in ctx.settings.workloads:
        cell = saturation_cell(ctx, name, lim, lim.target_bytes, lim.time_limit_s)
        most = min(lim.time_limit_s, lim.max_rounds * lim.round_s)
        notes += [n for n in [workload_note(ctx, name)] if n and n not in notes]
        phases += [purge_phase(ctx), Phase(
            "stream", f"{name}: one continuous job from fresh-out-of-box, cut into {lim.round_s:g} s rounds, until "
                      f"{lim.target_bytes / lim.capacity_bytes:g}× the capacity ({lim.target_bytes / 1e9:,.2f} GB) "
                      f"is written, the time limit ({format_duration(lim.time_limit_s)}) or {lim.max_rounds} rounds, "
                      f"whichever comes first: from the time to write it at the drive's speed to "
                      f"{format_duration(most)}",
            [PlannedCell.of(cell)], 1, lim.max_rounds, None, most, int(lim.target_bytes))]
    return TestPlan("wsat", phases, notes)


def run(ctx: TestContext) -> WsatSummary:
    lim = limits(ctx)
    cap, interval = lim.capacity_bytes, lim.round_s
    limit_s, target_bytes, max_rounds = lim.time_limit_s, lim.target_bytes, lim.max_rounds
    results: dict[str, WsatWorkload] = {}
    for name in ctx.settings.workloads:
        phase = name
        purge = ctx.purger.purge(phase)
        if workload_note(ctx, name):
            ctx.note(workload_note(ctx, name))
        done = ctx.store.rounds(ctx.run_id, ctx.test, phase)
        written = sum(r.cells[0].write.bytes for r in done)
        elapsed = sum(r.cells[0].runtime_ms for r in done) / 1000
        remaining_bytes = target_bytes - written
        remaining_s = limit_s - elapsed
        stop = ctx.streams.stop_reason(phase)
        if stop is None and remaining_bytes > 0 and remaining_s > 0 and len(done) < max_rounds:
            cell = saturation_cell(ctx, name, lim, remaining_bytes, remaining_s)
            totals = {"bytes": written, "seconds": elapsed}

            def track(phase_, round_no, res, st, totals=totals):
                totals["bytes"] += res.write.bytes
                totals["seconds"] += res.runtime_ms / 1000
                return {"iops": res.iops, "mib_s": res.bw_bytes / 2**20, "tgbw_gb": totals["bytes"] / 1e9,
                        "fills": totals["bytes"] / cap, "elapsed_s": totals["seconds"],
                        "lat_mean_us": res.lat_mean_ns / 1000, "lat_max_us": res.lat_max_ns / 1000,
                        **{f"p{k}_us": v / 1000 for k, v in (res.write.percentiles or res.read.percentiles).items()}}

            ctx.progress.round_started(ctx.test, phase, len(done) + 1, max_rounds, None,
                                       f"saturating until {target_bytes / 1e9:.1f} GB written")
            how = ctx.streams.stream([phase], [cell], interval, track, max_rounds=max_rounds)
            new = ctx.store.rounds(ctx.run_id, ctx.test, phase)[len(done):]
            stop = ctx.streams.stop_reason(phase, stop_reason(cell, lim.drives, lim, how, sum(
                r.cells[0].read.bytes + r.cells[0].write.bytes for r in new)))
        elif stop is None:   # resumed after the last round, before the reason was stored
            stop = ctx.streams.stop_reason(phase, "round limit" if len(done) >= max_rounds else
                                   "time limit" if remaining_s <= 0 else
                                   f"{target_bytes / cap:g}x capacity written")
        rounds = ctx.store.rounds(ctx.run_id, ctx.test, phase)
        series = [r.tracking for r in rounds]
        last = series[-1] if series else {}
        tail = [s["iops"] for s in series[-5:]]
        ss = evaluate([s["iops"] for s in series], **ctx.settings.steady.evaluate_kw()) if series else None
        results[name] = WsatWorkload(
            purge=purge, rounds=len(rounds), stop_reason=stop,
            tgbw_gb=last.get("tgbw_gb", 0.0), fills=last.get("fills", 0.0), elapsed_s=last.get("elapsed_s", 0.0),
            fresh_iops=series[0]["iops"] if series else 0.0,
            final_iops=sum(tail) / len(tail) if tail else 0.0,
            steady_state_of_last_window=ss,
            series=[WsatInterval.of_tracking(s) for s in series])
    notes = (ctx.store.step(ctx.run_id, ctx.test, "notes") or {}).get("notes", [])
    return WsatSummary(workloads=results, capacity_bytes=cap, round_time_s=interval, notes=list(notes))
