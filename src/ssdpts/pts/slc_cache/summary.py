"""The SLC-cache study's typed summary."""

from __future__ import annotations

from dataclasses import dataclass, field

from .steps import Step
from ...targets.record import PurgeRecord
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
class FillLevel:
    """The cache measured after `fill_percent` % of the drive was written (0: the FOB measurement itself):
    purge, SEQ fill, idle, then the sequential probe over the rest of the drive."""

    fill_percent: float                # % of the capacity written before the probe
    filled_bytes: int
    idle_s: float                      # idle between the fill and the probe (0 for the FOB measurement)
    probe_bytes: int                   # written by the probe
    probe_s: float
    drop_detected: bool
    cache_bytes: float | None          # bytes of the probe before its first drop (None: no drop seen)
    share_percent: float | None        # cache_bytes / capacity, %
    cache_mib_s: float | None
    after_drop_mib_s: float | None
    note: str = ""

    @property
    def cache_gib(self) -> float | None:
        return None if self.cache_bytes is None else self.cache_bytes / 2**30


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
    bits_per_cell: int | None = None   # native cell (3: TLC), for the share "in native terms"
    bits_per_cell_source: str = ""
    fill_levels: list[FillLevel] = field(default_factory=list)   # empty: no fill levels asked for
    # one interval's bytes at the cache's speed / the cache estimate (resolution.py); above 5 %: a deviation
    resolution_fraction: float | None = None
    interval_auto: bool = False        # the interval was chosen from the capacity (no profile value)

    @property
    def cache_gib(self) -> float | None:
        return None if self.cache_bytes is None else self.cache_bytes / 2**30

    @property
    def share_percent(self) -> float | None:
        """The cache as a share of the user capacity, % (seed 000: 65 GiB of 465.76 GiB)."""
        return None if self.cache_bytes is None else self.cache_bytes / (self.capacity_bytes * self.drives) * 100

    @property
    def native_share_percent(self) -> float | None:
        """The native (TLC) cells the SLC cache occupies, % of the capacity: a cell holding 1 bit in SLC mode
        holds `bits_per_cell` natively (seed 000: "in TLC terms about 0.4 of the 500 GiB")."""
        if self.share_percent is None or self.bits_per_cell is None:
            return None
        return self.share_percent * self.bits_per_cell
