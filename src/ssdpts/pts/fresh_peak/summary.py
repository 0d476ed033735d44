"""The fresh-out-of-box peak study's typed summary."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...targets.record import PurgeRecord
from ...results import Latency
from ..spec import Summary


@dataclass
class SteadyReference:
    """Steady-state IOPS of the same workload from another test of this run."""

    iops: float
    source: str                # e.g. "IOPS test, RND 4K 0/100, steady state"


@dataclass
class PeakResult:
    rw: str                    # randread | randwrite | read | write
    iops: float
    mib_s: float
    mb_s: float                # MB/s (10^6 bytes/s)
    latency: Latency           # of the measured direction, total latency
    steady: SteadyReference | None = None
    fresh_over_steady: float | None = None


@dataclass
class FreshPeakSummary(Summary):
    purge: PurgeRecord
    block_size: int            # bytes
    threads: int | None
    iodepth: int | None
    runtime_s: float
    state: str = "fresh out of box (right after the purge)"
    results: list[PeakResult] = field(default_factory=list)

    def result(self, rw: str) -> PeakResult | None:
        return next((r for r in self.results if r.rw == rw), None)
