"""The Throughput test's typed summary: one steady-state loop per block size."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...targets.record import PurgeRecord
from ...units import bs_label
from ...results import CellWindow, SteadyResult
from ..spec import Summary

MB_PER_MIB = 2**20 / 1e6     # vendors quote MB/s (10^6 B/s); ssdpts measures MiB/s (2^20 B/s)


@dataclass
class BlockSizeResult:
    """One block size: its own purge and WIPC, rounds of [SEQ read, SEQ write] until both are steady."""

    block_size: int                  # bytes
    purge: PurgeRecord
    steady: SteadyResult
    read_cell: str                   # name of the SEQ read cell in `cells`
    write_cell: str                  # name of the SEQ write cell in `cells`
    cells: dict[str, CellWindow]     # both cells' measurement-window averages (and per-drive parts)

    @property
    def label(self) -> str:
        return bs_label(self.block_size)

    @property
    def phase(self) -> str:
        """The phase its rounds are stored under."""
        return f"bs={self.label}"

    @property
    def read(self) -> CellWindow | None:
        return self.cells.get(self.read_cell)

    @property
    def write(self) -> CellWindow | None:
        return self.cells.get(self.write_cell)

    @property
    def read_mib_s(self) -> float | None:
        """Window-average read bandwidth of the SEQ read cell, MiB/s."""
        return self.read.read_mib_s if self.read else None

    @property
    def write_mib_s(self) -> float | None:
        """Window-average write bandwidth of the SEQ write cell, MiB/s."""
        return self.write.write_mib_s if self.write else None

    @property
    def read_mb_s(self) -> float | None:
        return None if self.read_mib_s is None else self.read_mib_s * MB_PER_MIB

    @property
    def write_mb_s(self) -> float | None:
        return None if self.write_mib_s is None else self.write_mib_s * MB_PER_MIB

    def mib_s(self, direction: str) -> float | None:
        """The figure of one direction ("read" | "write"), MiB/s."""
        return self.read_mib_s if direction == "read" else self.write_mib_s

    def part_labels(self) -> set[str]:
        return {p for c in self.cells.values() for p in c.parts}

    def part_mib_s(self, label: str) -> tuple[float | None, float | None]:
        """(read, write) MiB/s of one drive of a parallel run; None where that drive has no result."""
        rp = self.read.parts.get(label) if self.read else None
        wp = self.write.parts.get(label) if self.write else None
        return (rp.read_mib_s if rp else None), (wp.write_mib_s if wp else None)


@dataclass
class ThroughputSummary(Summary):
    block_sizes: list[BlockSizeResult] = field(default_factory=list)   # profile order

    def at(self, block_size: int) -> BlockSizeResult | None:
        return next((r for r in self.block_sizes if r.block_size == block_size), None)
