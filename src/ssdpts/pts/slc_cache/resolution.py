"""How finely the SLC-cache estimate can see the cache, and the sample interval chosen for it.

The estimate counts the bytes written before the first drop, interval by interval; the interval that holds
the drop is split by its average. So the estimate is as fine as one interval's bytes at the cache's speed
(its resolution), and the cache's plateau needs several intervals to be found at all: a 2.25 GiB cache
written at 2,100 MiB/s fills in 1.1 s, and sampled once a second it was reported as 2.87 GiB at 1,211 MiB/s
(+27 %). A resolution coarser than `MAX_RESOLUTION` of the size reported is an `slc-resolution` deviation.

The default interval is automatic: the time to write `AUTO_SHARE` of the capacity at `AUTO_SPEED` (a fast
PCIe 4.0 x4 link), within [SLC_INTERVAL_MIN_S, SLC_INTERVAL_MAX_S]. A cache of 5 % of the capacity or more
written at up to that speed then spans 20 intervals or more: a resolution of 5 % or better.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...deviations import Deviation
from ...realtime.timing import SLC_INTERVAL_MAX_S, SLC_INTERVAL_MIN_S

MIB = 2**20
AUTO_SHARE = 0.0025          # of the capacity, written in one automatic interval at AUTO_SPEED
AUTO_SPEED = 8e9             # bytes/s
MAX_RESOLUTION = 0.05        # of the cache size reported
SLC_RESOLUTION_SOURCE = ("ssdpts rule (docs/conformance.md, 'SLC-cache resolution'): the cache estimate is as fine "
                         "as one sample interval's bytes at the cache's speed")


def auto_interval(capacity_bytes: int) -> float:
    """The automatic sample interval for a drive of this capacity, seconds."""
    return min(SLC_INTERVAL_MAX_S, max(SLC_INTERVAL_MIN_S, capacity_bytes * AUTO_SHARE / AUTO_SPEED))


@dataclass(frozen=True)
class Resolution:
    interval_s: float
    bytes_per_interval: float        # one interval at the cache's speed
    fraction: float                  # of the cache size reported

    @property
    def coarse(self) -> bool:
        return self.fraction > MAX_RESOLUTION

    def finer_interval_s(self) -> float:
        """The interval that would give MAX_RESOLUTION for the cache reported."""
        return self.interval_s * MAX_RESOLUTION / self.fraction


def resolution(cache_bytes: float | None, cache_speed_mib_s: float | None, interval_s: float) -> Resolution | None:
    """The estimate's resolution (None when no cache was found)."""
    if not cache_bytes or not cache_speed_mib_s or cache_bytes <= 0:
        return None
    per = cache_speed_mib_s * MIB * interval_s
    return Resolution(interval_s, per, per / cache_bytes)


def deviation(res: Resolution | None, what: str = "") -> Deviation | None:
    """An `slc-resolution` deviation when the interval is coarse for the cache it reports."""
    if res is None or not res.coarse:
        return None
    return Deviation("slc-resolution", f"{what}the cache estimate's resolution is {res.fraction * 100:.1f} % of its "
                     f"size ({res.bytes_per_interval / MIB:,.0f} MiB per {res.interval_s:g} s interval at the cache's "
                     f"speed), above {MAX_RESOLUTION * 100:g} %: the size and speed may be wrong; set [tests.slc-cache] "
                     f"interval to {res.finer_interval_s() * 1000:.0f} ms or less (less still if the size then "
                     "changes), or leave it unset (automatic, from the capacity)",
                     SLC_RESOLUTION_SOURCE)


def unresolved(cache_bytes: int | None, speed_mib_s: float, interval_s: float, min_points: int) -> Deviation | None:
    """An `slc-resolution` deviation where no drop was found although the drive knows a cache (the simulated
    drive's counters) that fills in fewer than the `min_points` intervals a plateau needs at the first interval's
    speed: the interval cannot resolve it, which is not "no cache"."""
    if not cache_bytes or speed_mib_s <= 0:
        return None
    fill_s = cache_bytes / (speed_mib_s * MIB)
    if fill_s >= min_points * interval_s:
        return None
    res = resolution(cache_bytes, speed_mib_s, interval_s)
    return Deviation("slc-resolution", f"the {interval_s:g} s interval cannot resolve the cache the drive reports: "
                     f"{cache_bytes / MIB:,.0f} MiB fills in {fill_s:.2g} s at the first interval's "
                     f"{speed_mib_s:,.0f} MiB/s, less than the {min_points} intervals a plateau needs, so no drop "
                     f"could be seen (not a drive without a cache); set [tests.slc-cache] interval to "
                     f"{res.finer_interval_s() * 1000:.0f} ms or less, or leave it unset (automatic)",
                     SLC_RESOLUTION_SOURCE)
