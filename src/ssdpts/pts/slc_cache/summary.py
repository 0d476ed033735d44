"""The SLC-cache study's typed summary."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...analyze.slc_cache import Step
from ...targets.purge import PurgeRecord
from ..spec import Summary


@dataclass
class SlcReference:
    """The cache size a target knows of itself (the simulated SSD), recorded right after the purge."""

    slc_capacity_bytes: int | None
    slc_used_bytes: int | None
    source: str
    error: float | None = None        # estimate / reference - 1, when both are known


@dataclass
class SeriesPoint:
    t_s: float                         # seconds from the start of the write (end of the interval)
    mib_s: float                       # MiB/s (2^20 bytes/s) over the interval


@dataclass
class SlcCacheSummary(Summary):
    purge: PurgeRecord
    block_size: int                    # bytes
    iodepth: int
    threads: int
    capacity_bytes: int
    planned_bytes: int                 # all drives together
    written_bytes: int                 # all drives together
    elapsed_s: float
    interval_s: float
    stop_reason: str                   # "planned bytes written" | "time limit"
    drop_detected: bool
    intervals: int
    steps: list[Step] = field(default_factory=list)          # plateaus of the write, in time order
    cache_bytes: float | None = None   # bytes written before the first drop (None: no drop seen)
    first_drop_s: float | None = None
    cache_speed_mib_s: float | None = None
    after_drop_mib_s: float | None = None
    note: str = ""
    reference: SlcReference | None = None
    series: list[SeriesPoint] = field(default_factory=list)
    drives: int = 1                    # drives written at once (a parallel run): bytes and MiB/s are their sums
    notes: list[str] = field(default_factory=list)

    @property
    def cache_gib(self) -> float | None:
        return None if self.cache_bytes is None else self.cache_bytes / 2**30
