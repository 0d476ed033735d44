"""The over-provisioning study's typed summary."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...targets.record import PurgeRecord
from ...results import SteadyResult
from ..spec import Summary


@dataclass
class ActiveRangeResult:
    """Random-write steady state with writes confined to one active range (the rest: extra spare area)."""

    active_range_percent: float
    active_bytes: int
    extra_spare_bytes: int
    purge: PurgeRecord
    steady: SteadyResult
    iops: float | None         # measurement-window average (None: no round stored)
    mib_s: float | None
    lat_mean_us: float | None
    iops_per_round: list[float] = field(default_factory=list)

    @property
    def reached(self) -> bool:
        return self.steady.reached

    @property
    def rounds(self) -> int:
        return self.steady.rounds


@dataclass
class OpStudySummary(Summary):
    block_size: int            # bytes
    precondition_multiple: float
    capacity_bytes: int
    active_ranges: list[ActiveRangeResult] = field(default_factory=list)   # in run order

    def at(self, percent: float) -> ActiveRangeResult | None:
        return next((a for a in self.active_ranges if a.active_range_percent == percent), None)
