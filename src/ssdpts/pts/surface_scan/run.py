"""Surface scan: one sequential pass over the active range, cut into regions (one fio job each, chained).

`read` mode reads every block and writes nothing (no --destroy-data needed): per region MiB/s and the
slowest I/O, I/O errors counted instead of stopping (fio continue_on_error=all, its total_err).
`write-verify` writes every block with a fio `verify` checksum and reads it back (data the scan wrote
itself, so a mismatch is the drive's): needs --destroy-data. Regions slower than `slow_threshold` x the
median are listed as slow (seed 001 used vendor tools' Fast/Full Diagnostic Scan for the same question).
"""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING

from ...targets.sim import simulated
from ...units import bs_label
from ...workload import Workload
from ..plan import TestPlan, once
from .summary import ScanRegion, SurfaceScanSummary
from .settings import SurfaceScanSettings

if TYPE_CHECKING:     # annotations only: reading a stored run's settings imports no round loop
    from ..context import TestContext

PHASE = "scan"


def regions(ctx: TestContext) -> list[tuple[int, int]]:
    """(offset, bytes) of every region of the active range, block-size aligned; the last takes the rest."""
    s, bs = ctx.settings, ctx.settings.block_size
    span = int(ctx.active_range() * ctx.target.size_bytes) // bs * bs
    size = s.region_size if s.region_size else span // s.regions
    size = max(bs, size // bs * bs)
    starts = list(range(0, span - bs + 1, size))
    return [(a, (starts[i + 1] if i + 1 < len(starts) else span) - a) for i, a in enumerate(starts)]


def cells(ctx: TestContext) -> list[Workload]:
    cap, s = ctx.target.size_bytes, ctx.settings
    write = s.mode == "write-verify"
    return [ctx.cells.cell(f"scan_{i + 1:04d}", "write" if write else "read", s.block_size, 0 if write else 100,
                     threads=1, range_start=start / cap, range_size=size / cap, io_size=size, runtime_s=None,
                     verify=s.verify if write else "", continue_on_error=True)
            for i, (start, size) in enumerate(regions(ctx))]


def plan(ctx: TestContext) -> TestPlan:
    s = ctx.settings
    scan = cells(ctx)
    how = (f"SEQ {bs_label(s.block_size)} writes with fio verify={s.verify}, each region read back and checked"
           if s.mode == "write-verify" else f"SEQ {bs_label(s.block_size)} reads, nothing written")
    return TestPlan("surface-scan", [once("sequence", f"{len(scan)} regions of the active range, one after another: "
                                                      f"{how}; I/O errors counted, not fatal", scan)])


def run(ctx: TestContext) -> SurfaceScanSummary:
    s = ctx.settings
    write = s.mode == "write-verify"
    bounds = regions(ctx)
    rounds = ctx.rounds.run_sequence(PHASE, cells(ctx))
    results = [c for r in rounds for c in r.cells]
    notes: list[str] = []
    verified = write and not simulated(ctx.target)
    if write and not verified:
        notes.append("data verification not available: the simulated drive stores no data and does not run fio's "
                     "read-back (write timing only)")
    out = []
    for i, ((start, size), c) in enumerate(zip(bounds, results), start=1):
        # fio's bandwidth per direction (bytes over that direction's own time): the write pass and the read-back
        main = c.write if write else c.read
        out.append(ScanRegion(i, start, size, main.bw_bytes / 2**20, c.read.bw_bytes / 2**20 if verified else None,
                              max(c.read.lat_max_ns, c.write.lat_max_ns) / 1e6,
                              c.errors, False))
    median = statistics.median(r.mib_s for r in out) if out else None
    for r in out:
        r.slow = median is not None and r.mib_s < s.slow_threshold * median
    return SurfaceScanSummary(
        mode=s.mode, verify=s.verify if write else None, data_verified=verified, block_size=s.block_size,
        iodepth=s.iodepth, capacity_bytes=ctx.target.size_bytes, scanned_bytes=sum(size for _, size in bounds),
        elapsed_s=sum(c.runtime_ms for c in results) / 1000, median_mib_s=median, slow_threshold=s.slow_threshold,
        errors=sum(r.errors for r in out), regions=out, notes=notes)
