"""Random write over time (reviewers' study, seed 001): how fast does each block size fall, and to what?

For every block size (2 ... 128 KiB by default): purge, then random writes for the profile's duration
as one continuous job, throughput stored per interval (seed: 240 min per size, 1 min samples).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...units import bs_label, format_duration
from ...workload import Workload
from ..plan import TestPlan, once, purge_phase
from .summary import BlockSizeRun, RatePoint, RwOverTimeSummary
from .settings import RwOverTimeSettings

if TYPE_CHECKING:     # annotations only: reading a stored run's settings imports no round loop
    from ..context import TestContext


def phase_of(bs: int) -> str:
    return f"bs={bs_label(bs)}"


def _setup(ctx: TestContext) -> tuple[list[int], list[str], float, float]:
    """(block sizes, notes on skipped sizes, duration s per size, interval s)."""
    sizes, notes = ctx.cells.skip_sub_sector(ctx.settings.block_sizes)
    return sizes, notes, ctx.settings.duration, ctx.settings.interval


def _write(ctx: TestContext, bs: int, seconds: float) -> Workload:
    return ctx.cells.cell(f"rnd_{bs_label(bs)}_write", "randwrite", bs, 0, runtime_s=seconds)


def plan(ctx: TestContext) -> TestPlan:
    sizes, notes, duration, interval = _setup(ctx)
    phases = []
    for bs in sizes:
        phases += [purge_phase(ctx), once("stream", f"{phase_of(bs)}: random {bs_label(bs)} writes as one continuous "
                                                    f"job for {format_duration(duration)}, MB/s stored every "
                                                    f"{interval:g} s", [_write(ctx, bs, duration)])]
    return TestPlan("rw-over-time", phases, notes)


def run(ctx: TestContext) -> RwOverTimeSummary:
    sizes, notes, duration, interval = _setup(ctx)
    for n in notes:
        ctx.note(n)
    out = []
    for bs in sizes:
        phase = phase_of(bs)
        purge = ctx.purger.purge(phase)
        done = ctx.store.rounds(ctx.run_id, ctx.test, phase, with_cells=False)
        elapsed = done[-1].tracking["end_s"] if done else 0.0
        if duration - elapsed > interval / 2:
            cell = _write(ctx, bs, duration - elapsed)
            clock = {"t": elapsed, "bytes": done[-1].tracking["written_bytes"] if done else 0}

            def track(phase_, round_no, res, st, clock=clock):
                secs = res.runtime_ms / 1000
                start = clock["t"]
                clock["t"] += secs
                clock["bytes"] += res.write.bytes
                return {"mb_s": res.write.bytes / secs / 1e6 if secs > 0 else 0.0,
                        "mib_s": res.write.bytes / secs / 2**20 if secs > 0 else 0.0, "iops": res.iops,
                        "start_s": start, "end_s": clock["t"], "written_bytes": clock["bytes"],
                        "lat_mean_us": res.lat_mean_ns / 1000}

            ctx.progress.round_started(ctx.test, phase, len(done) + 1, 0, duration - elapsed,
                                       f"random {bs_label(bs)} writes")
            ctx.streams.stream([phase], [cell], interval, track)
        series = [r.tracking for r in ctx.store.rounds(ctx.run_id, ctx.test, phase, with_cells=False)]
        mbs = [s["mb_s"] for s in series]
        tail = mbs[-max(1, len(mbs) // 10):]
        written = int(series[-1]["written_bytes"]) if series else 0
        out.append(BlockSizeRun(
            block_size=bs, purge=purge, intervals=len(series), first_mb_s=mbs[0] if mbs else 0.0,
            final_mb_s=sum(tail) / len(tail) if tail else 0.0, min_mb_s=min(mbs) if mbs else 0.0,
            max_mb_s=max(mbs) if mbs else 0.0, written_bytes=written,
            fills=written / (ctx.target.size_bytes * len(ctx.target.drives())),
            series=[RatePoint(s["end_s"], s["mb_s"], s["iops"]) for s in series],
            level_band_pct=ctx.settings.level_band_pct))
    return RwOverTimeSummary(duration_s=duration, interval_s=interval, block_sizes=out, notes=notes)
