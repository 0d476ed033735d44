"""The Latency test's typed summary: every cell's window averages with per-direction latency statistics."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...targets.purge import PurgeRecord
from ..common import cell_name
from ..results import CellWindow, Latency, SteadyResult
from ..spec import Summary


@dataclass
class LatencySummary(Summary):
    purge: PurgeRecord
    steady: SteadyResult
    cells: dict[str, CellWindow]     # every cell's window averages; read_lat / write_lat: µs, total latency
    block_sizes: list[int]           # bytes, matrix order (inner loop)
    mixes: list[int]                 # read %, matrix order (outer loop)
    notes: list[str] = field(default_factory=list)

    def latency(self, bs: int, read_pct: int, direction: str) -> Latency | None:
        """The latency of one direction ("read" | "write") of one RND cell; None when not measured."""
        c = self.cells.get(cell_name("rnd", bs, read_pct))
        if c is None:
            return None
        return c.read_lat if direction == "read" else c.write_lat
