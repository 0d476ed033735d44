"""The random-write-over-time study's typed summary."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...targets.record import PurgeRecord
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
    # the band around the final level that "levelled off" means (profile's level_band_pct; ssdpts's rule)
    level_band_pct: float = 10.0

    @property
    def label(self) -> str:
        return bs_label(self.block_size)

    @property
    def tail_intervals(self) -> int:
        """How many of the last intervals the final level is the mean of (10 %, at least one)."""
        return max(1, len(self.series) // 10)

    @property
    def stable_after_s(self) -> float | None:
        """Time to level off: the earliest time after which every interval's MB/s stays within
        ±level_band_pct of the final level to the end. None ("not reached") when that stretch does not
        even cover the last 10 % of intervals the final level is measured on."""
        if not self.series or self.final_mb_s <= 0:
            return None
        band = self.final_mb_s * self.level_band_pct / 100
        start = len(self.series)
        while start > 0 and abs(self.series[start - 1].mb_s - self.final_mb_s) <= band:
            start -= 1
        if len(self.series) - start < self.tail_intervals:
            return None
        return self.series[start - 1].t_s if start else 0.0


@dataclass
class RwOverTimeSummary(Summary):
    duration_s: float
    interval_s: float
    block_sizes: list[BlockSizeRun] = field(default_factory=list)   # in run order
    notes: list[str] = field(default_factory=list)
