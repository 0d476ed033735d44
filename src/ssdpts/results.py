"""Typed result records that several tests share: steady-state outcome, window averages of a cell, latency.

Each test's own summary (its package's `summary.py`) is built from these; `ssdpts.records` turns them
into stored/exported data and back.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .metrics import unit_of
from .steady import SteadyState
from .workload import Workload


@dataclass(frozen=True)
class TrackerKey:
    """A tracking variable: one metric of one cell (of one drive `part` in a parallel run)."""

    cell: str
    metric: str = "iops"       # iops | read_bw | write_bw | lat_mean | ...
    part: str | None = None

    @property
    def label(self) -> str:
        return f"{self.cell} {self.metric}" + (f" @{self.part}" if self.part else "")

    def of(self, part: str) -> "TrackerKey":
        return TrackerKey(self.cell, self.metric, part)


@dataclass
class TrackerResult:
    key: TrackerKey
    state: SteadyState
    # the unit of the state's figures (average, ranges, excursions, intercept; slope: unit per round): the stored
    # unit of the metric (IOPS, B/s, ns); summaries stored before it was recorded get it from the metric
    unit: str = ""

    def __post_init__(self):
        if not self.unit:
            self.unit = unit_of(self.key.metric).stored


@dataclass
class SteadyResult:
    """One steady-state loop: reached or not, after how many rounds, the window, every tracker's judgement."""

    phase: str
    reached: bool
    rounds: int
    window_rounds: list[int] = field(default_factory=list)
    trackers: list[TrackerResult] = field(default_factory=list)

    @property
    def aggregate_trackers(self) -> list[TrackerResult]:
        """The trackers of the whole target (a parallel run also judges every drive)."""
        return [t for t in self.trackers if t.key.part is None]

    @property
    def reasons(self) -> list[str]:
        return [f"{t.key.label}: {t.state.reason}" for t in self.trackers if t.state.reason]

    def text_lines(self, indent: str = "  ") -> list[str]:
        """The verdict and every tracker's determination figures, as `show` prints them."""
        w = self.window_rounds
        out = [f"{indent}steady state {'reached' if self.reached else 'NOT REACHED'} after {self.rounds} rounds"
               + (f" (window rounds {w[0]}-{w[-1]})" if w else "")]
        for t in self.trackers:
            s = t.state
            if s.average is None:
                out.append(f"{indent}  {t.key.label}: {s.reason}")
                continue
            u = unit_of(t.key.metric)   # display units (MiB/s, µs), not the stored B/s and ns
            fit = f", fit y = {s.slope * u.scale:.4g} * R + {u.show(s.intercept)}" if s.fit_formula else ""
            out.append(f"{indent}  {t.key.label}: avg {u.show(s.average)}, range {u.show(s.range_measured)} "
                       f"(≤ {u.show(s.range_allowed)}), slope excursion {u.show(s.slope_excursion_measured)} "
                       f"(≤ {u.show(s.slope_excursion_allowed)}){fit}")
        return out


@dataclass
class Latency:
    """Latency of one direction over a measurement window, µs (total latency: submission to completion)."""

    mean_us: float
    max_us: float
    percentiles_us: dict[str, float] = field(default_factory=dict)   # "99", "99.9", ... -> µs
    percentiles_from: str = "histogram"   # "histogram": merged fio bins; "round mean": mean of per-round values

    def p(self, q: str) -> float | None:
        return self.percentiles_us.get(q)


@dataclass
class CellWindow:
    """Measurement-window averages of one cell (rates averaged, histograms merged, max of max)."""

    workload: Workload
    iops: float
    read_iops: float
    write_iops: float
    read_mib_s: float
    write_mib_s: float
    usr_cpu: float
    sys_cpu: float
    lat_mean_us: float
    lat_max_us: float
    read_lat: Latency | None = None
    write_lat: Latency | None = None
    parts: dict[str, "CellWindow"] = field(default_factory=dict)   # per drive of a parallel run

    @property
    def mib_s(self) -> float:
        return self.read_mib_s + self.write_mib_s

    @property
    def main_lat(self) -> Latency | None:
        """The direction a cell is about: writes for a write-only cell, else reads (then whichever exists)."""
        if self.workload.read_pct == 0 or self.workload.rw in ("write", "randwrite"):
            return self.write_lat or self.read_lat
        return self.read_lat or self.write_lat
