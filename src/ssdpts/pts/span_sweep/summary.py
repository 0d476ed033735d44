"""The span sweep's typed summary: per span its bytes and the RND read (and write) figures over it."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...results import CellWindow
from ..spec import Summary


@dataclass
class SpanPoint:
    span_bytes: int               # the LBA span the random I/O covers, from the start of the target
    span_fraction: float          # of the capacity
    read: CellWindow
    write: CellWindow | None = None   # when the sweep also ran RND writes

    @property
    def read_iops(self) -> float:
        return self.read.iops

    @property
    def read_lat_mean_us(self) -> float:
        return self.read.lat_mean_us

    @property
    def read_p99_us(self) -> float | None:
        return self.read.read_lat.p("99") if self.read.read_lat else None

    @property
    def write_iops(self) -> float | None:
        return self.write.iops if self.write else None


@dataclass
class SpanSweepSummary(Summary):
    target: str
    capacity_bytes: int
    block_size: int               # bytes
    filled_bytes: int             # SEQ written over the largest span before the sweep (0: no fill)
    cell_runtime_s: float
    points: list[SpanPoint] = field(default_factory=list)   # ascending span
    notes: list[str] = field(default_factory=list)

    @property
    def read_iops_drop(self) -> float | None:
        """Read IOPS at the largest span over read IOPS at the smallest (1.0: no span effect)."""
        if len(self.points) < 2 or not self.points[0].read_iops:
            return None
        return self.points[-1].read_iops / self.points[0].read_iops
