"""The random-write-over-time study's typed summary."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...targets.purge import PurgeRecord
from ...units import bs_label
from ..spec import Summary


@dataclass
class RatePoint:
    t_s: float                 # seconds since this block size's purge (end of the interval)
    mb_s: float                # MB/s (10^6 bytes/s) over the interval
    iops: float


@dataclass
class BlockSizeRun:
    """One block size: its own purge, then random writes for the profile's duration."""

    block_size: int            # bytes
    purge: PurgeRecord
    intervals: int
    first_mb_s: float          # the first interval
    final_mb_s: float          # mean of the last 10 % of intervals
    min_mb_s: float
    max_mb_s: float
    written_bytes: int         # all drives of a parallel run together
    fills: float               # drive capacities written (per drive)
    series: list[RatePoint] = field(default_factory=list)

    @property
    def label(self) -> str:
        return bs_label(self.block_size)


@dataclass
class RwOverTimeSummary(Summary):
    duration_s: float
    interval_s: float
    block_sizes: list[BlockSizeRun] = field(default_factory=list)   # in run order
    notes: list[str] = field(default_factory=list)
