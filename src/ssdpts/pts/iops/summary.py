"""The IOPS test's typed summary."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...targets.purge import PurgeRecord
from ..results import CellWindow, SteadyResult
from ..spec import Summary


@dataclass
class IopsSummary(Summary):
    purge: PurgeRecord
    steady: SteadyResult
    cells: dict[str, CellWindow]                 # every cell's measurement-window averages
    block_sizes: list[int]                       # bytes, matrix order (inner loop)
    mixes: list[int]                             # read %, matrix order (outer loop)
    notes: list[str] = field(default_factory=list)

    def iops(self, bs: int, read_pct: int) -> float | None:
        """Window-average IOPS (read + write) of one matrix cell, None when the matrix lacks it."""
        for c in self.cells.values():
            rp = c.workload.read_pct if c.workload.read_pct is not None else (
                100 if c.workload.rw in ("read", "randread") else 0)
            if c.workload.bs == bs and rp == read_pct:
                return c.iops
        return None
