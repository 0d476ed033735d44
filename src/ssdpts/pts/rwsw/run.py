"""Real World Storage Workload (RWSW): a captured application's IO streams applied the SNIA way.

1. The applied workload: the capture's top `top` streams (or the fewest covering `coverage` % of its I/Os,
   at most `top`), as one fio job holding their shares, or one job per access held together by fio's `flow`
   where one job cannot draw them (composite.py).
2. Purge, then preconditioning rounds of the applied workload at the largest TC/QD until steady (IOPS), then
   the demand-intensity sweep over TC x QD with response times and the Max / Mid / Min operating points:
   the DIRTH procedure (pts/demand.py) with the applied workload in place of DIRTH's writes.
3. Replay (`replay = true`): every captured time step in order at its captured intensity, one cell each: one
   fio job per top stream of the step at that stream's captured IOPS (`rate_iops`; the chosen streams scaled
   to the step's IOPS), each allowed the step's 99th-percentile queue depth (the rate, not the depth, sets
   how many are in flight), for the step's captured length times `replay_time_scale`; steps without I/O
   become device idle before the next cell.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...capabilities import Capability
from ...capture.model import WorkloadCapture, load
from ...engines.fio_versions import IOLOG_CLAT_FIXED, parse_version
from ...engines.results import CellResult
from ...engines.stimulus import OVERLAP_SHARE
from ...errors import SsdptsError
from ...inputs import refuse_unless_a_file
from ...units import bs_label
from ...workload import JobMix, Workload
from ...workload.trace import trace_tasks
from .. import demand
from ..windows import window_summary
from ..plan import TestPlan, once
from .composite import (AppliedStream, Composite, DirectionCounts, composite, delivered_pct, shares, split_threads,
                        stream_counts, whole_percents)
from .summary import ReplayStep, RwswSummary, TraceReplay, WorkloadSource
from .settings import RwswSettings

if TYPE_CHECKING:     # annotations only: reading a stored run's settings imports no round loop
    from ..context import TestContext

SHIPPED = Path(__file__).resolve().parents[2] / "workloads"   # src/ssdpts/workloads/
MIN_REPLAY_CELL_S = 0.1          # a replayed step shorter than this (after scaling) runs this long
SHARE_TOLERANCE_PP = 2.0         # a stream applied further than this from its requested share is flagged
# a sweep cell is judged on its mix from this many I/Os: each job's first I/Os go out before fio's flow has
# anything to hold, and in a cell of ~120 I/Os one I/O is almost a point
MIN_JUDGED_CELL_IOS = 500
# a replayed stream that fio ran at less than this share of its rate_iops was not carried at the captured intensity
# (the device, at the step's queue depth, or a busy host could not): its step is flagged with the figures
CARRIED_FRACTION = 0.95
MAX_TRACE_THREADS = 64           # fio threads replaying a kept trace (one per issuing task up to this many)


def shipped_names() -> list[str]:
    return sorted(p.name.removesuffix(".json").removesuffix(".workload") for p in SHIPPED.glob("*.json"))


def workload_path(given: str) -> Path:
    """The file a `workload` setting names: a path, else a shipped workload (NAME, NAME.json, NAME.workload.json)."""
    if not given.strip():
        raise SsdptsError("rwsw needs a captured workload: set [tests.rwsw] workload = \"FILE.workload.json\" "
                          f"(from 'ssdpts capture DEVICE --out FILE') or a shipped name "
                          f"({', '.join(shipped_names()) or 'none shipped'})")
    p = Path(given).expanduser()
    if p.is_file():
        return p.resolve()
    if p.exists():       # a directory, a device, a FIFO: named as what it is
        refuse_unless_a_file(p, "rwsw workload", p.stat().st_mode)
    for name in (given, f"{given}.json", f"{given}.workload.json"):
        if "/" not in given and (SHIPPED / name).is_file():
            return SHIPPED / name
    raise SsdptsError(f"rwsw workload {given!r}: no such file and no shipped workload of that name "
                      f"(shipped: {', '.join(shipped_names()) or 'none'}); give a workload file's path")


@dataclass
class Applied:
    """The workload file as this run applies it."""

    source: WorkloadSource
    capture: WorkloadCapture
    composite: Composite


def chosen_streams(capture_streams, all_ios: int, top: int, coverage: int):
    """The top streams: `top` of them, or fewer once they cover `coverage` % of the I/Os."""
    ranked = [s for s in sorted(capture_streams, key=lambda s: (-s.ios, -s.bytes, s.stream.label)) if s.ios > 0]
    out, seen = [], 0
    for s in ranked[:top]:
        out.append(s)
        seen += s.ios
        if coverage and seen * 100 >= coverage * all_ios:
            break
    return out


def applied_workload(ctx: TestContext) -> Applied:
    st = ctx.settings
    path = workload_path(st.workload)
    cap = load(path)
    if not cap.ios:
        raise SsdptsError(f"rwsw workload {path}: the capture holds no I/O; capture while the application runs")
    if cap.lossy and not st.allow_lossy_capture:
        raise SsdptsError(f"rwsw workload {path}: the capture lost {cap.lost_events:,} trace events (its counts are "
                          "low); capture again, or set allow_lossy_capture=true to apply it anyway")
    lbs = ctx.target.logical_block_size
    odd = sorted({s.stream.bs for s in cap.streams if s.ios and s.stream.bs % lbs})
    if odd:
        raise SsdptsError(f"rwsw workload {path}: block size(s) {', '.join(bs_label(b) for b in odd)} are not "
                          f"multiples of the target's {lbs}-byte logical block, fio cannot issue them; "
                          "use a target with 512-byte logical blocks or a capture from one")
    comp = composite(chosen_streams(cap.streams, cap.ios, st.top, st.coverage), cap.ios)
    src = WorkloadSource(given=st.workload, path=str(path), kind=cap.source.kind, device=cap.source.device,
                         duration_s=cap.source.duration_s, step_s=cap.source.step_s, ios=cap.ios,
                         streams=len(cap.streams), queue_depth_mean=cap.queue_depth.mean)
    applied = Applied(src, cap, comp)
    if st.replay and st.replay_trace:
        kept_trace(applied)          # refused before anything runs, not after the sweep
    return applied


def lba_distribution(cap: WorkloadCapture) -> str:
    """fio random_distribution of the capture's LBA histogram: `zoned`, each zone an equal part of the cell's range
    at its share of the I/Os (whole percents, fio's unit); 'random' where none was recorded or it is flat."""
    zones = cap.lba_zones
    if not zones or not sum(zones) or 100 % len(zones):
        return "random"
    pct = whole_percents(dict(enumerate(zones)))
    if len({pct.get(z, 0) for z in range(len(zones))}) == 1:
        return "random"
    return "zoned:" + ":".join(f"{pct.get(z, 0)}/{100 // len(zones)}" for z in range(len(zones)))


def composite_cell(ctx: TestContext, comp: Composite, distribution: str = "random"):
    """make_cell (pts/demand.py) for a composite: read_pct, when given, overrides its read share (one job); its
    random I/O lands by `distribution` (the capture's LBA histogram)."""
    def make_cell(name: str, threads: int, iodepth: int, read_pct: int | None = None, **kw) -> Workload:
        opts = comp.workload_options(iodepth=iodepth, threads=threads)
        if read_pct is not None:
            opts.update(read_pct=read_pct, jobs=(), iodepth=iodepth)
        kw.setdefault("distribution", distribution)
        return ctx.cells.cell(name, align=ctx.cells.io_alignment(), **opts, **kw)
    return make_cell


@dataclass
class ReplayCell:
    step: int
    cell: Workload
    composite: Composite
    captured_iops: float


def stream_jobs(comp: Composite, iops: float, iodepth: int, threads: int = 1) -> tuple[JobMix, ...]:
    """One job per stream at its share of `iops` (fio rate_iops, whole I/Os per second, at least 1): one block
    size and direction per job, so fio's pacing (bytes at the job's smallest size) is the stream's IOPS. The
    step's `threads` are shared among the streams by their shares (one each, the rest by share; fio's rate_iops
    is each thread's, so a stream's rate is split among its threads)."""
    per_stream = split_threads(threads, [s.requested_pct for s in comp.streams])
    jobs = []
    for s, n in zip(comp.streams, per_stream):
        jobs.append(JobMix(name=s.job_name, rw=("rand" if s.access == "random" else "") + s.rw,
                           read_pct=100 if s.rw == "read" else 0, bssplit=((s.bs, 100),), iodepth=iodepth,
                           threads=n, rate_iops=max(1, round(iops * s.requested_pct / 100 / n))))
    return tuple(jobs)


def replay_cells(ctx: TestContext, a: Applied) -> list[ReplayCell]:
    st, out, idle = ctx.settings, [], 0.0
    for i, step in enumerate(a.capture.steps, start=1):
        if not step.ios:
            if out:      # idle before the first replayed step would not be idle after anything the test ran
                idle += step.duration_s * st.replay_time_scale
            continue
        comp = composite(chosen_streams(step.streams, step.ios, st.top, st.coverage), step.ios)
        iops = step.ios / step.duration_s if step.duration_s else 0.0
        depth = max(1, step.queue_depth.percentile(99))
        jobs = stream_jobs(comp, iops, depth, max(1, step.threads))
        runtime = max(MIN_REPLAY_CELL_S, step.duration_s * st.replay_time_scale)
        opts = comp.workload_options()
        opts.update(jobs=jobs, iodepth=sum(j.iodepth for j in jobs))
        cell = ctx.cells.cell(f"rwsw_replay{i:04d}", align=ctx.cells.io_alignment(), runtime_s=runtime, idle_before_s=idle,
                        distribution=lba_distribution(a.capture), **opts)
        out.append(ReplayCell(i, cell, comp, iops))
        idle = 0.0
    return out


def _stream_jobs_of(rc: ReplayCell) -> dict[str, list[AppliedStream]]:
    return {s.job_name: [s] for s in rc.composite.streams}


def device_counts(res, comp: Composite) -> dict[str, float | None] | None:
    """Each stream's I/Os the device completed during the cell (its block-layer record), where the per-direction
    counts tell the streams apart (None per stream otherwise; None: no record, or I/O of no stream's direction)."""
    s = res.stimulus
    if s is None or not s.measured:
        return None
    return stream_counts(DirectionCounts(s.read_ios, s.read_bytes, s.write_ios, s.write_bytes), comp.streams) or None


def measured_pct(res, comp: Composite) -> dict[str, float | None] | None:
    """device_counts as shares of the cell's I/Os (%)."""
    counts = device_counts(res, comp)
    return None if counts is None else shares(counts)


def sweep_shares(cells, comp: Composite) -> tuple[dict[str, float] | None, dict[str, float | None] | None]:
    """The applied workload's stream shares over every cell given (the sweep's): fio's per-job counts, and the
    device's block-layer counts; None where a cell's counts cannot tell the streams apart."""
    fio: dict[str, float] | None = {}
    device: dict[str, float | None] | None = {}
    for res in cells:
        applied = delivered_pct(res, comp.job_streams())
        total = res.read.ios + res.write.ios
        if fio is not None and applied is not None:
            for k, v in applied.items():
                fio[k] = fio.get(k, 0.0) + v * total / 100
        else:
            fio = None
        seen = device_counts(res, comp)
        if device is not None and seen is not None:
            for k, v in seen.items():
                device[k] = None if v is None or device.get(k, 0.0) is None else device.get(k, 0.0) + v
        else:
            device = None
    return (shares(fio) if fio else None), (shares(device) if device else None)


def _replay(ctx: TestContext, a: Applied) -> list[ReplayStep]:
    cells = replay_cells(ctx, a)
    if not cells:
        return []
    rounds = ctx.rounds.run_sequence("replay", [c.cell for c in cells])
    results = {c.name: c for r in rounds for c in r.cells}
    windows = {name: w for r in rounds for name, w in window_summary([r], [r.round]).items()}
    out = []
    for rc in cells:
        step, res, w = a.capture.steps[rc.step - 1], results[rc.cell.name], windows[rc.cell.name]
        seen = res.stimulus if res.stimulus is not None and res.stimulus.measured else None
        out.append(ReplayStep(
            step=rc.step, start_s=step.start_s, captured_s=step.duration_s, captured_ios=step.ios,
            captured_iops=rc.captured_iops, captured_qd_mean=step.queue_depth.mean, qd=rc.cell.iodepth,
            idle_before_s=rc.cell.idle_before_s, composite=rc.composite, runtime_s=res.runtime_ms / 1000,
            iops=res.iops, lat_mean_us=w.lat_mean_us, read_lat=w.read_lat, write_lat=w.write_lat,
            delivered_pct=delivered_pct(res, _stream_jobs_of(rc)) if res.jobs else None,
            measured_pct=measured_pct(res, rc.composite), qd_per_stream=rc.cell.jobs[0].iodepth,
            rates={j.name: j.rate_iops for j in rc.cell.jobs}, threads=step.threads,
            window_ms=seen.elapsed_ms if seen else 0.0, overlap_before_ms=seen.overlap_ms if seen else 0.0,
            overlap_after_ms=seen.ran_on_ms if seen else 0.0))
    return out


def kept_trace(a: Applied) -> Path:
    """The capture's kept trace (beside its workload file), or one line saying how to get one."""
    path = Path(a.source.path).with_name(a.capture.trace_file) if a.capture.trace_file else None
    if path is None or not path.is_file():
        what = f"its trace {path} is missing" if path else "it kept no trace"
        raise SsdptsError(f"rwsw workload {a.source.path}: replay_trace = true, but {what}; capture with "
                          "'ssdpts capture DEVICE --keep-trace --out FILE', or set replay_trace = false to replay "
                          "the modelled steps")
    return path


def trace_cell(ctx: TestContext, a: Applied) -> Workload:
    """The kept trace as one cell: a fio thread per issuing task of the trace (at most MAX_TRACE_THREADS; more
    share them), each replaying its task's I/Os at their captured times (scaled by replay_time_scale), allowed
    the capture's deepest queue; it ends when the trace is done (no runtime cap: a device slower than the
    capture takes longer, and every I/O is still replayed)."""
    cap, scale = a.capture, ctx.settings.replay_time_scale
    top = max(cap.streams, key=lambda s: s.ios)
    reads = sum(s.ios for s in cap.streams if s.stream.rw == "read")
    path = kept_trace(a)
    return ctx.cells.cell("rwsw_trace", "randrw", top.stream.bs, round(100 * reads / cap.ios), trace=str(path),
                    trace_rate_pct=max(1, round(100 / scale)),
                    threads=max(1, min(MAX_TRACE_THREADS, len(trace_tasks(path)))),
                    iodepth=max(1, max(cap.queue_depth.histogram, default=1)),
                    runtime_s=None, io_size=sum(s.bytes for s in cap.streams))


def _trace_replay(ctx: TestContext, a: Applied) -> TraceReplay:
    cell = trace_cell(ctx, a)
    rounds = ctx.rounds.run_sequence("replay", [cell])
    res: CellResult = next(c for r in rounds for c in r.cells if c.name == cell.name)
    w = window_summary(rounds, [r.round for r in rounds])[cell.name]
    seen = res.stimulus if res.stimulus is not None and res.stimulus.measured else None
    return TraceReplay(
        trace=cell.trace, captured_ios=a.capture.ios, captured_bytes=sum(s.bytes for s in a.capture.streams),
        captured_s=a.capture.source.duration_s, rate_pct=cell.trace_rate_pct, iodepth=cell.iodepth,
        threads=cell.threads,
        runtime_s=res.runtime_ms / 1000, fio_ios=res.read.ios + res.write.ios,
        device_ios=seen and seen.read_ios + seen.write_ios, device_bytes=seen and seen.read_bytes + seen.write_bytes,
        iops=res.iops, lat_mean_us=w.lat_mean_us, read_lat=w.read_lat, write_lat=w.write_lat)


def stream_iops(r: ReplayStep) -> list[tuple[str, float, float]]:
    """(stream, IOPS fio ran it at, IOPS it was asked for) for each stream of a replayed step at its captured
    intensity (fio's counts: the step's IOPS times the stream's share of them)."""
    if not r.rates or not r.delivered_pct or not r.captured_iops:
        return []
    return [(s.label, r.iops * r.delivered_pct.get(s.label, 0.0) / 100, r.captured_iops * s.requested_pct / 100)
            for s in r.composite.streams]


def not_carried(steps: list[ReplayStep]) -> list[str]:
    """One line per replayed step in which a stream ran short of its captured IOPS (fio's own counts)."""
    out = []
    for r in steps:
        short = [(label, got, want) for label, got, want in stream_iops(r) if got < CARRIED_FRACTION * want]
        if short:
            out.append(f"replay step {r.step}: " + ", ".join(f"{label} ran at {got:,.0f} of its {want:,.0f} IOPS"
                                                             for label, got, want in short)
                       + f" (queue depth {r.qd_per_stream or '?'} each): the device, or a busy host, could not carry "
                         "the captured intensity; that step's shares and IOPS are the device's limit, not the "
                         "capture's")
    return out


def _worst_off(got: dict[str, float | None] | None, streams) -> str | None:
    """The stream furthest from its requested share, said as "S at x % where y % was requested (...)", where it is
    off by more than the tolerance; None otherwise."""
    errs = [(abs(got[s.label] - s.requested_pct), s) for s in streams if got and got.get(s.label) is not None]
    worst = max(errs, key=lambda e: e[0], default=None)
    if not worst or worst[0] <= SHARE_TOLERANCE_PP:
        return None
    e, s = worst
    return (f"{s.label} at {got[s.label]:.1f} % where {s.requested_pct:.1f} % was requested ({e:.1f} points off, "
            f"more than {SHARE_TOLERANCE_PP:g})")


def off_mix(steps: list[ReplayStep]) -> list[str]:
    """One line per replayed step whose applied or measured stream shares are off by more than the tolerance; a
    step whose device record is mixed with a neighbour's (mixed_records) is judged by fio's counts only."""
    out = []
    for r in steps:
        judged = [("fio applied", r.delivered_pct)] + ([] if r.device_mixed else [("the device saw", r.measured_pct)])
        for what, got in judged:
            off = _worst_off(got, r.composite.streams)
            if off:
                out.append(f"replay step {r.step}: {what} {off}; the replayed mix is not the capture's: see the "
                           "replay table")
                break
    return out


def mixed_records(steps: list[ReplayStep]) -> list[str]:
    """One line per replayed step whose device record is mixed with a neighbour's (ReplayStep.device_mixed): a
    time-based cell's successor is let go at its predicted end, and on a busy host a job that started late runs on
    into the next cell's window (beside two busy loops a step's last 6 SEQ 128K reads were counted in the next
    step's 437 ms window, where fio's end report came 64 ms after its release: 24.2 % SEQ 128K R in that window
    where fio ran 20.2 %). Its measured shares are the window's, not the step's, and are not judged."""
    out = []
    for r in steps:
        if not r.device_mixed:
            continue
        why = []
        if r.beyond_share(r.overlap_before_ms):
            why.append(f"the cell before ran on {r.overlap_before_ms:,.0f} ms into the step's {r.window_ms:,.0f} ms "
                       "window")
        if r.beyond_share(r.overlap_after_ms):
            why.append(f"the step ran on {r.overlap_after_ms:,.0f} ms into the next step's window (its I/O of "
                       f"that time is counted there, not in its own {r.window_ms:,.0f} ms)")
        out.append(f"replay step {r.step}: the device's record of the step is mixed with its neighbour's: "
                   f"{' and '.join(why)}, more than {100 * OVERLAP_SHARE:g} % of it; its measured shares are not "
                   "judged (fio's own counts are)")
    return out


def off_mix_cells(cells, comp: Composite) -> list[str]:
    """One line per (round, cell) of the sweep of at least MIN_JUDGED_CELL_IOS I/Os whose stream shares, as the
    device completed them, are off by more than the tolerance: its figures are not the workload's (a job starved
    on a busy host: seen once beside two busy loops, a 4K read stream at 0.2 % of a cell where 50 % was asked). A
    cell whose device record is mixed with a neighbour's (Stimulus.mixed_with_neighbours: the window's counts, not
    the cell's) is judged by fio's own counts of its jobs instead, and said so."""
    out = []
    for round_no, res in cells:
        if res.read.ios + res.write.ios < MIN_JUDGED_CELL_IOS:
            continue
        if res.stimulus is not None and res.stimulus.mixed_with_neighbours:
            what, got = "fio applied", delivered_pct(res, comp.job_streams())
        else:
            what, got = "the device saw", measured_pct(res, comp)
        off = _worst_off(got, comp.streams)
        if off:
            out.append(f"round {round_no} cell {res.name}: {what} {off}; that cell's figures are not the "
                       "workload's mix")
    return out


def _notes(ctx: TestContext, a: Applied) -> list[str]:
    c = a.composite
    jobs = f"as {len(c.groups)} fio jobs held together by fio's flow" if c.groups else "as one fio job"
    out = [f"applied workload: {len(c.streams)} of {a.source.streams} IO streams, {c.coverage_pct:.1f} % of the "
           f"capture's I/Os, {jobs} ({c.spec_label})"]
    if c.groups:
        out.append(f"a direction mixes random and sequential streams: one job would draw size and access "
                   f"independently and be off by {c.one_job_error_pp:.1f} percentage points, so each stream runs as "
                   "its own job")
    if c.max_error_pp > SHARE_TOLERANCE_PP:
        out.append(f"the jobs' whole-percent draws are off by {c.max_error_pp:.1f} percentage points from the "
                   f"requested stream shares (more than {SHARE_TOLERANCE_PP:g}); fewer streams (top) hold them closer")
    dist = lba_distribution(a.capture)
    out.append(f"LBA hot spots: the capture's histogram of {len(a.capture.lba_zones)} zones applied to the random I/O "
               f"as fio random_distribution={dist}" if dist != "random" else
               "LBA hot spots: " + ("none in the capture (its I/O spreads evenly)" if a.capture.lba_zones else
                                    "not captured (an older workload file): random I/O spreads uniformly"))
    if ctx.settings.replay and not ctx.settings.replay_trace and not any(s.threads for s in a.capture.steps):
        out.append("threads not captured (an imported or older workload file): each replayed stream runs as one "
                   "thread")
    found = parse_version(getattr(ctx.engine, "version", "") or "")
    if ctx.settings.replay and ctx.settings.replay_trace and found is not None and found < IOLOG_CLAT_FIXED:
        out.append(f"the trace replay's latencies are not the device's: fio {found[0]}.{found[1]} sleeps between "
                   "replayed I/Os without reaping completions, so each one's latency includes the wait for the next "
                   f"(fixed in fio {IOLOG_CLAT_FIXED[0]}.{IOLOG_CLAT_FIXED[1]}); its counts and times stand")
    if ctx.settings.replay and ctx.settings.replay_trace:
        out.append(f"replay: the kept trace ({a.capture.trace_file}) I/O for I/O, a fio thread per issuing task "
                   "(fio read_iolog, redirected to the target), at the captured times x replay_time_scale; offsets "
                   "beyond the target's end wrap around")
    if ctx.engine is not None and Capability.FIO_JOBS not in ctx.engine.capabilities:    # None: a plan
        out.append("the simulated drive runs every cell as ONE job of random I/O with one block-size split for both "
                   "directions and no rate limit: it keeps the read share and each size's share of all I/Os, not which "
                   "direction or access a size belongs to, not the separate jobs, not the replay's captured intensity, "
                   "not a kept trace, not the LBA hot spots")
    return out


def run(ctx: TestContext) -> RwswSummary:
    a = applied_workload(ctx)
    notes = _notes(ctx, a)
    for n in notes:
        ctx.note(n)
    dist = lba_distribution(a.capture)
    summary = demand.sweep(ctx, "rwsw", composite_cell(ctx, a.composite, dist), RwswSummary, writes_only=False,
                           read_pct=a.composite.read_pct, workload=a.source, applied=a.composite,
                           replay_time_scale=ctx.settings.replay_time_scale, notes=notes, lba_distribution=dist)
    sweep = [(r.round, c) for r in ctx.store.rounds(ctx.run_id, ctx.test, ctx._ph("")) for c in r.cells]
    summary.applied_fio_pct, summary.applied_device_pct = sweep_shares([c for _, c in sweep], a.composite)
    if ctx.engine is not None and Capability.FIO_JOBS in ctx.engine.capabilities:    # the simulator: one job, said
        for line in off_mix_cells(sweep, a.composite):
            ctx.note(line)
            summary.notes.append(line)
    if ctx.settings.replay and ctx.settings.replay_trace:
        summary.trace_replay = _trace_replay(ctx, a)
    elif ctx.settings.replay:
        summary.replay = _replay(ctx, a)
        for line in off_mix(summary.replay) + mixed_records(summary.replay) + not_carried(summary.replay):
            ctx.note(line)
            summary.notes.append(line)
    return summary


def plan(ctx: TestContext) -> TestPlan:
    a = applied_workload(ctx)
    pattern = f"top-{len(a.composite.streams)}-stream ({Path(a.source.path).name})"
    out = demand.plan(ctx, "rwsw", "rwsw", composite_cell(ctx, a.composite, lba_distribution(a.capture)), pattern,
                      prewrite=RwswSummary.PREWRITE)
    if ctx.settings.replay and ctx.settings.replay_trace:
        out.phases.append(once("sequence", f"replay: the kept trace, {a.capture.ios:,} I/Os at their captured times "
                               f"x {ctx.settings.replay_time_scale:g} (fio read_iolog)", [trace_cell(ctx, a)]))
    elif ctx.settings.replay:
        cells = [c.cell for c in replay_cells(ctx, a)]
        out.phases.append(once("sequence", f"replay: {len(cells)} captured steps in order at their captured IOPS, "
                               f"one job per top stream at its own rate, {ctx.settings.replay_time_scale:g} × its "
                               "captured length", cells))
    out.notes += _notes(ctx, a)
    return out
