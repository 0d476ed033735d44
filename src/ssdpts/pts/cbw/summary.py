"""The CBW test's typed summary: the shared demand sweep over the composite block-size workload."""

from __future__ import annotations

from dataclasses import dataclass

from ..demand import DemandSummary


@dataclass
class BlockSizes:
    """The target's block sizes the alignment was chosen from (bytes)."""

    logical: int
    physical: int


@dataclass(kw_only=True)
class CbwSummary(DemandSummary):
    bssplit: list[tuple[int, int]]       # (block size in bytes, % of I/Os), as fio's bssplit
    zones: str                           # fio random_distribution of the access zones
    alignment_bytes: int                 # fio blockalign: 4 KiB or the physical block, whichever is larger
    block_sizes_bytes: BlockSizes
