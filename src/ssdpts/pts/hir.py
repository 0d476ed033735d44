"""Host Idle Recovery (HIR): does the drive recover (garbage-collect) when the host lets it idle?

Purge; RND 4 KiB writes until steady state (preconditioning: rounds of 30 x 1-minute cells, steady
state judged on the last minute of each round, at most 25 rounds, as cloudharmony and ADATA run it;
a round of one cell could declare "steady" on the fresh-out-of-box plateau); then for each wait state (idle 5, 10,
15, 25, 50 s): R repetitions of [5 s of writes, then idle] (segment AB), followed by R repetitions of
5 s of continuous writes (segment C, the baseline; no idle, unlike cloudharmony's bug). Every burst
is its own fio job, started on time by the engine's gates (no process start per burst); the idle is
real idle (no I/O) and both are measured.
"""

from __future__ import annotations

from ..units import parse_duration
from .common import TestContext, Tracker, cell_name

NAME = "hir"
TITLE = "Host Idle Recovery (HIR)"


def _label(seconds: float) -> str:
    return f"{seconds:g}s"


def run(ctx: TestContext) -> dict:
    burst = parse_duration(ctx.settings.get("burst", "5s"))
    idles = [parse_duration(x) for x in ctx.settings.get("wait_states", ["5s", "10s", "15s", "25s", "50s"])]
    reps = int(ctx.settings.get("repetitions", 360))
    purge = ctx.purge()
    minutes = max(1, round(parse_duration(ctx.settings.get("precondition_time", "30m")) / ctx.cell_runtime()))
    pc_cells = [ctx.cell(f"{cell_name('rnd', 4096, 0)}_m{i + 1:02d}", "randwrite", 4096, 0) for i in range(minutes)]
    pc = ctx.run_to_steady_state("pc", pc_cells, [Tracker(pc_cells[-1].name, "iops")])
    segments = {}
    for idle in idles:
        # fio's per-100 ms IOPS logs are kept with each round: they show the idle really has no I/O
        ab = [ctx.cell(f"ab{i + 1}", "randwrite", 4096, 0, runtime_s=burst, idle_before_s=idle if i else 0.0,
                       log_interval_ms=100) for i in range(reps)]
        # SNIA pairs A (write) + B (idle): the idle follows every burst, so the baseline's first
        # burst also comes after one; the first burst of AB follows the previous segment directly
        c = [ctx.cell(f"c{i + 1}", "randwrite", 4096, 0, runtime_s=burst, idle_before_s=idle if i == 0 else 0.0,
                      log_interval_ms=100) for i in range(reps)]
        # AB and C in one chained sequence: the idle after the last AB burst is scheduled like the others
        ab_phase, c_phase = f"ws={_label(idle)}/AB", f"ws={_label(idle)}/C"
        rounds = ctx.run_segments([(ab_phase, ab), (c_phase, c)], tracking=_burst_tracking)
        ab_rounds, c_rounds = rounds[ab_phase], rounds[c_phase]
        ab_iops = [cell.iops for r in ab_rounds for cell in r.cells]
        c_iops = [cell.iops for r in c_rounds for cell in r.cells]
        after_idle = ab_iops[1:] or ab_iops          # bursts that follow an idle period
        baseline = c_iops[1:] or c_iops              # continuous writing (the first follows the last idle)
        ab_mean, c_mean = sum(after_idle) / len(after_idle), sum(baseline) / len(baseline)
        segments[_label(idle)] = {
            "idle_s": idle, "bursts": len(ab_iops),
            "ab_iops_mean": ab_mean, "c_iops_mean": c_mean, "recovery_ratio": ab_mean / c_mean if c_mean else None,
            "ab_iops": ab_iops, "c_iops": c_iops,
            "burst_seconds": [cell.runtime_ms / 1000 for r in ab_rounds + c_rounds for cell in r.cells],
            "idle_measured_ms": _idle_measured(ctx, ab_rounds, c_rounds),
        }
    return {"purge": purge, "preconditioning": pc.to_dict(),
            "preconditioning_iops": [r.cells[-1].iops for r in pc.rounds],   # the tracked last minute
            "preconditioning_cells_per_round": minutes,
            "burst_s": burst, "repetitions": reps, "wait_states": segments,
            "units": {"iops": "IO/s of each 5 s burst", "idle": "seconds of host idle before a burst"}}


def _burst_tracking(cells) -> dict:
    return {"burst_iops": [c.iops for c in cells]}


def _idle_measured(ctx: TestContext, ab_rounds, c_rounds) -> list[float]:
    """Every idle period the engine measured: between bursts inside a stored round, and at the start of
    each later round (a new fio process) including the idle before the baseline."""
    import json

    out: list[float] = []
    for k, r in enumerate(ab_rounds + c_rounds[:1]):
        if k and r.gap_before_ms is not None:
            out.append(r.gap_before_ms)
        if r in ab_rounds:
            row = ctx.store.db.execute("SELECT gaps_inside_json FROM rounds WHERE id=?", (r.id,)).fetchone()
            out += json.loads(row[0]) if row else []
    return out

from .hir_report import compare_section, report_section  # noqa: E402,F401
