"""Purge-method study: for each method, the drive is first used (SEQ writes of `dirty_multiple` x its
capacity, then RND 4K writes for `dirty_time`), the method applied, then `burst_cells` RND 4K write cells
of `burst_time` measure how fresh it is. The reference is the first SNIA purge in the list (`purge`:
the run's --purge method; the simulated drive's own purge); every method's mean burst IOPS is given
as a share of it.

Methods: `purge` (sanitize / format / secure erase, as --purge chooses; labelled not-SNIA where it is
not), `trim` (every LBA discarded: blkdiscard, or the simulated drive's unmap), `zero-fill` (SEQ
writes of zeros over the capacity, as wipe utilities do: seed 001 used Paragon's zero-fill), `none`
(the used state itself, the floor).
"""

from __future__ import annotations


from ...errors import SsdptsError
from ...targets.purge import PurgeRecord, trim_all
from ...units import format_duration
from ...workload import Workload
from ..context import TestContext, stored_once
from ..plan import Phase, TestPlan, once, purge_phase
from .summary import MethodResult, PurgeStudySummary
from .settings import PurgeStudySettings


def _dirty(ctx: TestContext) -> list[Workload]:
    s = ctx.settings
    total = int(s.dirty_multiple * ctx.target.size_bytes) // 2**20 * 2**20
    return [ctx.cells.cell("dirty_seq_1m", "write", 2**20, 0, threads=1, range_start=0.0, range_size=1.0,
                     io_size=total, runtime_s=None),
            ctx.cells.cell("dirty_rnd_4k", "randwrite", 4096, 0, runtime_s=s.dirty_time)]


def _zero_fill(ctx: TestContext) -> Workload:
    return ctx.cells.cell("zero_fill_1m", "write", 2**20, 0, threads=1, range_start=0.0, range_size=1.0,
                    io_size=ctx.target.size_bytes // 2**20 * 2**20, runtime_s=None, data_pattern="zero")


def _method_cells(ctx: TestContext, method: str) -> list[Workload]:
    return [_zero_fill(ctx)] if method == "zero-fill" else []


def _cells(rounds) -> list:
    return [c for r in rounds for c in r.cells]


def _bursts(ctx: TestContext) -> list[Workload]:
    return [ctx.cells.cell(f"burst_{i + 1}", "randwrite", 4096, 0, runtime_s=ctx.settings.burst_time)
            for i in range(ctx.settings.burst_cells)]


def plan(ctx: TestContext) -> TestPlan:
    s = ctx.settings
    phases: list[Phase] = []
    for m in s.methods:
        phases.append(once("sequence", f"{m}: the used state: SEQ 1 MiB writes of {s.dirty_multiple:g} x the "
                                       f"capacity, RND 4K writes for {format_duration(s.dirty_time)}", _dirty(ctx)))
        if m == "purge":
            phases.append(purge_phase(ctx))
        elif m == "trim":
            phases.append(Phase("purge", "trim: TRIM of every LBA (not a SNIA purge)"))
        elif m == "zero-fill":
            phases.append(once("sequence", "zero-fill: SEQ 1 MiB writes of zeros over the capacity (not a SNIA "
                                           "purge)", [_zero_fill(ctx)]))
        phases.append(once("sequence", f"{m}: {s.burst_cells} x {format_duration(s.burst_time)} RND 4K write "
                                       f"bursts (TC{s.threads}/QD{s.iodepth})", _bursts(ctx)))
    return TestPlan("purge-study", phases)


def _apply(ctx: TestContext, method: str, scope: str) -> PurgeRecord:
    """Apply a method that is not a workload to the used drive; its record says what ran."""
    if method == "purge":
        return ctx.purger.purge(scope)
    return trim_all(ctx.target)


def _chained(method: str, cells) -> PurgeRecord:
    """The record of a method that ran as cells of the chained sequence (zero-fill) or as nothing (none)."""
    if method == "zero-fill":
        fill = next(c for c in cells if c.name == "zero_fill_1m")
        return PurgeRecord("zero-fill", False, "fio SEQ 1 MiB writes, data pattern zero", fill.runtime_ms / 1000,
                           "every LBA written with zeros (wipe utilities): not a SNIA purge")
    return PurgeRecord("none", False, "", 0.0, "no purge: the used state")


def _label(rec: PurgeRecord) -> str:
    return f"{rec.method} (SNIA purge)" if rec.snia_purge else f"{rec.method} — not a SNIA purge"


def _measure(ctx: TestContext, method: str) -> MethodResult:
    """Dirty, apply, burst (stored whole: an interrupted method starts again from its dirtying)."""
    return stored_once(ctx, f"method={method}", MethodResult, lambda scope: _method(ctx, method, scope))


def _method(ctx: TestContext, method: str, scope: str) -> MethodResult:
    if method in ("zero-fill", "none"):
        # all workloads: one chained sequence, no idle the method did not ask for
        cells = _cells(ctx.rounds.run_sequence(f"{scope}/sequence", _dirty(ctx) + _method_cells(ctx, method) + _bursts(ctx)))
        rec = _chained(method, cells)
    else:
        ctx.rounds.run_sequence(f"{scope}/dirty", _dirty(ctx))
        try:
            rec = _apply(ctx, method, scope)
        except SsdptsError as e:
            return MethodResult(method, method, False, f"{method} — not supported here", str(e), False, None)
        cells = _cells(ctx.rounds.run_sequence(f"{scope}/burst", _bursts(ctx)))
    iops = [c.write.iops for c in cells if c.name.startswith("burst_")]
    return MethodResult(method, rec.method, rec.snia_purge, _label(rec), rec.note, True,
                        rec.seconds if rec.method != "none" else None, iops, sum(iops) / len(iops) if iops else None)


def run(ctx: TestContext) -> PurgeStudySummary:
    s = ctx.settings
    results = [_measure(ctx, m) for m in s.methods]
    ref = next((r for r in results if r.snia_purge and r.mean_iops), None)
    notes = [] if ref is not None else ["no SNIA purge was measured: there is no fresh-out-of-box reference, so no "
                                        "method is given as a share of it"]
    for r in results:
        if ref is not None and r.mean_iops is not None:
            r.percent_of_reference = r.mean_iops / ref.mean_iops * 100
    return PurgeStudySummary(
        reference=ref.method if ref else None, reference_iops=ref.mean_iops if ref else None,
        dirty_bytes=int(s.dirty_multiple * ctx.target.size_bytes) // 2**20 * 2**20, dirty_rnd_s=s.dirty_time,
        burst_cells=s.burst_cells, burst_s=s.burst_time, threads=s.threads, iodepth=s.iodepth,
        methods=results, notes=notes)
