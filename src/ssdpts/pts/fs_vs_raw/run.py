"""File system vs raw device (reviewers' study, seeds 001 and 002): the same workloads on the raw device and on a
file in a file system made on it, side by side.

On a device the user consented to destroy: a SEQ fill, then each workload once on the raw device (over as many
bytes as the file will hold); then mkfs, mount in a private directory, a test file of `file_size_percent` of the
capacity, the same fill and workloads on the file; unmounted and removed whatever happens.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ...errors import SsdptsError
from ...targets.filesystem import make_test_file, mkfs_available, mkfs_command, mounted_filesystem
from ...units import bs_label
from ...workload import Workload
from ..cells import cell_name
from ..windows import window_summary
from ..fill import fill as seq_fill
from ..plan import TestPlan, once
from .summary import FsVsRawSummary, WorkloadPair
from .settings import FsVsRawSettings

if TYPE_CHECKING:     # annotations only: reading a stored run's settings imports no round loop
    from ..context import TestContext


def workloads(ctx: TestContext, span: float) -> tuple[list[Workload], list[str]]:
    """Every random and sequential workload × mix, each over `span` (a fraction of its target's size), and
    notes on block sizes below the target's logical block."""
    s = ctx.settings
    rnd, notes = ctx.cells.skip_sub_sector(s.random_block_sizes)
    seq, notes2 = ctx.cells.skip_sub_sector(s.sequential_block_sizes)
    out = [ctx.cells.cell(cell_name("rnd", bs, mix), "randrw", bs, mix, range_size=span) for bs in rnd for mix in s.read_percents]
    out += [ctx.cells.cell(cell_name("seq", bs, mix), "rw", bs, mix, range_size=span) for bs in seq for mix in s.read_percents]
    return out, notes + notes2


def label(w: Workload) -> str:
    kind = "RND" if w.random else "SEQ"
    mix = "read" if w.read_pct == 100 else "write" if w.read_pct == 0 else f"{w.read_pct}/{100 - w.read_pct} R/W"
    return f"{kind} {bs_label(w.bs)} {mix}"


def fill(ctx: TestContext, span: float, size_bytes: int) -> Workload:
    return seq_fill(ctx, ctx.settings.fill_block_size, span, span * size_bytes)


def file_bytes(ctx: TestContext) -> int:
    lbs = 4096
    return int(ctx.target.size_bytes * ctx.settings.file_size_percent / 100) // lbs * lbs


def _span(ctx: TestContext) -> float:
    return file_bytes(ctx) / ctx.target.size_bytes


def plan(ctx: TestContext) -> TestPlan:
    s = ctx.settings
    span, (cells, _) = _span(ctx), workloads(ctx, _span(ctx))
    phases = []
    for side in ("raw", "file"):
        where = "the raw device" if side == "raw" else f"a file on {s.filesystem} (mkfs, mount, create first)"
        if s.fill_first:
            phases.append(once("precondition", f"{side}: SEQ fill of {span:.0%} of the capacity on {where}",
                               [fill(ctx, span, ctx.target.size_bytes)]))     # the file: as many bytes
        phases.append(once("rounds", f"{side}: each workload once on {where}", cells))
    return TestPlan("fs-vs-raw", phases)


def measured(ctx: TestContext, phase: str, cells: list[Workload]) -> dict:
    rounds = ctx.rounds.run_sequence(phase, cells)
    return window_summary(rounds, [r.round for r in rounds])


def run(ctx: TestContext) -> FsVsRawSummary:
    s = ctx.settings
    if not mkfs_available(s.filesystem):
        raise SsdptsError(f"fs-vs-raw: {mkfs_command(s.filesystem, '')[0]} is not installed; install it or set "
                          "filesystem = \"ext4\"")
    size, span = file_bytes(ctx), _span(ctx)
    device = ctx.target.path
    if s.fill_first:
        ctx.rounds.run_sequence("raw/fill", [fill(ctx, span, ctx.target.size_bytes)])
    raw_cells, notes = workloads(ctx, span)
    raw = measured(ctx, "raw", raw_cells)
    mkfs = " ".join(mkfs_command(s.filesystem, device))
    with mounted_filesystem(device, s.filesystem) as point:
        file_target = make_test_file(point, size)
        on_file = dataclasses.replace(ctx, target=file_target)
        if s.fill_first:
            on_file.rounds.run_sequence("file/fill", [fill(on_file, 1.0, size)])
        cells, file_notes = workloads(on_file, 1.0)
        got = measured(on_file, "file", cells)
        placement = file_target.info.get("placement", "")
    pairs = []
    for w in cells:
        r, f = raw.get(w.name), got.get(w.name)
        ratio = f.iops / r.iops if r and f and r.iops else None
        pairs.append(WorkloadPair(w.name, label(w), w.bs, w.read_pct, r.iops if r else None, f.iops if f else None,
                                  r.mib_s if r else None, f.mib_s if f else None,
                                  r.lat_mean_us if r else None, f.lat_mean_us if f else None, ratio))
    notes = [f"raw: {n}" for n in notes] + [f"file: {n}" for n in file_notes]
    return FsVsRawSummary(device=device, filesystem=s.filesystem, placement=placement, mkfs_command=mkfs,
                          capacity_bytes=ctx.target.size_bytes, file_bytes=size, fill_first=s.fill_first,
                          cell_runtime_s=s.cell_runtime, workloads=pairs, notes=notes)
