"""SLC-cache sizing (reviewers' study, seeds 000 and 002): one long sequential write from FOB.

Purge, then SEQ 1 MiB writes (TC1, QD from the profile) over up to the whole capacity, bandwidth
stored per interval (one continuous job cut into intervals: the drive never idles, so the cache is
not folded behind our back). The plateaus (change points) are found by
`ssdpts.analyze.slc_cache.estimate`; the cache size is the bytes written before the first drop.
Seed 000 (KC2000): 2100 MiB/s for 32 s, then 700 MiB/s, then 500 MiB/s after 11 min -> ~65.6 GiB.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...analyze.slc_cache import DEFAULT_MIN_DROP, DEFAULT_MIN_POINTS, Step, estimate, rebin
from ...records import from_data, to_data
from ...targets.sim import SimTarget
from ...settings import ACTIVE_RANGE, BLOCK_SIZE, DURATION, FRACTION, POS_INT, TestSettings, key
from ...units import bs_label, format_duration
from ...workload import Workload
from ..common import TestContext
from ..plan import Phase, PlannedCell, TestPlan, purge_phase
from .summary import SeriesPoint, SlcCacheSummary, SlcReference

PHASE = "seq"


@dataclass(frozen=True)
class SlcCacheSettings(TestSettings):
    block_size: int = key(BLOCK_SIZE, "1m", "block size of the sequential write")
    interval: float = key(DURATION, "1s", "one stored throughput sample")
    time_limit: float = key(DURATION, "24h", "the write stops after this long")
    capacity_percent: float = key(ACTIVE_RANGE, 100, "share of the capacity written")
    min_drop: float = key(FRACTION, DEFAULT_MIN_DROP, "a throughput drop of at least this share ends the cache")
    min_points: int = key(POS_INT, DEFAULT_MIN_POINTS, "intervals a level must last to count")


def _reference(ctx: TestContext) -> SlcReference | None:
    """Targets that know their cache (the simulated SSD) record it right after the purge, once."""
    rec = ctx.store.step(ctx.run_id, ctx.test, "reference")
    if rec is not None:
        return from_data(SlcReference, rec)
    if not isinstance(ctx.target, SimTarget):
        return None
    c = ctx.target.counters()
    ref = SlcReference(c.get("slc_capacity_bytes"), c.get("slc_used_bytes"), "simulator counters after the purge")
    ctx.store.record_step(ctx.run_id, ctx.test, "reference", "reference", to_data(ref))
    return ref


def _setup(ctx: TestContext) -> tuple[int, float, float, int]:
    """(block size, interval s, time limit s, bytes to write)."""
    s = ctx.settings
    bs = s.block_size
    return bs, s.interval, s.time_limit, int(s.capacity_percent / 100.0 * ctx.target.size_bytes) // bs * bs


def _write(ctx: TestContext, bs: int, written: int, remaining: int, seconds_left: float) -> Workload:
    """The sequential write from where the stored intervals end (all of it on a fresh run)."""
    start = written / ctx.target.size_bytes
    return ctx.cell(f"slc_seq_{bs // 1024}K", "write", bs, 0, threads=1, range_start=start, range_size=1.0 - start,
                    io_size=remaining, runtime_s=seconds_left)


def plan(ctx: TestContext) -> TestPlan:
    bs, interval, limit_s, total = _setup(ctx)
    cell = _write(ctx, bs, 0, total, limit_s)
    return TestPlan("slc-cache", [purge_phase(ctx), Phase(
        "stream", f"one continuous SEQ {bs_label(bs)} write of {total / 2**30:.2f} GiB from FOB (TC1/QD{cell.iodepth}), "
                  f"stopped after {format_duration(limit_s)} at the latest; MiB/s stored every {interval:g} s",
        [PlannedCell.of(cell)], 1, 1, None, None, total)])


def run(ctx: TestContext) -> SlcCacheSummary:
    cap = ctx.target.size_bytes
    bs, interval, limit_s, total = _setup(ctx)
    min_drop = ctx.settings.min_drop
    purge = ctx.purge()
    reference = _reference(ctx)
    drives = len(ctx.target.drives())     # a parallel run writes every drive: stored bytes are their sum
    notes = [f"{drives} drives written at once: bandwidth, steps and the cache estimate are sums over the drives"
             ] if drives > 1 else []
    done = ctx.store.rounds(ctx.run_id, ctx.test, PHASE)
    written = sum(r.cells[0].write.bytes for r in done)
    elapsed = sum(r.cells[0].runtime_ms for r in done) / 1000
    per_drive = written // drives // bs * bs
    remaining = (total - per_drive) // bs * bs
    if remaining >= bs and limit_s - elapsed > 0:
        cells = [_write(ctx, bs, per_drive, remaining, limit_s - elapsed)]
        stream_interval = interval
        totals = {"bytes": written, "seconds": elapsed}

        def track(phase, round_no, res, st, totals=totals):
            secs = res.runtime_ms / 1000
            start_s = totals["seconds"]
            totals["bytes"] += res.write.bytes
            totals["seconds"] += secs
            return {"mib_s": res.write.bytes / secs / 2**20 if secs > 0 else 0.0, "start_s": start_s,
                    "end_s": totals["seconds"], "bytes": res.write.bytes, "written_bytes": totals["bytes"],
                    "iops": res.iops, "lat_mean_us": res.lat_mean_ns / 1000, "lat_max_us": res.lat_max_ns / 1000}

        ctx.progress.round_started(ctx.test, PHASE, len(done) + 1, 0, None,
                                   f"sequential write of {total / 2**30:.1f} GiB")
        ctx.stream([PHASE] * len(cells), cells, stream_interval, track)
    rounds = ctx.store.rounds(ctx.run_id, ctx.test, PHASE, with_cells=False)
    series = [r.tracking for r in rounds]
    times = [s["end_s"] for s in series]
    mibs = [s["mib_s"] for s in series]
    durs = [s["end_s"] - s["start_s"] for s in series]
    times, mibs, durs = rebin(times, mibs, durs, interval)   # no-op when the rounds already are intervals
    result = estimate(times, mibs, durations=durs, min_drop=min_drop,
                      min_points=ctx.settings.min_points)
    written = series[-1]["written_bytes"] if series else 0
    cache = result["cache_bytes"]
    if reference is not None and reference.slc_capacity_bytes and cache:
        reference.error = cache / reference.slc_capacity_bytes - 1
    return SlcCacheSummary(
        purge=purge, block_size=bs, iodepth=ctx.settings.iodepth, threads=1, capacity_bytes=cap,
        planned_bytes=total * drives, written_bytes=written, elapsed_s=series[-1]["end_s"] if series else 0.0,
        interval_s=interval, stop_reason="planned bytes written" if written >= total * drives else "time limit",
        drop_detected=result["drop_detected"], intervals=len(series),
        steps=[from_data(Step, st) for st in result["steps"]], cache_bytes=cache,
        first_drop_s=result["first_drop_s"], cache_speed_mib_s=result["cache_speed_mib_s"],
        after_drop_mib_s=result["after_drop_mib_s"], note=result.get("note", ""), reference=reference,
        series=[SeriesPoint(t, m) for t, m in zip(times, mibs)], drives=drives, notes=notes)
