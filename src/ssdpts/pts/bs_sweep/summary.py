"""The block-size sweep's typed summary."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...targets.record import PurgeRecord
from ..spec import Summary


@dataclass
class SweepCell:
    """One workload at one block size in one drive state."""

    state: str                 # fresh | used
    rw: str                    # read | randread | write | randwrite
    block_size: int            # bytes
    mb_s: float                # MB/s (10^6 bytes/s)
    mib_s: float               # MiB/s (2^20 bytes/s)
    iops: float
    lat_mean_us: float


@dataclass
class BsSweepSummary(Summary):
    purge: PurgeRecord
    states: list[str]
    workloads: list[str]
    block_sizes: list[int]     # bytes, sweep order (sizes below the logical block skipped, see notes)
    iodepth: int
    threads: int
    fresh_fill: bool
    cells: list[SweepCell] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def cell(self, state: str, rw: str, block_size: int) -> SweepCell | None:
        return next((c for c in self.cells if (c.state, c.rw, c.block_size) == (state, rw, block_size)), None)
