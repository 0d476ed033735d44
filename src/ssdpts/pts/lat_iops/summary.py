"""The lat-iops study's typed summary: one family of TC x QD points per block size x R/W mix."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..demand import DemandPoint
from ...targets.purge import PurgeRecord
from ..spec import Summary


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

    def family(self, block_size: int, read_pct: int) -> LatIopsFamily | None:
        return next((f for f in self.families if (f.block_size, f.read_pct) == (block_size, read_pct)), None)
