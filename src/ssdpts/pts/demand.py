"""Demand intensity: the TC x QD sweep shared by DIRTH and CBW (latency vs IOPS curves).

Procedure (PTS 2.0 as ADATA's SSS-PTS-TEST runs it; docs/conformance.md gives each rule's source):
1. Purge.
2. Preconditioning to steady state in rounds: each round is `precondition_time` (30 min) of the test's
   access pattern as 100 % writes at the largest TC/QD (TC32/QD32), cut into `cell_runtime` (1 min)
   cells; steady state is judged on the first cell of each round; at most `max_rounds` (25).
3. Sweep rounds until the largest point's IOPS is steady: each round starts with a `prewrite_time`
   (5 min) write pre-write at the largest TC/QD, then every TC x QD point (largest demand first), 1 min each.
4. Operating points from the measurement window: Max = the highest IOPS with mean latency under the
   limit (5 ms), Min = TC1/QD1 (the smallest OIO), Mid = the point whose IOPS is closest to
   (Max + Min) / 2. Each then gets its own `operating_prewrite_time` (60 min) write pre-write at its
   TC/QD and a logged `operating_measure_time` (10 min) measurement at the test's mix, whose merged
   histograms are the response-time histograms.

Shared code, not a test: the `dirth` and `cbw` packages call `sweep` (and `plan`) with their own cells and
summary type; run and plan build their cells from the same functions (`sweep_cells`, `operating_segments`).
The sweep engine itself (the TC x QD grid, point naming, a point's window averages: `grid`, `point_cells`,
`window_points`) is shared with `lat-iops`, the reviewers' sweep without preconditioning or operating points.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, ClassVar, Sequence, TypeVar

from ..engines.results import CellResult, merge_bins
from ..targets.record import PurgeRecord
from ..workload import Workload
from ..results import CellWindow, Latency, SteadyResult, TrackerKey
from .demand_settings import DemandSettings, SweepSettings  # noqa: F401  (still importable from here)
from .spec import Summary

if TYPE_CHECKING:     # the sweep's records and settings are read without the round loop (show, plan's checks)
    from .context import TestContext
    from .plan import Phase, TestPlan

OPERATING_POINTS = ("max", "mid", "min")

# make_cell(name, threads=, iodepth=, read_pct=?, runtime_s=?, log_interval_ms=?) -> the test's cell
MakeCell = Callable[..., Workload]


def latency_stat(lat: Latency | None, stat: str) -> float | None:
    """One statistic of a direction's latency in µs: "mean", "max" or a percentile such as "99.99"."""
    if lat is None:
        return None
    return lat.mean_us if stat == "mean" else lat.max_us if stat == "max" else lat.p(stat)


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


@dataclass
class OperatingMeasurement:
    """One operating point's own pre-write (writes at its TC/QD) and logged measurement (the test's mix)."""

    point: str                   # the sweep point it was chosen from
    tc: int
    qd: int
    prewrite_iops: list[float]   # per pre-write cell
    prewrite_seconds: float      # fio runtime of the pre-write, all cells
    measure_seconds: float       # fio runtime of the measurement, all cells
    measure_ios: int             # reads + writes of the measurement
    iops: float                  # measure_ios / measure_seconds
    lat_mean_us: float | None    # I/O-weighted mean over the measurement; None without I/Os
    lat_max_us: float
    histogram_ios: dict[str, int]   # "read" / "write": I/Os in the merged fio json+ histograms


@dataclass(kw_only=True)
class DemandSummary(Summary):
    """What DIRTH and CBW share; each test's summary adds what describes its access pattern."""

    SCHEMA_VERSION = 2           # 2: preconditioning rounds, operating-point measurements
    # what the preconditioning and every pre-write run at their TC/QD (PTS DIRTH/CBW: the pattern as writes)
    PREWRITE: ClassVar[str] = "writes"

    purge: PurgeRecord
    preconditioning: SteadyResult                # phase "pc": write rounds at the largest TC/QD
    steady: SteadyResult                         # phase "": sweep rounds, tracked on the largest point
    points: list[DemandPoint]                    # largest TC first, then largest QD first
    latency_limit_us: float
    operating_points: OperatingPoints
    operating_measurements: dict[str, OperatingMeasurement]   # "max" / "mid" / "min"
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


def grid(thread_counts: Sequence[int], queue_depths: Sequence[int]) -> tuple[list[int], list[int]]:
    """The sweep's TCs and QDs, each once, largest first (the order points run and are listed in)."""
    return sorted(set(thread_counts), reverse=True), sorted(set(queue_depths), reverse=True)


def point_cells(prefix: str, tcs: Sequence[int], qds: Sequence[int], make_cell: MakeCell) -> list[Workload]:
    """Every TC x QD point's cell, named `point_name`, in grid order (largest demand first)."""
    return [make_cell(point_name(prefix, tc, qd), threads=tc, iodepth=qd) for tc in tcs for qd in qds]


def window_points(window: dict[str, CellWindow], prefix: str, tcs: Sequence[int],
                  qds: Sequence[int]) -> list[DemandPoint]:
    """The points' measurement-window averages (window_summary of the sweep rounds), in grid order."""
    points = []
    for tc in tcs:
        for qd in qds:
            s = window[point_name(prefix, tc, qd)]
            points.append(DemandPoint(tc=tc, qd=qd, oio=tc * qd, name=point_name(prefix, tc, qd), iops=s.iops,
                                      lat_mean_us=s.lat_mean_us, lat_max_us=s.lat_max_us,
                                      read_lat=s.read_lat, write_lat=s.write_lat,
                                      usr_cpu=s.usr_cpu, sys_cpu=s.sys_cpu))
    return points


def cell_count(ctx: TestContext, seconds: float) -> int:
    """How many `cell_runtime` cells make up `seconds` (at least one)."""
    return max(1, round(seconds / ctx.settings.cell_runtime))


@dataclass
class SweepCells:
    """The cells of steps 2 and 3, as run() submits them."""

    thread_counts: list[int]     # largest first
    queue_depths: list[int]      # largest first
    preconditioning: list[Workload]   # one round: writes at the largest TC/QD, cell_runtime each
    prewrite: Workload           # first cell of every sweep round
    points: list[Workload]       # every TC x QD point, largest demand first

    @property
    def round(self) -> list[Workload]:
        return [self.prewrite] + self.points

    @property
    def pc_tracker(self) -> TrackerKey:
        return TrackerKey(self.preconditioning[0].name, "iops")   # ADATA: the first minute of each round

    @property
    def sweep_tracker(self) -> TrackerKey:
        return TrackerKey(self.points[0].name, "iops")


def prewrite_mix(writes_only: bool) -> dict:
    """make_cell's mix for preconditioning and pre-writes: 100 % writes, or (False) the test's own mix."""
    return {"read_pct": 0} if writes_only else {}


def sweep_cells(ctx: TestContext, prefix: str, make_cell: MakeCell, writes_only: bool = True) -> SweepCells:
    tcs, qds = grid(ctx.settings.thread_counts, ctx.settings.queue_depths)
    points = point_cells(prefix, tcs, qds, make_cell)
    mix = prewrite_mix(writes_only)
    pc = [make_cell(f"{prefix}_pc{i + 1:02d}", threads=tcs[0], iodepth=qds[0], **mix)
          for i in range(cell_count(ctx, ctx.settings.precondition_time))]
    prewrite = make_cell(f"{prefix}_prewrite", threads=tcs[0], iodepth=qds[0], runtime_s=ctx.settings.prewrite_time,
                         **mix)
    return SweepCells(tcs, qds, pc, prewrite, points)


def operating_segments(ctx: TestContext, prefix: str, make_cell: MakeCell, chosen: dict[str, tuple[int, int]],
                       writes_only: bool = True) -> list[tuple[str, list[Workload]]]:
    """Max -> Mid -> Min (chosen: op -> (TC, QD)): per point its write pre-write, then its logged measurement,
    as phases 'op=K/prewrite' and 'op=K/measure' of one chained sequence."""
    n_pre = cell_count(ctx, ctx.settings.operating_prewrite_time)
    n_meas = cell_count(ctx, ctx.settings.operating_measure_time)
    log_ms = max(1, min(1000, int(ctx.settings.cell_runtime * 100)))   # >= 10 IOPS samples per cell, at most 1 per s
    segments = []
    for k in OPERATING_POINTS:
        tc, qd = chosen[k]
        segments.append((f"op={k}/prewrite", [make_cell(f"{prefix}_{k}_prewrite{i + 1:02d}", threads=tc, iodepth=qd,
                                                        **prewrite_mix(writes_only)) for i in range(n_pre)]))
        segments.append((f"op={k}/measure", [make_cell(f"{prefix}_{k}_measure{i + 1:02d}", threads=tc, iodepth=qd,
                                                       log_interval_ms=log_ms) for i in range(n_meas)]))
    return segments


def sweep(ctx: TestContext, prefix: str, make_cell: MakeCell, summary_type: type[S], writes_only: bool = True,
          **extra) -> S:
    """Run the procedure with the test's cells; its summary_type(**shared results, **extra). writes_only=False:
    preconditioning and pre-writes run the test's own mix (summary_type.PREWRITE says so)."""
    from .windows import window_summary     # here, not above: reading a sweep's records needs no store rounds
    sc = sweep_cells(ctx, prefix, make_cell, writes_only)
    purge = ctx.purger.purge()
    pc = ctx.rounds.run_to_steady_state("pc", sc.preconditioning, [sc.pc_tracker])
    outcome = ctx.rounds.run_to_steady_state("", sc.round, [sc.sweep_tracker])
    points = window_points(window_summary(outcome.rounds, outcome.window_rounds), prefix, sc.thread_counts,
                           sc.queue_depths)
    limit_us = ctx.settings.latency_limit * 1e6
    under = [p for p in points if p.lat_mean_us < limit_us]
    max_point = max(under or points, key=lambda p: p.iops)
    min_point = min(points, key=lambda p: p.oio)
    mid_target = (max_point.iops + min_point.iops) / 2
    mid_point = min(points, key=lambda p: abs(p.iops - mid_target))
    chosen = {"max": max_point, "mid": mid_point, "min": min_point}
    rounds = ctx.rounds.run_segments(operating_segments(ctx, prefix, make_cell,
                                                 {k: (p.tc, p.qd) for k, p in chosen.items()}, writes_only))
    measured = {k: _measurement(p, [c for r in rounds[f"op={k}/prewrite"] for c in r.cells],
                                [c for r in rounds[f"op={k}/measure"] for c in r.cells])
                for k, p in chosen.items()}
    return summary_type(purge=purge, preconditioning=pc.record(), steady=outcome.record(), points=points,
                        latency_limit_us=limit_us,
                        operating_points=OperatingPoints(max=max_point.name, mid=mid_point.name, min=min_point.name),
                        operating_measurements=measured,
                        max_under_limit=bool(under), thread_counts=sc.thread_counts, queue_depths=sc.queue_depths,
                        **extra)


def _measurement(point: DemandPoint, pre: Sequence[CellResult], meas: Sequence[CellResult]) -> OperatingMeasurement:
    ios = sum(c.read.ios + c.write.ios for c in meas)
    secs = sum(c.runtime_ms for c in meas) / 1000
    return OperatingMeasurement(
        point=point.name, tc=point.tc, qd=point.qd,
        prewrite_iops=[c.iops for c in pre], prewrite_seconds=sum(c.runtime_ms for c in pre) / 1000,
        measure_seconds=secs, measure_ios=ios, iops=ios / secs if secs else 0.0,
        lat_mean_us=(sum(c.lat_mean_ns * (c.read.ios + c.write.ios) for c in meas) / ios / 1000 if ios else None),
        lat_max_us=max((c.lat_max_ns for c in meas), default=0.0) / 1000,
        histogram_ios={d: sum(merge_bins(getattr(c, d).bins for c in meas if getattr(c, d).bins).values())
                       for d in ("read", "write")})


def plan(ctx: TestContext, test: str, prefix: str, make_cell: MakeCell, pattern: str,
         prewrite: str = DemandSummary.PREWRITE) -> TestPlan:
    """Purge, preconditioning rounds, sweep rounds, then the three operating points (fixed durations).

    The operating points' TC/QD come from the sweep's results, so the plan shows Max and Mid at the largest
    TC/QD and Min at the smallest; their durations do not depend on that choice."""
    from .plan import TestPlan, once, purge_phase, steady_loop
    writes_only = prewrite == DemandSummary.PREWRITE
    sc = sweep_cells(ctx, prefix, make_cell, writes_only)
    big, small = (sc.thread_counts[0], sc.queue_depths[0]), (sc.thread_counts[-1], sc.queue_depths[-1])
    segments = operating_segments(ctx, prefix, make_cell, {"max": big, "mid": big, "min": small}, writes_only)
    ops: Phase = once("sequence", f"Max / Mid / Min operating points, each a pre-write ({prewrite}) at its TC/QD then a "
                      "logged measurement (TC/QD chosen from the sweep: Max = highest IOPS under the latency limit, "
                      "Min = smallest OIO, Mid = IOPS closest to their mean; shown here at the largest / smallest)",
                      [c for _, cells in segments for c in cells])
    return TestPlan(test, [
        purge_phase(ctx),
        steady_loop(ctx, sc.preconditioning, f"preconditioning (phase pc): rounds of {len(sc.preconditioning)} × "
                    f"{pattern} {prewrite} at TC{big[0]}/QD{big[1]}, tracking {sc.pc_tracker.label}"),
        steady_loop(ctx, sc.round, f"sweep rounds: a pre-write ({prewrite}) at TC{big[0]}/QD{big[1]}, then {len(sc.points)} "
                    f"TC × QD points of {pattern}, largest demand first, tracking {sc.sweep_tracker.label}"),
        ops])
