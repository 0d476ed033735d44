"""The WSAT test's typed summary: per workload, every interval and the figures SNIA reports."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...deviations import Deviation
from ...steady import SteadyState
from ...targets.record import PurgeRecord
from ...units import format_duration
from ..spec import Summary

# The spec's stop (PTS-E 1.1 WSAT; docs/conformance.md "WSAT's stop"): the job runs from FOB until 4x the user
# capacity is written or 24 h, whichever comes first. A profile may stop it sooner (round or time limit, a
# smaller capacity_multiple); the run then says so.
SPEC_FILLS = 4.0
SPEC_TIME_LIMIT_S = 24 * 3600.0
SPEC_STOP_SOURCE = ("PTS-E 1.1 WSAT: from FOB, write until 4× the user capacity is written or 24 h, whichever comes "
                    "first (TKperf; RstReport 'While not written 4x User Capacity or 24h')")
# fio ends a size-bound job at its io_size less at most one block per job: 4 fills within this share count as 4
FILL_SLACK = 1e-3
# ssdpts's levelled-off rule counts only after the whole capacity was written once: before that, never-written
# LBAs act as spare and the drive has not yet had to collect garbage
LEVEL_MIN_FILLS = 1.0


def _elapsed(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 60 else format_duration(seconds)


@dataclass(frozen=True)
class Saturation:
    """Whether one WSAT workload saturated the drive (the `saturated` basis of a claim; docs/report.md), and how:
    by the spec's stop, or levelled off by ssdpts's stated rule after leaving its fresh level."""

    reached: bool
    how: str                    # "reached: WSAT wrote 4.00 of 4 fills (the spec's stop)", "not reached: ..."


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

    @property
    def wrote(self) -> str:
        """"WSAT wrote 0.36 of 4 fills": the volume against the spec's stop."""
        return f"WSAT wrote {self.fills:.2f} of {SPEC_FILLS:g} fills"

    @property
    def stopped_short(self) -> bool:
        """Stopped before the spec's stop: neither 4× the capacity written nor 24 h run."""
        return self.fills < SPEC_FILLS * (1 - FILL_SLACK) and self.elapsed_s < SPEC_TIME_LIMIT_S

    def _not_levelled(self) -> str:
        """Why ssdpts's levelled-off rule does not hold ("" when it does): at least one fill written, the last
        window steady by the profile's steady-state rule, and its level below the fresh level by more than that
        rule's allowed range (the first interval would not fit in the window)."""
        ss = self.steady_state_of_last_window
        if self.fills < LEVEL_MIN_FILLS:
            return (f"less than {LEVEL_MIN_FILLS:g} fill written (never-written space still acts as spare)")
        if ss is None or not ss.reached:
            return "its last intervals are not steady" + (f" ({ss.reason})" if ss is not None and ss.reason else "")
        if self.fresh_iops - self.final_iops <= (ss.range_allowed or 0.0):
            return (f"its IOPS did not leave the fresh level (final/fresh {self.final_over_fresh or 0:.3f}, within "
                    f"the {ss.rule} rule's allowed range)")
        return ""

    @property
    def saturation(self) -> Saturation:
        if not self.stopped_short:
            why = (f"{self.wrote} (the spec's stop)" if self.fills >= SPEC_FILLS * (1 - FILL_SLACK) else
                   f"WSAT ran {_elapsed(self.elapsed_s)} (the spec's 24 h stop), {self.fills:.2f} fills")
            return Saturation(True, f"reached: {why}")
        not_levelled = self._not_levelled()
        if not not_levelled:
            ss = self.steady_state_of_last_window
            return Saturation(True, f"reached: levelled off after leaving its fresh level ({self.wrote}, stopped: "
                                    f"{self.stop_reason}; last {ss.window} intervals steady by the {ss.rule} rule "
                                    f"at {self.final_over_fresh or 0:.3f} of fresh)")
        return Saturation(False, f"not reached: {self.wrote} (stopped: {self.stop_reason}); not levelled off: "
                                 f"{not_levelled}")


@dataclass
class WsatSummary(Summary):
    workloads: dict[str, WsatWorkload]           # workload name (rnd4k-write, oltp ...) -> results
    capacity_bytes: int                          # every drive of the run together
    round_time_s: float
    notes: list[str] = field(default_factory=list)

    def stopped_short(self) -> list[Deviation]:
        return [Deviation("duration", f"WSAT {name} stopped short of the spec's stop: it wrote {w.fills:.2f} of "
                          f"{SPEC_FILLS:g} drive fills in {_elapsed(w.elapsed_s)}, not {SPEC_FILLS:g} fills or 24 h "
                          f"(stopped: {w.stop_reason})", SPEC_STOP_SOURCE)
                for name, w in self.workloads.items() if w.stopped_short]
