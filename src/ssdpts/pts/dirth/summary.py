"""The DIRTH test's typed summary: the shared demand sweep, at one block size and R/W mix."""

from __future__ import annotations

from dataclasses import dataclass

from ..demand import DemandSummary


@dataclass(kw_only=True)
class DirthSummary(DemandSummary):
    block_size: int              # bytes, random I/O at `read_pct` % reads
