"""The IOPS test's typed summary: the matrix, each cell's latency percentiles, and the cells logged per interval."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Sequence

from ..matrix import MatrixSummary
from ...results import CellWindow

# the latency columns reviewers publish for an IOPS cell (seeds 000, 003): mean, p99, p99.9, p99.99, max
PERCENTILES = ("99", "99.9", "99.99")


@dataclass
class CellSeries:
    """One cell's IOPS and mean latency per logged interval (fio log_avg_msec, or the simulator's interval
    log), in the last round of the measurement window: consistency inside a cell, as reviewers chart it."""

    cell: str
    round: int
    interval_s: float                    # the log interval asked for
    source: str                          # "fio log_avg_msec" | "simulator"
    t_s: list[float]                     # end of each interval, seconds from the cell's start
    iops: list[float]                    # read + write IOPS of the interval
    lat_mean_us: list[float | None]      # mean total latency of the interval (None: not logged)
    iops_cv: float | None = None         # coefficient of variation (population std / mean) of `iops`
    lat_cv: float | None = None          # the same of the logged latencies
    dropped: int = 0                     # partial intervals (shorter than 3/4 of the log interval) left out


def cv(values: Sequence[float | None]) -> float | None:
    """Population standard deviation / mean; None with fewer than two values or a zero mean."""
    v = [x for x in values if x is not None]
    if len(v) < 2 or not statistics.fmean(v):
        return None
    return statistics.pstdev(v) / statistics.fmean(v)


def cell_series(cell: str, round_no: int, interval_s: float, source: str, intervals: list[dict]) -> CellSeries:
    """A CellSeries from intervals of the engines' shape (t_ns: end from the start, read_ios, write_ios,
    lat_mean_ns); IOPS over each interval's own length."""
    t_s, iops, lat, dropped, prev = [], [], [], 0, 0.0
    for iv in intervals:
        end = iv["t_ns"] / 1e9
        length = end - prev
        prev = end
        if length < 0.75 * interval_s:    # fio's or the simulator's partial last interval
            dropped += 1
            continue
        t_s.append(end)
        iops.append((iv.get("read_ios", 0) + iv.get("write_ios", 0)) / length)
        ns = iv.get("lat_mean_ns")
        lat.append(ns / 1000 if ns else None)
    return CellSeries(cell, round_no, interval_s, source, t_s, iops, lat, cv(iops), cv(lat), dropped)


@dataclass(frozen=True)
class CellLatency:
    """One direction of one matrix cell: window latency figures (µs) where fio reported them (None: not)."""

    cell: str
    block_size: int
    read_pct: int
    direction: str                       # "read" | "write"
    mean_us: float
    p99_us: float | None
    p99_9_us: float | None
    p99_99_us: float | None
    max_us: float
    percentiles_from: str                # "histogram" (merged fio bins) | "round mean"


@dataclass
class IopsSummary(MatrixSummary):
    series: dict[str, CellSeries] = field(default_factory=dict)   # cell -> per-interval log (none stored before)

    def iops(self, bs: int, read_pct: int) -> float | None:
        """Window-average IOPS (read + write) of one matrix cell, None when the matrix lacks it."""
        c = self.cell(bs, read_pct)
        return c.iops if c is not None else None

    def latencies(self) -> list[CellLatency]:
        """Every cell's latency per direction it has, in matrix order (mix, then block size)."""
        out = []
        for name, c in self.cells.items():
            out += cell_latencies(name, c)
        return out


def cell_latencies(name: str, c: CellWindow) -> list[CellLatency]:
    rp = c.workload.read_pct if c.workload.read_pct is not None else (100 if c.workload.rw in ("read", "randread")
                                                                        else 0)
    out = []
    for direction, lat in (("read", c.read_lat), ("write", c.write_lat)):
        if lat is not None:
            out.append(CellLatency(name, int(c.workload.bs or 0), rp, direction, lat.mean_us,
                                   *(lat.p(p) for p in PERCENTILES), lat.max_us, lat.percentiles_from))
    return out
