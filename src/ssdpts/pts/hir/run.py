"""Host Idle Recovery (HIR): does the drive recover (garbage-collect) when the host lets it idle?

Purge; RND 4 KiB writes until steady state (preconditioning: rounds of `precondition_time` (30) x
`cell_runtime` (1-minute) cells, steady state judged on the last minute of each round, at most 25 rounds,
as cloudharmony and ADATA run it; a round of one cell could declare "steady" on the fresh-out-of-box
plateau); then for each wait state (idle 5, 10,
15, 25, 50 s): R repetitions of [5 s of writes, then idle] (segment AB), followed by R repetitions of
5 s of continuous writes (segment C, the baseline; no idle, unlike cloudharmony's bug). Every burst
is its own fio job, started on time by the engine's gates (no process start per burst); the idle is
real idle (no I/O) and both are measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ...engines.results import CellResult
from ...store import RoundRecord
from ...settings import DURATION, DURATIONS, POS_INT, TestSettings, key
from ...workload import Workload
from ..common import TestContext, cell_name
from ..plan import TestPlan, once, purge_phase, steady_loop
from ..results import TrackerKey
from .summary import HirSummary, WaitState


@dataclass(frozen=True)
class HirSettings(TestSettings):
    precondition_time: float = key(DURATION, "30m", "one preconditioning round of RND 4K writes (cut into cells)")
    burst: float = key(DURATION, "5s", "one write burst")
    wait_states: tuple[float, ...] = key(DURATIONS, ["5s", "10s", "15s", "25s", "50s"], "idle times between bursts")
    repetitions: int = key(POS_INT, 360, "bursts per wait state and per segment")


def _label(seconds: float) -> str:
    return f"{seconds:g}s"


def preconditioning_cells(ctx: TestContext) -> list[Workload]:
    """One preconditioning round: `precondition_time` of RND 4K writes cut into `cell_runtime` cells."""
    n = max(1, round(ctx.settings.precondition_time / ctx.settings.cell_runtime))
    return [ctx.cell(f"{cell_name('rnd', 4096, 0)}_m{i + 1:02d}", "randwrite", 4096, 0) for i in range(n)]


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
    ab = [ctx.cell(f"ab{i + 1}", "randwrite", 4096, 0, runtime_s=burst, idle_before_s=idle if i else 0.0,
                   log_interval_ms=100) for i in range(reps)]
    # SNIA pairs A (write) + B (idle): the idle follows every burst, so the baseline's first
    # burst also comes after one; the first burst of AB follows the previous segment directly
    c = [ctx.cell(f"c{i + 1}", "randwrite", 4096, 0, runtime_s=burst, idle_before_s=idle if i == 0 else 0.0,
                  log_interval_ms=100) for i in range(reps)]
    return [(f"ws={_label(idle)}/AB", ab), (f"ws={_label(idle)}/C", c)]


def plan(ctx: TestContext) -> TestPlan:
    pc = preconditioning_cells(ctx)
    phases = [purge_phase(ctx),
              steady_loop(ctx, pc, f"preconditioning (phase pc): rounds of {len(pc)} × RND 4K write cells, "
                                   f"tracking {pc_tracker(pc).label}")]
    reps, burst = repetitions(ctx), burst_s(ctx)
    for idle in wait_states(ctx):
        phases.append(once("sequence", f"wait state {_label(idle)}: {reps} × [{burst:g} s RND 4K writes after "
                                       f"{idle:g} s idle] (AB), then {reps} × {burst:g} s continuous writes (C)",
                           [c for _, cells in wait_state_segments(ctx, idle) for c in cells]))
    return TestPlan("hir", phases)


def run(ctx: TestContext) -> HirSummary:
    reps = repetitions(ctx)
    purge = ctx.purge()
    pc_cells = preconditioning_cells(ctx)
    pc = ctx.run_to_steady_state("pc", pc_cells, [pc_tracker(pc_cells)])
    segments: dict[str, WaitState] = {}
    for idle in wait_states(ctx):
        # AB and C in one chained sequence: the idle after the last AB burst is scheduled like the others
        (ab_phase, ab), (c_phase, c) = wait_state_segments(ctx, idle)
        rounds = ctx.run_segments([(ab_phase, ab), (c_phase, c)], tracking=_burst_tracking)
        ab_rounds, c_rounds = rounds[ab_phase], rounds[c_phase]
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
        )
    return HirSummary(purge=purge, steady=pc.record(),
                      preconditioning_iops=[r.cells[-1].iops for r in pc.rounds],   # the tracked last minute
                      preconditioning_cells_per_round=len(pc_cells),
                      burst_s=burst_s(ctx), repetitions=reps, wait_states=segments)


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
