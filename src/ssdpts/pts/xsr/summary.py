"""The XSR test's typed summary: the three access groups, every interval, and the recovery point."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...targets.record import PurgeRecord
from ..spec import Summary


@dataclass
class XsrInterval:
    """One interval of a group's continuous job (as stored in the round's tracking values)."""

    mib_s: float
    iops: float
    start_s: float                # from the start of its group (sum of the earlier intervals' fio runtime)
    lat_mean_us: float
    lat_max_us: float


@dataclass
class XsrGroup:
    mib_s_mean: float
    lat_mean_us: float
    intervals: int
    series: list[XsrInterval]

    @property
    def lat_max_us(self) -> float | None:
        return max((x.lat_max_us for x in self.series), default=None)


@dataclass
class XsrSummary(Summary):
    purge: PurgeRecord
    groups: dict[str, XsrGroup]              # "g1", "g2", "g3"
    group1_average_mib_s: float
    recovery_s: float | None                 # from the start of group 3; None: not recovered
    recovered: bool
    interval_s: float
    notes: list[str] = field(default_factory=list)
