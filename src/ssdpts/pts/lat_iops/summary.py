"""The lat-iops study's typed summary: one family of TC x QD points per block size x R/W mix."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...targets.record import PurgeRecord
from ...units import bs_label
from ..demand import DemandPoint, latency_stat
from ..spec import Summary

# the statistics of the reviewers' charts (seed 003: "99%, 99,99% and the mean ... vs IOPS for all blocks and
# R/W ratios", at a chosen thread count): name shown -> the key of Latency
STATISTICS = {"mean": "mean", "p99": "99", "p99.9": "99.9", "p99.99": "99.99", "max": "max"}
# a QD step that adds less than this share of IOPS while latency still grows is past saturation
SATURATION_GAIN = 0.05


@dataclass
class LatIopsFamily:
    """One block size x R/W mix: every TC x QD point, averaged over the window rounds."""

    block_size: int              # bytes, random I/O
    read_pct: int                # % reads (100: reads only, 0: writes only)
    prefix: str                  # point names are PREFIX_tcN_qdM
    points: list[DemandPoint]    # largest TC first, then largest QD first

    @property
    def directions(self) -> list[str]:
        """The directions this mix has: "read", "write" or both (a mixed cell is charted per direction)."""
        return [d for d, present in (("read", self.read_pct > 0), ("write", self.read_pct < 100)) if present]

    def point(self, tc: int, qd: int) -> DemandPoint | None:
        return next((p for p in self.points if (p.tc, p.qd) == (tc, qd)), None)

    @property
    def label(self) -> str:
        """"RND 4K 70/30": the family as the reviewers' legends name it."""
        return f"RND {bs_label(self.block_size)} {self.read_pct}/{100 - self.read_pct}"


@dataclass(frozen=True)
class CurvePoint:
    qd: int
    iops: float                  # read + write IOPS of the point
    latency_us: float            # the curve's statistic of its direction


@dataclass(frozen=True)
class FamilyCurve:
    """One line of the reviewers' chart: a family's direction at one thread count, queue depth rising."""

    family: str                  # "RND 4K 70/30"
    block_size: int
    read_pct: int
    direction: str               # "read" or "write" (a mixed family gives a line for each)
    tc: int
    statistic: str               # a key of STATISTICS
    points: list[CurvePoint]     # QD ascending
    saturated_from_qd: int | None   # the first QD whose step added < SATURATION_GAIN IOPS while latency grew

    @property
    def label(self) -> str:
        return f"{self.family} {self.direction}"


@dataclass
class Preconditioning:
    """One preconditioning write before the sweep, as it ran (no steady-state judgement)."""

    what: str                    # e.g. "WIPC: SEQ 128K writes, 2× the capacity"
    block_size: int
    threads: int
    iodepth: int
    seconds: float               # fio runtime
    bytes_written: int


@dataclass(kw_only=True)
class LatIopsSummary(Summary):
    families: list[LatIopsFamily]          # block size order of the profile, then mix order
    thread_counts: list[int]               # largest first
    queue_depths: list[int]                # largest first
    rounds: int                            # sweep rounds run (every point once per round)
    window_rounds: list[int]               # the rounds averaged: the last `average_rounds`
    cell_runtime_s: float                  # measured part of a point (fio runtime after the warm-up)
    warmup_s: float                        # fio ramp_time per point, not measured (0: none)
    purge: PurgeRecord | None              # None: not purged (wipc_first = false)
    preconditioning: list[Preconditioning]  # in order; empty: the sweep ran on the drive as it was
    notes: list[str] = field(default_factory=list)

    chart_threads: int = 0                 # the TC of the reviewers' chart (0: the largest swept)

    def family(self, block_size: int, read_pct: int) -> LatIopsFamily | None:
        return next((f for f in self.families if (f.block_size, f.read_pct) == (block_size, read_pct)), None)

    @property
    def chart_tc(self) -> int:
        """The thread count the reviewers' chart draws: the chosen one, else the largest swept."""
        return self.chart_threads if self.chart_threads in self.thread_counts else max(self.thread_counts)

    def curves(self, statistic: str, tc: int | None = None) -> list[FamilyCurve]:
        """The reviewers' latency-vs-IOPS chart of one statistic: every family x direction as a line at one
        thread count (default `chart_tc`), queue depth rising along it."""
        tc = self.chart_tc if tc is None else tc
        out = []
        for f in self.families:
            at_tc = sorted((p for p in f.points if p.tc == tc), key=lambda p: p.qd)
            for d in f.directions:
                pts = [CurvePoint(p.qd, p.iops, v) for p in at_tc
                       if (v := latency_stat(p.read_lat if d == "read" else p.write_lat, STATISTICS[statistic]))
                       is not None]
                if pts:
                    out.append(FamilyCurve(f.label, f.block_size, f.read_pct, d, tc, statistic, pts,
                                           saturated_from(pts)))
        return out


def saturated_from(points: list[CurvePoint]) -> int | None:
    """The first QD at which IOPS stopped growing (less than SATURATION_GAIN more than the QD before) while
    latency grew: from there the line runs near-vertically at the drive's limit."""
    for a, b in zip(points, points[1:]):
        if b.iops < a.iops * (1 + SATURATION_GAIN) and b.latency_us > a.latency_us:
            return b.qd
    return None
