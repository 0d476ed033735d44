"""Demand intensity: the TC x QD sweep shared by DIRTH and CBW (latency vs IOPS curves).

Purge; precondition with the test's access pattern as writes at the largest TC/QD; then rounds of
the whole sweep (largest demand first, as PTS 2.0 runs it) until the largest point's IOPS is steady.
Per point: window-average IOPS and latency (mean, percentiles from merged histograms, max).
Operating points: Max = the highest IOPS with mean latency under the limit (5 ms by default),
Min = TC1/QD1 (the smallest), Mid = the point whose IOPS is closest to (Max + Min) / 2.

Shared code, not a test: the `dirth` and `cbw` packages call `sweep` with their own cells and summary type.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, TypeVar

from ..settings import DURATION, INTS, PCT
from ..targets.purge import PurgeRecord
from ..units import parse_duration
from ..workload import Workload
from .common import TestContext, window_summary
from .results import Latency, SteadyResult, TrackerKey
from .spec import Summary

# the profile keys of both sweeps ([tests.dirth] and [tests.cbw])
SWEEP_SETTINGS = {"thread_counts": INTS, "queue_depths": INTS, "precondition_time": DURATION,
                  "latency_limit": DURATION, "read_pct": PCT, "prewrite_time": DURATION,
                  "operating_prewrite_time": DURATION, "operating_measure_time": DURATION}


@dataclass
class DemandPoint:
    """One TC x QD point: measurement-window averages of its cell."""

    tc: int                      # thread count (fio numjobs)
    qd: int                      # queue depth per thread (fio iodepth)
    oio: int                     # outstanding I/Os, TC x QD
    name: str
    iops: float                  # read + write
    lat_mean_us: float
    lat_max_us: float
    read_lat: Latency | None
    write_lat: Latency | None
    usr_cpu: float
    sys_cpu: float


@dataclass
class OperatingPoints:
    """Point names of the Max / Mid / Min operating points (one point can be several)."""

    max: str
    mid: str
    min: str

    def items(self) -> list[tuple[str, str]]:
        return [("max", self.max), ("mid", self.mid), ("min", self.min)]


@dataclass(kw_only=True)
class DemandSummary(Summary):
    """What DIRTH and CBW share; each test's summary adds what describes its access pattern."""

    purge: PurgeRecord
    steady: SteadyResult
    points: list[DemandPoint]                    # largest TC first, then largest QD first
    latency_limit_us: float
    operating_points: OperatingPoints
    max_under_limit: bool                        # False: no point under the limit, Max is the highest IOPS
    thread_counts: list[int]
    queue_depths: list[int]
    read_pct: int
    notes: list[str] = field(default_factory=list)

    def point(self, name: str) -> DemandPoint | None:
        return next((p for p in self.points if p.name == name), None)


S = TypeVar("S", bound=DemandSummary)


def point_name(prefix: str, tc: int, qd: int) -> str:
    return f"{prefix}_tc{tc}_qd{qd}"


def sweep(ctx: TestContext, prefix: str, make_cell: Callable[..., Workload], summary_type: type[S], **extra) -> S:
    """Run the sweep with the test's cells; its summary_type(**shared results, **extra)."""
    tcs = sorted({int(x) for x in ctx.settings.get("thread_counts", [1, 2, 4, 8, 16, 32])}, reverse=True)
    qds = sorted({int(x) for x in ctx.settings.get("queue_depths", [1, 2, 4, 8, 16, 32])}, reverse=True)
    cells = [make_cell(point_name(prefix, tc, qd), threads=tc, iodepth=qd) for tc in tcs for qd in qds]
    biggest = cells[0]
    pc_time = parse_duration(ctx.settings.get("precondition_time", "30m"))
    precondition = make_cell(f"{prefix}_precondition", threads=tcs[0], iodepth=qds[0], runtime_s=pc_time,
                             read_pct=0)
    purge = ctx.purge()
    outcome = ctx.run_to_steady_state("", cells, [TrackerKey(biggest.name, "iops")], precondition=precondition)
    summary = window_summary(outcome.rounds, outcome.window_rounds)
    limit_us = parse_duration(ctx.settings.get("latency_limit", "5ms")) * 1e6
    points = []
    for tc in tcs:
        for qd in qds:
            s = summary[point_name(prefix, tc, qd)]
            points.append(DemandPoint(tc=tc, qd=qd, oio=tc * qd, name=point_name(prefix, tc, qd), iops=s.iops,
                                      lat_mean_us=s.lat_mean_us, lat_max_us=s.lat_max_us,
                                      read_lat=s.read_lat, write_lat=s.write_lat,
                                      usr_cpu=s.usr_cpu, sys_cpu=s.sys_cpu))
    under = [p for p in points if p.lat_mean_us < limit_us]
    max_point = max(under or points, key=lambda p: p.iops)
    min_point = min(points, key=lambda p: p.oio)
    mid_target = (max_point.iops + min_point.iops) / 2
    mid_point = min(points, key=lambda p: abs(p.iops - mid_target))
    return summary_type(purge=purge, steady=outcome.record(), points=points, latency_limit_us=limit_us,
                        operating_points=OperatingPoints(max=max_point.name, mid=mid_point.name, min=min_point.name),
                        max_under_limit=bool(under), thread_counts=tcs, queue_depths=qds, **extra)
