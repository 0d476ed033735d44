"""Cell building: a test's workloads from its settings and the target (load, range, alignment, seeds)."""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from ..results import TrackerKey
from ..runoptions import SeedChoice
from ..units import bs_label
from ..workload import Workload

if TYPE_CHECKING:
    from .context import TestContext


@dataclass(repr=False)
class CellBuilder:
    """`ctx.cells`: the cells of a test, as its settings and the target shape them."""
    ctx: TestContext

    def cell(self, name: str, rw: str, bs: int, read_pct: int | None = None, **kw) -> Workload:
        """A test cell with the profile's load, range, data pattern, sync/direct mode and cell runtime."""
        s = self.ctx.settings
        base = dict(threads=s.threads, iodepth=s.iodepth, range_size=self.ctx.active_range(), runtime_s=s.cell_runtime,
                    data_pattern=s.data_pattern, sync=s.sync, direct=s.direct)
        base.update(kw)
        return Workload(name=name, rw=rw, bs=bs, read_pct=read_pct, **base)

    def wipc(self, block_size: int | None = None, multiple: float | None = None) -> Workload:
        """SNIA workload-independent preconditioning: SEQ writes of `multiple` x the user capacity, written
        over the active range ("Write 2X User Capacity ... to the entire ActiveRange"; wraps when AR < 100 %),
        at the test's own TC/QD (PTS 2.0.2: "same as in step 2.1"); [wipc] threads/iodepth override it.
        `multiple`: a test's own amount instead of [wipc] multiple."""
        w, s = self.ctx.settings.wipc, self.ctx.settings
        bs = block_size or w.block_size
        threads = w.threads or s.threads
        iodepth = w.iodepth or s.iodepth
        total = (w.multiple if multiple is None else multiple) * self.ctx.target.size_bytes
        return Workload(name=f"wipc_seq_{bs_label(bs)}_write", rw="write", bs=bs, threads=threads,
                        iodepth=iodepth, range_size=self.ctx.active_range(), io_size=int(total / threads) // bs * bs,
                        data_pattern=s.data_pattern)

    def seeded(self, cells: Sequence[Workload], phase: str, round_no: int) -> list[Workload]:
        """Random cells with their seed for this round: repeatable from the run's seed (fio randseed), and
        different in every round and cell, so a round never rewrites the previous round's LBAs."""
        base = self.ctx.settings.seed
        if base is None:
            return list(cells)
        return [c.with_(seed=round_seed(base, self.ctx.test, self.ctx._ph(phase), round_no, c.name)) if c.random
                else c for c in cells]

    def io_alignment(self) -> int:
        """Random I/O offsets aligned to 4 KiB or the physical block, whichever is larger: on a 512e drive the
        same workload then hits the same flash pages as on a 4Kn drive (512-byte I/Os included)."""
        target = self.ctx.target
        return max(4096, int(target.physical_block_size or 4096), int(target.logical_block_size))

    def skip_sub_sector(self, sizes: Sequence[int]) -> tuple[list[int], list[str]]:
        """Drop block sizes below the logical block size (0.5 KiB on 4Kn drives), with a note."""
        lbs = self.ctx.target.logical_block_size
        keep = [b for b in sizes if b >= lbs]
        notes = [f"{bs_label(b)} skipped: below the {lbs}-byte logical block size" for b in sizes if b < lbs]
        return keep, notes


def choose_seed(profile_seed: int | None, cli_seed: int | None) -> SeedChoice:
    """The run's base seed: --seed, else the profile's, else a fresh one (any run can be repeated with the seed
    it records; `RunSettings.with_seed` writes it into the profile the run stores)."""
    if cli_seed is not None:
        return SeedChoice(int(cli_seed), "command line (--seed)")
    if profile_seed is not None:
        return SeedChoice(int(profile_seed), "profile")
    import secrets      # here: only a run draws a seed (reading a stored run's settings does not)

    return SeedChoice(secrets.randbelow(2**32), "drawn for this run")


def round_seed(base: int, test: str, phase: str, round_no: int, cell: str) -> int:
    """A 32-bit seed derived from the run's seed and the cell's place in the run (stable across resumes)."""
    return zlib.crc32(f"{base}/{test}/{phase}/{round_no}/{cell}".encode())


def cell_name(kind: str, bs: int, read_pct: int) -> str:
    """Stable, file-name-safe cell names: 'rnd_4K_65-35', 'seq_1024K_100-0'."""
    return f"{kind}_{bs_label(bs)}_{read_pct}-{100 - read_pct}"


def rnd_matrix(ctx: TestContext) -> tuple[list[Workload], list[int], list[int], list[str]]:
    """The random block size × R/W mix matrix of IOPS and Latency (outer loop: mix, inner: block size):
    (cells, block sizes, mixes, notes on skipped sub-sector sizes)."""
    sizes, notes = ctx.cells.skip_sub_sector(ctx.settings.block_sizes)
    mixes = list(ctx.settings.mixes)
    cells = [ctx.cells.cell(cell_name("rnd", bs, mix), "randrw", bs, mix) for mix in mixes for bs in sizes]
    return cells, sizes, mixes, notes


def tracked_cells(ctx: TestContext, cells: Sequence[Workload], metric: str) -> list[TrackerKey]:
    """The profile's `tracking` cells ([block size, read %] pairs, default RND 4K write) that the matrix has;
    the last cell when it has none of them."""
    names = {c.name for c in cells}
    out = []
    for bs, mix in ctx.settings.tracking:
        name = cell_name("rnd", bs, mix)
        if name in names:
            out.append(TrackerKey(name, metric))
    return out or [TrackerKey(cells[-1].name, metric)]
