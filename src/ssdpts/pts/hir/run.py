"""Host Idle Recovery (HIR): does the drive recover (garbage-collect) when the host lets it idle?

Purge; RND 4 KiB writes until steady state (preconditioning: rounds of `precondition_time` (30) x
`cell_runtime` (1-minute) cells, steady state judged on the last minute of each round, at most 25 rounds,
as cloudharmony and ADATA run it; a round of one cell could declare "steady" on the fresh-out-of-box
plateau); then for each wait state (idle 5, 10,
15, 25, 50 s): R repetitions of [5 s of writes, then idle] (segment AB), followed by R repetitions of
5 s of continuous writes (segment C, the baseline; no idle, unlike cloudharmony's bug). Every burst
is its own fio job, started on time by the engine's gates (no process start per burst); the idle is
real idle (no I/O) and both are measured.

The reviews (seeds 000, 003, 004) run it after a fixed-length preconditioning instead (`precondition_time`
= 120/360/600 min, `fixed_preconditioning = true`: one round), seed 004 with 2x SEQ 128 KiB writes before
it (`wipc_multiple = 2`); both are recorded in the summary and flagged as deviations
(docs/hir-wsat-latency.md).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Sequence

from ...engines.results import CellResult, DirStats
from ...deviations import Deviation
from ...store import RoundRecord
from ...workload import Workload
from ..cells import cell_name
from ..windows import merged_latency
from ..plan import TestPlan, once, purge_phase, steady_loop, wipc_phase
from ...results import TrackerKey
from .summary import HirPreconditioning, HirSummary, WaitState, span
from .settings import HirSettings

if TYPE_CHECKING:     # annotations only: reading a stored run's settings imports no round loop
    from ..context import TestContext

# the rules the reviews' preparation departs from (docs/conformance.md, HIR rows)
WIPC_SOURCE = ("PTS-E 1.1 HIR as cloudharmony/ADATA/Fateast run it: purge, no WIPC, RND 4K writes to steady state "
               "(snia-pts.md 3.5)")
FIXED_PC_SOURCE = "PTS-E 1.1 HIR: RND 4K preconditioning until steady state (at most 25 rounds)"


def _label(seconds: float) -> str:
    return f"{seconds:g}s"


def preconditioning_cells(ctx: TestContext) -> list[Workload]:
    """One preconditioning round: `precondition_time` of RND 4K writes cut into `cell_runtime` cells."""
    n = max(1, round(ctx.settings.precondition_time / ctx.settings.cell_runtime))
    return [ctx.cells.cell(f"{cell_name('rnd', 4096, 0)}_m{i + 1:02d}", "randwrite", 4096, 0) for i in range(n)]


def pc_tracker(cells: list[Workload]) -> TrackerKey:
    return TrackerKey(cells[-1].name, "iops")      # the last minute of each round


def burst_s(ctx: TestContext) -> float:
    return ctx.settings.burst


def wait_states(ctx: TestContext) -> list[float]:
    return list(ctx.settings.wait_states)


def repetitions(ctx: TestContext) -> int:
    return ctx.settings.repetitions


def wait_state_segments(ctx: TestContext, idle: float) -> list[tuple[str, list[Workload]]]:
    """One wait state: (phase 'ws=IDLE/AB', bursts after idle), (phase 'ws=IDLE/C', continuous bursts)."""
    burst, reps = burst_s(ctx), repetitions(ctx)
    # fio's per-100 ms IOPS logs are kept with each round: they show the idle really has no I/O
    ab = [ctx.cells.cell(f"ab{i + 1}", "randwrite", 4096, 0, runtime_s=burst, idle_before_s=idle if i else 0.0,
                   log_interval_ms=100) for i in range(reps)]
    # SNIA pairs A (write) + B (idle): the idle follows every burst, so the baseline's first
    # burst also comes after one; the first burst of AB follows the previous segment directly
    c = [ctx.cells.cell(f"c{i + 1}", "randwrite", 4096, 0, runtime_s=burst, idle_before_s=idle if i == 0 else 0.0,
                  log_interval_ms=100) for i in range(reps)]
    return [(f"ws={_label(idle)}/AB", ab), (f"ws={_label(idle)}/C", c)]


def wipc(ctx: TestContext) -> Workload | None:
    """The optional SEQ writes before the RND 4K preconditioning (seed 004's 2x SEQ 128 KiB); None: none."""
    s = ctx.settings
    return ctx.cells.wipc(s.wipc_block_size, s.wipc_multiple) if s.wipc_multiple else None


def plan(ctx: TestContext) -> TestPlan:
    pc = preconditioning_cells(ctx)
    s = ctx.settings
    phases = [purge_phase(ctx)]
    if s.wipc_multiple:
        phases.append(wipc_phase(ctx, s.wipc_block_size, s.wipc_multiple))
    if s.fixed_preconditioning:
        phases.append(once("rounds", f"fixed-length preconditioning (phase pc): one round of {len(pc)} × RND 4K "
                                     "write cells, not steady state (the reviews' method; non-conformant)", pc))
    else:
        phases.append(steady_loop(ctx, pc, f"preconditioning (phase pc): rounds of {len(pc)} × RND 4K write cells, "
                                           f"tracking {pc_tracker(pc).label}"))
    reps, burst = repetitions(ctx), burst_s(ctx)
    for idle in wait_states(ctx):
        phases.append(once("sequence", f"wait state {_label(idle)}: {reps} × [{burst:g} s RND 4K writes after "
                                       f"{idle:g} s idle] (AB), then {reps} × {burst:g} s continuous writes (C)",
                           [c for _, cells in wait_state_segments(ctx, idle) for c in cells]))
    return TestPlan("hir", phases)


def run(ctx: TestContext) -> HirSummary:
    reps = repetitions(ctx)
    purge = ctx.purger.purge()
    pc_cells = preconditioning_cells(ctx)
    s = ctx.settings
    # a fixed-length preconditioning is the steady-state loop held to one round (its verdict: not reached)
    pc_ctx = replace(ctx, settings=replace(s, steady=replace(s.steady, max_rounds=1))) if s.fixed_preconditioning \
        else ctx
    pc = pc_ctx.rounds.run_to_steady_state("pc", pc_cells, [pc_tracker(pc_cells)], precondition=wipc(ctx))
    preconditioning = preconditioning_record(ctx, len(pc.rounds), pc.reached)
    segments: dict[str, WaitState] = {}
    every_burst: list[DirStats] = []
    load = wait_state_segments(ctx, 0.0)[0][1][0]      # every burst runs at the test's threads and queue depth
    for idle in wait_states(ctx):
        # AB and C in one chained sequence: the idle after the last AB burst is scheduled like the others
        (ab_phase, ab), (c_phase, c) = wait_state_segments(ctx, idle)
        rounds = ctx.rounds.run_segments([(ab_phase, ab), (c_phase, c)], tracking=_burst_tracking)
        ab_rounds, c_rounds = rounds[ab_phase], rounds[c_phase]
        ab_writes, c_writes = _writes(ab_rounds), _writes(c_rounds)
        every_burst += ab_writes + c_writes
        ab_iops = [cell.iops for r in ab_rounds for cell in r.cells]
        c_iops = [cell.iops for r in c_rounds for cell in r.cells]
        after_idle = ab_iops[1:] or ab_iops          # bursts that follow an idle period
        baseline = c_iops[1:] or c_iops              # continuous writing (the first follows the last idle)
        ab_mean, c_mean = sum(after_idle) / len(after_idle), sum(baseline) / len(baseline)
        segments[_label(idle)] = WaitState(
            idle_s=idle, bursts=len(ab_iops),
            ab_iops_mean=ab_mean, c_iops_mean=c_mean, recovery_ratio=ab_mean / c_mean if c_mean else None,
            ab_iops=ab_iops, c_iops=c_iops,
            burst_seconds=[cell.runtime_ms / 1000 for r in ab_rounds + c_rounds for cell in r.cells],
            idle_measured_ms=_idle_measured(ab_rounds, c_rounds),
            ab_latency=merged_latency(ab_writes[1:] or ab_writes),   # the bursts of the IOPS means
            c_latency=merged_latency(c_writes[1:] or c_writes),
            ab_burst_latency=[merged_latency([w]) for w in ab_writes],
            c_burst_latency=[merged_latency([w]) for w in c_writes],
        )
    return HirSummary(purge=purge, steady=pc.record(),
                      preconditioning_iops=[r.cells[-1].iops for r in pc.rounds],   # the tracked last minute
                      preconditioning_cells_per_round=len(pc_cells),
                      burst_s=burst_s(ctx), repetitions=reps, wait_states=segments,
                      bursts_latency=merged_latency(every_burst), preconditioning=preconditioning,
                      threads=load.threads, iodepth=load.iodepth)


def preconditioning_record(ctx: TestContext, rounds_run: int, reached: bool) -> HirPreconditioning:
    """What ran before the wait states; a WIPC or a fixed length is recorded as a deviation."""
    s = ctx.settings
    rec = HirPreconditioning(wipc_multiple=s.wipc_multiple, wipc_block_size=s.wipc_block_size,
                             round_s=s.precondition_time, fixed_length=s.fixed_preconditioning,
                             max_rounds=1 if s.fixed_preconditioning else s.steady.max_rounds,
                             rounds_run=rounds_run, steady_reached=reached)
    if rec.wipc_multiple:
        ctx.store.record_deviation(ctx.run_id, ctx.test, Deviation(
            "hir-wipc", f"WIPC of {rec.wipc_multiple:g}× the capacity in SEQ {rec.wipc_block_size // 1024} KiB "
            "writes before the preconditioning (seed 004's method)", WIPC_SOURCE))
    if rec.fixed_length:
        ctx.store.record_deviation(ctx.run_id, ctx.test, Deviation(
            "hir-fixed-preconditioning", f"fixed-length preconditioning: one round of {span(rec.round_s)} of "
            "RND 4K writes (fixed_preconditioning = true; the seeds' method), not steady state", FIXED_PC_SOURCE))
    return rec


def _writes(rounds: list[RoundRecord]) -> list[DirStats]:
    """The write side of every burst (HIR bursts only write), in order."""
    return [cell.write for r in rounds for cell in r.cells]


def _burst_tracking(cells: Sequence[CellResult]) -> dict:
    return {"burst_iops": [c.iops for c in cells]}


def _idle_measured(ab_rounds: list[RoundRecord], c_rounds: list[RoundRecord]) -> list[float]:
    """Every idle period measured: between bursts inside a stored round, and at the start of each later
    round (a new fio process) including the idle before the baseline. The device's own idle (block layer)
    where measured, else the engine's gate-side figure."""
    out: list[float] = []
    for k, r in enumerate(ab_rounds + c_rounds[:1]):
        before = r.device_idle_before.ms if r.device_idle_before else None
        if k and (before if before is not None else r.gap_before_ms) is not None:
            out.append(before if before is not None else r.gap_before_ms)
        if r in ab_rounds:
            if r.device_idle_inside and all(d.ms is not None for d in r.device_idle_inside):
                out += [d.ms for d in r.device_idle_inside]
            else:
                out += r.gaps_inside_ms
    return out
