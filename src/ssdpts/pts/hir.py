"""Host Idle Recovery (HIR): does the drive recover (garbage-collect) when the host lets it idle?

Purge; RND 4 KiB writes until steady state (preconditioning); then for each wait state (idle 5, 10,
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
    pc_cell = ctx.cell(cell_name("rnd", 4096, 0), "randwrite", 4096, 0)
    pc = ctx.run_to_steady_state("pc", [pc_cell], [Tracker(pc_cell.name, "iops")])
    segments = {}
    for idle in idles:
        ab = [ctx.cell(f"ab{i + 1}", "randwrite", 4096, 0, runtime_s=burst, idle_before_s=idle if i else 0.0)
              for i in range(reps)]
        c = [ctx.cell(f"c{i + 1}", "randwrite", 4096, 0, runtime_s=burst) for i in range(reps)]
        ab_rounds = ctx.run_sequence(f"ws={_label(idle)}/AB", ab, tracking=_burst_tracking)
        c_rounds = ctx.run_sequence(f"ws={_label(idle)}/C", c, tracking=_burst_tracking)
        ab_iops = [cell.iops for r in ab_rounds for cell in r.cells]
        c_iops = [cell.iops for r in c_rounds for cell in r.cells]
        segments[_label(idle)] = {
            "idle_s": idle, "bursts": len(ab_iops),
            "ab_iops_mean": sum(ab_iops) / len(ab_iops), "c_iops_mean": sum(c_iops) / len(c_iops),
            "recovery_ratio": (sum(ab_iops) / len(ab_iops)) / (sum(c_iops) / len(c_iops)) if c_iops else None,
            "ab_iops": ab_iops, "c_iops": c_iops,
            "burst_seconds": [cell.runtime_ms / 1000 for r in ab_rounds + c_rounds for cell in r.cells],
            "idle_measured_ms": [g for r in ab_rounds for g in _gaps(ctx, r)],
        }
    return {"purge": purge, "preconditioning": pc.to_dict(),
            "preconditioning_iops": [r.cells[0].iops for r in pc.rounds],
            "burst_s": burst, "repetitions": reps, "wait_states": segments,
            "units": {"iops": "IO/s of each 5 s burst", "idle": "seconds of host idle before a burst"}}


def _burst_tracking(cells) -> dict:
    return {"burst_iops": [c.iops for c in cells]}


def _gaps(ctx: TestContext, record) -> list[float]:
    row = ctx.store.db.execute("SELECT gaps_inside_json FROM rounds WHERE id=?", (record.id,)).fetchone()
    import json

    return json.loads(row[0]) if row else []
