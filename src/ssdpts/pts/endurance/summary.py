"""The endurance test's typed summary."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...health.projection import EraseIncrement
from ..spec import Summary


@dataclass
class WearFit:
    """A wear-rate fit of `ssdpts.health.projection.wear_fit` (slope per second or per TB)."""

    slope: float | None = None
    intercept: float | None = None
    method: str = ""
    steps: int | None = None
    upper_slope: float | None = None     # a bound when the indicator did not change


@dataclass
class Temperatures:
    min: float
    max: float
    mean: float
    last: float


@dataclass
class Projection:
    """`ssdpts.health.projection.project` over the run's health polls (None: unknown; why: `notes`)."""

    available: bool = False
    reason: str | None = None
    points: int = 0
    notes: list[str] = field(default_factory=list)
    duration_s: float | None = None
    duration_days: float | None = None
    host_written_bytes: float | None = None
    media_written_bytes: float | None = None
    host_tb_per_day: float | None = None
    host_written_tb_lifetime: float | None = None
    drive_writes_per_day: float | None = None
    waf: float | None = None
    wear_start: float | None = None
    wear_end: float | None = None
    wear_delta: float | None = None
    wear_fit_time: WearFit | None = None
    wear_per_day: float | None = None
    wear_fit_tb: WearFit | None = None
    wear_per_tb: float | None = None
    days_to_eol: float | None = None
    days_to_eol_min: float | None = None
    tb_to_eol: float | None = None
    wear_per_day_recent: float | None = None
    days_to_eol_recent: float | None = None
    rated_tbw_tb: float | None = None
    tbw_used_percent: float | None = None
    days_to_rated_tbw: float | None = None
    projected_tbw_tb: float | None = None
    temperature_c: Temperatures | None = None


@dataclass
class RatedEndurance:
    rated_tbw_tb: float | None           # TB (10^12 bytes), from the profile
    dwpd: float | None
    warranty_years: float | None
    capacity_bytes: int


@dataclass
class EndurancePoll:
    """One poll interval of the workload, with the health numbers read at its end (None: not reported)."""

    round: int
    elapsed_s: float                     # seconds of workload
    iops: float
    mib_s: float
    lat_mean_us: float
    fio_written_bytes: int
    host_written_tb: float | None = None     # TB (10^12 B) the drive counted since the start
    wear_percent: float | None = None        # % of rated life used
    waf: float | None = None                 # NAND / host writes in the interval
    waf_cumulative: float | None = None
    temperature_c: float | None = None
    erase_count_avg: float | None = None     # average erase count (ATA 173 / 177, NVMe vendor logs, simulator)


@dataclass
class Loop:
    """One pass of `loop_size` bytes of the workload (seed 002 timed its loops from LOG file mtimes). Its end
    is the end of the engine's own row (the simulator's interval log inside each poll, else the poll itself)
    by which the written bytes reached the loop's bound: measured to `resolution_s`, never interpolated. A loop
    that ended in the row its predecessor ended in is shorter than that: its duration is not known (None)."""

    index: int                           # 1-based
    start_s: float                       # workload seconds
    end_s: float
    duration_s: float | None
    mib_s: float | None                  # loop_size / duration, MiB/s (2^20 B/s)
    resolution_s: float | None = None    # the row its end was read in (None: stored by an ssdpts that interpolated)


@dataclass
class EnduranceSummary(Summary):
    workload: str
    duration_s: float
    poll_s: float
    elapsed_s: float
    stop_reason: str                     # duration reached | round limit
    rounds: int
    polls: int
    fio_written_bytes: int
    health_available: bool
    health_reason: str | None            # why there is no health data (None when there is)
    health_source: str | None
    rated: RatedEndurance
    projection: Projection
    series: list[EndurancePoll] = field(default_factory=list)
    erase_increments: list[EraseIncrement] = field(default_factory=list)   # empty: no erase count reported
    loop_bytes: int = 0                  # bytes per loop (the profile's loop_size; default the capacity)
    loops: list[Loop] = field(default_factory=list)                         # complete loops only
    loops_timed_by: str = ""             # whose clock timed the loop ends ("" : interpolated, an older run)
    # minutes per whole increment of the average erase count (seed 002's "left value x 5 min"), and how it was
    # measured (None: not measurable, `erase_rate_basis` says why)
    minutes_per_erase_increment: float | None = None
    erase_rate_basis: str = ""
