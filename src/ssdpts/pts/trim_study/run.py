"""TRIM study (reviewers' study, seeds 001 and 002): what a TRIM costs and what it gives back.

Fill the target with SEQ writes, rounds of RND writes and reads (the level before), then TRIM, timed: the raw
device whole (blkdiscard), or for a file target the file truncated to nothing and its file system's free space
trimmed (fstrim -v, as seed 002 ran it), the file then re-created; then rounds of the same cells (the effect
and the recovery).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ...errors import SsdptsError
from ...records import from_data, to_data
from ...targets.filesystem import TrimRecord, refuse_without_discard, trim_device, trim_filesystem
from ...targets.resolve import prepare_file
from ...units import bs_label
from ...workload import Workload
from ..fill import fill as seq_fill
from ..plan import Phase, PlannedCell, TestPlan, once
from .summary import AFTER, BEFORE, TrimRound, TrimStudySummary
from .settings import TrimStudySettings

if TYPE_CHECKING:     # annotations only: reading a stored run's settings imports no round loop
    from ..context import TestContext

TRIM_STEP = "trim"


def cells(ctx: TestContext) -> list[Workload]:
    bs = ctx.settings.block_size
    return [ctx.cells.cell(f"rnd_{bs_label(bs)}_write", "randwrite", bs, 0), ctx.cells.cell(f"rnd_{bs_label(bs)}_read", "randread", bs, 100)]


def fill(ctx: TestContext) -> Workload:
    return seq_fill(ctx, ctx.settings.fill_block_size, 1.0, ctx.target.size_bytes)


def _method(ctx: TestContext) -> str:
    return "fstrim" if ctx.target.kind == "file" else "blkdiscard"


def plan(ctx: TestContext) -> TestPlan:
    s, c = ctx.settings, cells(ctx)
    how = ("truncate the file, fstrim -v its file system, re-create it" if _method(ctx) == "fstrim"
           else "blkdiscard the whole device")
    return TestPlan("trim-study", [
        once("precondition", "SEQ fill of the whole target", [fill(ctx)]),
        _rounds_phase(f"rounds of RND {bs_label(s.block_size)} write + read before the TRIM", c, s.rounds_before),
        Phase("trim", f"TRIM, timed: {how}; its own duration (seconds to minutes) is not included"),
        _rounds_phase("rounds of the same cells after the TRIM", c, s.rounds_after)])


def _rounds_phase(what: str, c: list[Workload], n: int) -> Phase:
    secs = n * sum(w.runtime_s or 0 for w in c)
    return Phase("rounds", f"{n} {what}", [PlannedCell.of(w) for w in c], n, n, secs, secs, None)


def _device_of(ctx: TestContext) -> str:
    t = ctx.target
    if t.host is not None or t.kind not in ("block", "file"):
        raise SsdptsError(f"trim-study needs a local block device or a file on one; {t.spec} is neither")
    if t.kind == "block":
        return t.path
    device = t.info.get("backing_device")
    if not device or not t.info.get("mount_point"):
        raise SsdptsError(f"trim-study: {t.path} is {t.info.get('placement', 'a file')}; fstrim needs a file system "
                          "on a block device")
    return device


def _trim(ctx: TestContext) -> TrimRecord:
    done = ctx.store.step(ctx.run_id, ctx.test, TRIM_STEP)
    if done is not None:
        return from_data(TrimRecord, done)
    t = ctx.target
    ctx.progress.message(f"{ctx.test}: TRIM of {t.path} ({_method(ctx)})")
    if t.kind == "file":
        os.truncate(t.path, 0)                 # the file's blocks become free space, which fstrim trims
        rec = trim_filesystem(t.info["mount_point"])
        prepare_file(t)
    else:
        rec = trim_device(t.path, t.size_bytes)
    ctx.store.record_step(ctx.run_id, ctx.test, TRIM_STEP, "trim", to_data(rec))
    return rec


def _rounds(ctx: TestContext, phase: str, n: int, t: float) -> tuple[list[TrimRound], float]:
    """The phase's rounds, each starting at `t` plus the run time of the cells before it (fio's clock); and the
    time its last round ended."""
    c = cells(ctx)
    out = []
    for r in ctx.rounds.run_sequence(phase, c * n, chunk=len(c)):
        w, rd = r.cell(c[0].name), r.cell(c[1].name)
        out.append(TrimRound(phase, r.round, t, w.iops, rd.iops, w.lat_mean_ns / 1000, rd.lat_mean_ns / 1000))
        t += (w.runtime_ms + rd.runtime_ms) / 1000
    return out, t


def run(ctx: TestContext) -> TrimStudySummary:
    s = ctx.settings
    refuse_without_discard(_device_of(ctx))
    ctx.rounds.run_sequence("fill", [fill(ctx)])
    before, trim_start = _rounds(ctx, BEFORE, s.rounds_before, 0.0)
    rec = _trim(ctx)
    after, _ = _rounds(ctx, AFTER, s.rounds_after, trim_start + rec.seconds)
    notes = []
    if ctx.target.kind == "file":
        notes.append("after the TRIM the file is re-created (fallocate): reads of blocks not yet rewritten are "
                     "answered by the file system (unwritten extents), not by the drive")
    else:
        notes.append("after blkdiscard, reads of blocks not yet rewritten hit unmapped LBAs (the drive returns "
                     "them without reading flash)")
    return TrimStudySummary(target=ctx.target.path, method=_method(ctx), trim=rec, trim_start_s=trim_start,
                            block_size=s.block_size, cell_runtime_s=s.cell_runtime,
                            filled_bytes=fill(ctx).io_size or 0, rounds=before + after, notes=notes)
