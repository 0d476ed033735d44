"""Latency vs IOPS, the reviewers' way: a TC x QD sweep over block sizes x R/W mixes, in fixed rounds.

What seeds 000 and 003 run (docs/lat-iops.md gives each default's source): every point of every block size
x mix once per round, `rounds` rounds (25) of `warmup` (5 s, fio ramp_time, not measured) + `cell_runtime`
(30 s); each point is the mean of the last `average_rounds` (4) rounds: IOPS, mean, p99, p99.9, p99.99 and
max latency per direction. Unlike DIRTH (pts/demand.py): no preconditioning to steady state, no pre-writes,
no operating points; optionally a purge and WIPC first (`wipc_first`, as the seeds), then an optional
fixed-length `precondition_time` of random writes.
The grid, point names and window averages are DIRTH's (demand.grid / point_cells / window_points).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...units import bs_label
from ...workload import Workload
from .. import demand
from ..cells import cell_name
from ..windows import window_summary
from ..plan import TestPlan, fixed_rounds, once, purge_phase, wipc_phase
from .summary import LatIopsFamily, LatIopsSummary, Preconditioning
from .settings import LatIopsSettings

if TYPE_CHECKING:     # annotations only: reading a stored run's settings imports no round loop
    from ..context import TestContext


@dataclass
class Sweep:
    """The cells run() submits and plan() shows."""

    families: list[tuple[int, int, str]]   # (block size, read %, point-name prefix)
    tcs: list[int]
    qds: list[int]
    preconditioning: list[Workload]        # in order: WIPC (wipc_first), the fixed-length RND writes
    round: list[Workload]                  # one sweep round: every family's points


def sweep_cells(ctx: TestContext) -> Sweep:
    st = ctx.settings
    tcs, qds = demand.grid(st.thread_counts, st.queue_depths)
    families, cells = [], []
    for bs in dict.fromkeys(st.block_sizes):
        for mix in dict.fromkeys(st.mixes):
            prefix = cell_name("rnd", bs, mix)

            def make_cell(name: str, threads: int, iodepth: int, bs: int = bs, mix: int = mix) -> Workload:
                return ctx.cells.cell(name, "randrw", bs, mix, threads=threads, iodepth=iodepth, ramp_s=st.warmup)

            families.append((bs, mix, prefix))
            cells += demand.point_cells(prefix, tcs, qds, make_cell)
    pc = [ctx.cells.wipc()] if st.wipc_first else []
    if st.precondition_time:
        small = min(st.block_sizes)
        pc.append(ctx.cells.cell(f"pc_rnd_{bs_label(small)}_write", "randrw", small, 0, threads=tcs[0], iodepth=qds[0],
                           runtime_s=st.precondition_time))
    return Sweep(families, tcs, qds, pc, cells)


def describe(w: Workload) -> str:
    """A preconditioning cell in words."""
    if w.io_size:
        return (f"WIPC: SEQ {bs_label(w.bs)} writes, {w.io_size * w.threads / 2**30:,.1f} GiB, "
                f"TC{w.threads}/QD{w.iodepth}")
    return f"RND {bs_label(w.bs)} writes for {w.runtime_s:g} s at TC{w.threads}/QD{w.iodepth}"


def run(ctx: TestContext) -> LatIopsSummary:
    st, sw = ctx.settings, sweep_cells(ctx)
    purge = ctx.purger.purge() if st.wipc_first else None
    pre = []
    if sw.preconditioning:
        ran = [c for r in ctx.rounds.run_sequence("pc", sw.preconditioning) for c in r.cells]
        pre = [Preconditioning(what=describe(w), block_size=w.bs, threads=w.threads, iodepth=w.iodepth,
                               seconds=c.runtime_ms / 1000, bytes_written=c.write.bytes)
               for w, c in zip(sw.preconditioning, ran)]
    # one stored round per sweep round: the chunk is a whole round
    rounds = ctx.rounds.run_segments([("", sw.round * st.rounds)], chunk=len(sw.round))[""]
    numbers = [r.round for r in rounds]
    window = numbers[-st.average_rounds:]
    averages = window_summary(rounds, window)
    families = [LatIopsFamily(block_size=bs, read_pct=mix, prefix=prefix,
                              points=demand.window_points(averages, prefix, sw.tcs, sw.qds))
                for bs, mix, prefix in sw.families]
    notes = [] if pre else ["no preconditioning: the sweep ran on the drive as it was (the seeds purge and "
                            "precondition first: set wipc_first = true)"]
    return LatIopsSummary(families=families, thread_counts=sw.tcs, queue_depths=sw.qds, rounds=len(numbers),
                          window_rounds=window, cell_runtime_s=st.cell_runtime, warmup_s=st.warmup,
                          purge=purge, preconditioning=pre, notes=notes, chart_threads=st.chart_threads)


def plan(ctx: TestContext) -> TestPlan:
    st, sw = ctx.settings, sweep_cells(ctx)
    phases = [purge_phase(ctx), wipc_phase(ctx)] if st.wipc_first else []
    phases += [once("precondition", "fixed-length preconditioning (phase pc), no steady-state judgement: "
                    + describe(w), [w]) for w in sw.preconditioning if w.runtime_s]
    phases.append(fixed_rounds(sw.round, f"{st.rounds} sweep rounds (fixed, no steady-state judgement) of "
                               f"{len(sw.round)} points: {len(sw.families)} block size × mix families × "
                               f"{len(sw.tcs)} TC × {len(sw.qds)} QD, each a {st.warmup:g} s warm-up (not measured) + "
                               f"{st.cell_runtime:g} s; points = mean of the last {st.average_rounds} rounds",
                               st.rounds))
    return TestPlan(ctx.test, phases)
