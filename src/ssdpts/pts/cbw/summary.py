"""The CBW test's typed summary: the shared demand sweep over the composite block-size workload."""

from __future__ import annotations

from dataclasses import dataclass

from ..demand import DemandSummary


@dataclass(kw_only=True)
class CbwSummary(DemandSummary):
    bssplit: list[tuple[int, int]]       # (block size in bytes, % of I/Os), as fio's bssplit
    zones: str                           # fio random_distribution of the access zones
