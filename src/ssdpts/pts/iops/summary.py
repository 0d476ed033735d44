"""The IOPS test's typed summary."""

from __future__ import annotations

from dataclasses import dataclass

from ..matrix import MatrixSummary


@dataclass
class IopsSummary(MatrixSummary):
    def iops(self, bs: int, read_pct: int) -> float | None:
        """Window-average IOPS (read + write) of one matrix cell, None when the matrix lacks it."""
        c = self.cell(bs, read_pct)
        return c.iops if c is not None else None
