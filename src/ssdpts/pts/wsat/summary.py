"""The WSAT test's typed summary: per workload, every interval and the figures SNIA reports."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...steady import SteadyState
from ...targets.record import PurgeRecord
from ..spec import Summary


@dataclass
class WsatInterval:
    """One interval of the continuous job (as stored in the round's tracking values)."""

    iops: float
    mib_s: float
    tgbw_gb: float              # total GB written so far (10^9 bytes), every drive of the run
    fills: float                # TGBW / capacity
    elapsed_s: float            # fio runtime so far
    lat_mean_us: float
    lat_max_us: float
    percentiles_us: dict[str, float] = field(default_factory=dict)   # "99", "99.99" ... -> µs, from fio

    @classmethod
    def of_tracking(cls, t: dict) -> "WsatInterval":
        pcts = {k[1:-3]: v for k, v in t.items() if k.startswith("p") and k.endswith("_us")}
        return cls(iops=t["iops"], mib_s=t["mib_s"], tgbw_gb=t["tgbw_gb"], fills=t["fills"],
                   elapsed_s=t["elapsed_s"], lat_mean_us=t["lat_mean_us"], lat_max_us=t["lat_max_us"],
                   percentiles_us=pcts)


@dataclass
class WsatWorkload:
    purge: PurgeRecord
    rounds: int
    stop_reason: str
    tgbw_gb: float
    fills: float
    elapsed_s: float
    fresh_iops: float                            # first interval (fresh-out-of-box)
    final_iops: float                            # mean of the last 5 intervals
    steady_state_of_last_window: SteadyState | None
    series: list[WsatInterval]

    @property
    def final_over_fresh(self) -> float | None:
        return self.final_iops / self.fresh_iops if self.fresh_iops else None


@dataclass
class WsatSummary(Summary):
    workloads: dict[str, WsatWorkload]           # workload name (rnd4k-write, oltp ...) -> results
    capacity_bytes: int                          # every drive of the run together
    round_time_s: float
    notes: list[str] = field(default_factory=list)
