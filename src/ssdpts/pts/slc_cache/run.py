"""SLC-cache sizing (reviewers' study, seeds 000 and 002): one long sequential write from FOB.

Purge, then SEQ 1 MiB writes (TC1, QD from the profile) over up to the whole capacity, bandwidth
stored per interval (one continuous job cut into intervals: the drive never idles, so the cache is
not folded behind our back). The plateaus (change points) are found by
`ssdpts.pts.slc_cache.steps.estimate`; the cache size is the bytes written before the first drop.
Seed 000 (KC2000): 2100 MiB/s for 32 s, then 700 MiB/s, then 500 MiB/s after 11 min -> ~65.6 GiB.
"""

from __future__ import annotations

import dataclasses


from .steps import Step, estimate, rebin
from ...records import from_data, to_data
from ...targets.sim import simulated
from ...units import bs_label, format_duration
from ...workload import Workload
from ..context import TestContext, stored_once
from ..plan import Phase, PlannedCell, TestPlan, purge_phase
from .resolution import auto_interval, deviation, resolution, unresolved
from .summary import FillLevel, SeriesPoint, SlcCacheSummary, SlcReference
from .settings import SlcCacheSettings

PHASE = "seq"
STEP_BINS = 500


def _reference(ctx: TestContext) -> SlcReference | None:
    """Targets that know their cache (the simulated SSD) record it right after the purge, once."""
    rec = ctx.store.step(ctx.run_id, ctx.test, "reference")
    if rec is not None:
        return from_data(SlcReference, rec)
    if not simulated(ctx.target):
        return None
    # several drives written at once: the estimate is their sum (run()), so is the reference
    cs = [d.counters() for d in ctx.target.drives()]
    summed = f" (summed over {len(cs)} drives)" if len(cs) > 1 else ""
    ref = SlcReference(sum(c.get("slc_capacity_bytes") or 0 for c in cs) or None,
                       sum(c.get("slc_used_bytes") or 0 for c in cs), f"simulator counters after the purge{summed}")
    ctx.store.record_step(ctx.run_id, ctx.test, "reference", "reference", to_data(ref))
    return ref


def _setup(ctx: TestContext) -> tuple[int, float, float, int]:
    """(block size, interval s, time limit s, bytes to write)."""
    s = ctx.settings
    bs = s.block_size
    return bs, interval_s(ctx), s.time_limit, int(s.capacity_percent / 100.0 * ctx.target.size_bytes) // bs * bs


def interval_s(ctx: TestContext) -> float:
    """The profile's sample interval, else the automatic one for the drive's capacity."""
    return ctx.settings.interval or auto_interval(ctx.target.size_bytes)


def _write(ctx: TestContext, bs: int, written: int, remaining: int, seconds_left: float) -> Workload:
    """The sequential write from where the stored intervals end (all of it on a fresh run)."""
    start = written / ctx.target.size_bytes
    return ctx.cells.cell(f"slc_seq_{bs // 1024}K", "write", bs, 0, threads=1, range_start=start, range_size=1.0 - start,
                    io_size=remaining, runtime_s=seconds_left)


def _fill_cells(ctx: TestContext, pct: float, bs: int, limit_s: float) -> list[Workload]:
    """A fill level: SEQ writes of `pct` % of the capacity, then (after the idle) the same probe as the FOB
    measurement over the rest of the drive."""
    cap = ctx.target.size_bytes
    filled = int(pct / 100.0 * cap) // bs * bs
    probe = _write(ctx, bs, filled, (cap - filled) // bs * bs, limit_s).with_(
        name=f"slc_probe_{pct:g}pct", idle_before_s=ctx.settings.fill_idle)
    if filled < bs:
        return [probe]
    return [ctx.cells.cell(f"slc_fill_{pct:g}pct", "write", bs, 0, threads=1, range_start=0.0, range_size=1.0,
                     io_size=filled, runtime_s=None), probe]


def _fill_levels(ctx: TestContext) -> list[float]:
    """The fill levels after the FOB measurement (0 % is that measurement), ascending."""
    return sorted({float(p) for p in ctx.settings.fill_levels or ()} - {0.0})


def plan(ctx: TestContext) -> TestPlan:
    bs, interval, limit_s, total = _setup(ctx)
    cell = _write(ctx, bs, 0, total, limit_s)
    phases = [purge_phase(ctx), Phase(
        "stream", f"one continuous SEQ {bs_label(bs)} write of {total / 2**30:.2f} GiB from FOB (TC1/QD{cell.iodepth}), "
                  f"stopped after {format_duration(limit_s)} at the latest; MiB/s stored every {interval:g} s",
        [PlannedCell.of(cell)], 1, 1, None, None, total)]
    for pct in _fill_levels(ctx):
        cells = _fill_cells(ctx, pct, bs, limit_s)
        phases += [purge_phase(ctx), Phase(
            "stream", f"fill level {pct:g} %: SEQ {bs_label(bs)} writes of {pct:g} % of the capacity, "
                      f"{format_duration(ctx.settings.fill_idle)} idle, then the cache probe over the rest",
            [PlannedCell.of(c) for c in cells], 1, 1, None, None, sum(c.io_size or 0 for c in cells))]
    return TestPlan("slc-cache", phases)


def _interval_tracker(totals: dict):
    """Per stored interval: MiB/s and where it lies in the write (seconds and bytes from the write's start)."""
    def track(phase, round_no, res, st):
        secs = res.runtime_ms / 1000
        start_s = totals["seconds"]
        totals["bytes"] += res.write.bytes
        totals["seconds"] += secs
        return {"mib_s": res.write.bytes / secs / 2**20 if secs > 0 else 0.0, "start_s": start_s,
                "end_s": totals["seconds"], "bytes": res.write.bytes, "written_bytes": totals["bytes"],
                "iops": res.iops, "lat_mean_us": res.lat_mean_ns / 1000, "lat_max_us": res.lat_max_ns / 1000}
    return track


def _estimate(ctx: TestContext, series: list[dict]) -> tuple[dict, list, list]:
    """The plateaus of stored intervals: (estimate, times, MiB/s)."""
    times, mibs, durs = ([s["end_s"] for s in series], [s["mib_s"] for s in series],
                         [s["end_s"] - s["start_s"] for s in series])
    times, mibs, durs = rebin(times, mibs, durs, interval_s(ctx))   # no-op when the rounds already are intervals
    st = ctx.settings
    result = estimate(times, mibs, durations=durs, min_drop=st.min_drop, min_points=st.min_points)
    # the cache size comes from the fine intervals; the steps after it from at most STEP_BINS bins (a fine interval
    # sees the folding's own rhythm, tens of ms, as a dozen steps where the drive has two speeds). A bin never
    # straddles the cache's drop: the first step is the cache as the fine intervals found it (a coarse bin across
    # the drop averaged the cache with the speed after it, or hid a cache shorter than a bin)
    width = max(interval_s(ctx), sum(durs) / STEP_BINS)
    cache = cache_step(result)
    if cache is not None:
        after = [i for i, (t, d) in enumerate(zip(times, durs)) if t - d >= cache.end_s - 1e-9]
        times, mibs, durs = rebin([times[i] for i in after], [mibs[i] for i in after], [durs[i] for i in after], width)
        rest = [from_data(Step, x) for x in estimate(times, mibs, durations=durs, min_drop=st.min_drop,
                                                     min_points=st.min_points)["steps"]]
        result["steps"] = [cache.to_dict()] + [dataclasses.replace(x, index=x.index + 1).to_dict() for x in rest]
        return result, [cache.end_s] + times, [cache.mib_s] + mibs
    times, mibs, durs = rebin(times, mibs, durs, width)
    result["steps"] = estimate(times, mibs, durations=durs, min_drop=st.min_drop, min_points=st.min_points)["steps"]
    return result, times, mibs


def cache_step(result: dict) -> Step | None:
    """The cache's plateau as the fine intervals measured it: from the start to the first drop, at the cache's
    speed, its bytes the estimate's (None where no drop was found)."""
    if not result["drop_detected"]:
        return None
    first = result["steps"][0]
    return Step(index=0, first=0, last=first["last"], start_s=0.0, end_s=result["first_drop_s"],
                mib_s=result["cache_speed_mib_s"], median_mib_s=first["median_mib_s"], bytes=result["cache_bytes"])


def bits_per_cell(ctx: TestContext) -> tuple[int | None, str]:
    """Bits per native cell and where it comes from (the profile, else the simulated drive's preset)."""
    if ctx.settings.bits_per_cell is not None:
        return ctx.settings.bits_per_cell, "profile (bits_per_cell)"
    # several simulated drives: known when their presets agree
    presets = {((d.info or {}).get("params") or {}).get("bits_per_cell") for d in ctx.target.drives()} \
        if simulated(ctx.target) else set()
    known = presets.pop() if len(presets) == 1 else None
    return (int(known), "simulated drive's preset") if known else (None, "not available (set bits_per_cell)")


def _measure_fill(ctx: TestContext, pct: float, bs: int, limit_s: float) -> FillLevel:
    """Purge, fill `pct` % of the drive, idle, probe (stored whole: an interrupted level starts again)."""
    return stored_once(ctx, f"fill={pct:g}%", FillLevel, lambda scope: _fill_level(ctx, scope, pct, bs, limit_s))


def _fill_level(ctx: TestContext, scope: str, pct: float, bs: int, limit_s: float) -> FillLevel:
    ctx.purger.purge(scope)
    cells = _fill_cells(ctx, pct, bs, limit_s)
    phases = [f"{scope}/fill", f"{scope}/probe"][-len(cells):]
    totals = {"bytes": 0, "seconds": 0.0}
    probe_totals = {"bytes": 0, "seconds": 0.0}
    fill_track, probe_track = _interval_tracker(totals), _interval_tracker(probe_totals)
    ctx.progress.round_started(ctx.test, phases[0], 1, 0, None, f"fill level {pct:g} %")
    ctx.streams.stream(phases, cells, interval_s(ctx),
               lambda phase, *a: (probe_track if phase.endswith("/probe") else fill_track)(phase, *a))
    series = [r.tracking for r in ctx.store.rounds(ctx.run_id, ctx.test, ctx._ph(phases[-1]), with_cells=False)]
    result, _, _ = _estimate(ctx, series)
    cap = ctx.target.size_bytes
    cache = result["cache_bytes"]
    return FillLevel(
        fill_percent=pct, filled_bytes=totals["bytes"], idle_s=ctx.settings.fill_idle,
        probe_bytes=probe_totals["bytes"], probe_s=probe_totals["seconds"], drop_detected=result["drop_detected"],
        cache_bytes=cache, share_percent=None if cache is None else cache / cap * 100,
        cache_mib_s=result["cache_speed_mib_s"], after_drop_mib_s=result["after_drop_mib_s"],
        note=result.get("note", ""))


def run(ctx: TestContext) -> SlcCacheSummary:
    cap = ctx.target.size_bytes
    bs, interval, limit_s, total = _setup(ctx)
    purge = ctx.purger.purge()
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
        track = _interval_tracker({"bytes": written, "seconds": elapsed})
        ctx.progress.round_started(ctx.test, PHASE, len(done) + 1, 0, None,
                                   f"sequential write of {total / 2**30:.1f} GiB")
        ctx.streams.stream([PHASE] * len(cells), cells, stream_interval, track)
    rounds = ctx.store.rounds(ctx.run_id, ctx.test, PHASE, with_cells=False)
    series = [r.tracking for r in rounds]
    result, times, mibs = _estimate(ctx, series)
    written = series[-1]["written_bytes"] if series else 0
    cache = result["cache_bytes"]
    fob = FillLevel(0.0, 0, 0.0, written, series[-1]["end_s"] if series else 0.0, result["drop_detected"], cache,
                    None if cache is None else cache / cap * 100, result["cache_speed_mib_s"],
                    result["after_drop_mib_s"], result.get("note", ""))
    levels = [fob] + [_measure_fill(ctx, pct, bs, limit_s) for pct in _fill_levels(ctx)] \
        if ctx.settings.fill_levels else []
    bits, bits_source = bits_per_cell(ctx)
    if reference is not None and reference.slc_capacity_bytes and cache:
        reference.error = cache / reference.slc_capacity_bytes - 1
    res = resolution(cache, result["cache_speed_mib_s"], interval)
    if (dev := deviation(res)) is not None:
        ctx.store.record_deviation(ctx.run_id, ctx.test, dev)
    elif cache is None and reference is not None and series and (dev := unresolved(
            reference.slc_capacity_bytes, series[0]["mib_s"], interval, ctx.settings.min_points)) is not None:
        ctx.store.record_deviation(ctx.run_id, ctx.test, dev)
        result["note"] = dev.evidence
    return SlcCacheSummary(
        purge=purge, block_size=bs, iodepth=ctx.settings.iodepth, threads=1, capacity_bytes=cap,
        planned_bytes=total * drives, written_bytes=written, elapsed_s=series[-1]["end_s"] if series else 0.0,
        interval_s=interval, stop_reason="planned bytes written" if written >= total * drives else "time limit",
        drop_detected=result["drop_detected"], intervals=len(series),
        steps=[from_data(Step, st) for st in result["steps"]], cache_bytes=cache,
        first_drop_s=result["first_drop_s"], cache_speed_mib_s=result["cache_speed_mib_s"],
        after_drop_mib_s=result["after_drop_mib_s"], note=result.get("note", ""), reference=reference,
        series=[SeriesPoint(t, m) for t, m in zip(times, mibs)], drives=drives, notes=notes,
        bits_per_cell=bits, bits_per_cell_source=bits_source, fill_levels=levels,
        resolution_fraction=None if res is None else res.fraction, interval_auto=ctx.settings.interval is None)
