"""The Latency test's typed summary: every cell's window averages with per-direction latency statistics
(`read_lat` / `write_lat`: µs, total latency, percentiles from the merged window histograms)."""

from __future__ import annotations

from dataclasses import dataclass

from ..matrix import MatrixSummary
from ...results import Latency


@dataclass
class LatencySummary(MatrixSummary):
    def latency(self, bs: int, read_pct: int, direction: str) -> Latency | None:
        """The latency of one direction ("read" | "write") of one matrix cell; None when not measured."""
        c = self.cell(bs, read_pct)
        if c is None:
            return None
        return c.read_lat if direction == "read" else c.write_lat
