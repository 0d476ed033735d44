"""The TRIM study's typed summary: the TRIM itself (time, bytes, rate) and RND write/read before and after it."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...targets.filesystem import TrimRecord
from ..spec import Summary

BEFORE, AFTER = "before", "after"


@dataclass
class TrimRound:
    """One round of the RND write and read cells."""

    phase: str                    # BEFORE | AFTER the TRIM
    round: int
    start_s: float                # the cells' run times back to back from the first round, the TRIM at its length
    write_iops: float
    read_iops: float
    write_lat_mean_us: float
    read_lat_mean_us: float


@dataclass
class TrimStudySummary(Summary):
    target: str
    method: str                   # "blkdiscard" (raw device) | "fstrim" (file: truncated, then its file system trimmed)
    trim: TrimRecord
    trim_start_s: float           # on the rounds' clock (start_s)
    block_size: int               # bytes
    cell_runtime_s: float
    filled_bytes: int             # SEQ writes before the first round
    rounds: list[TrimRound] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def of(self, phase: str) -> list[TrimRound]:
        return [r for r in self.rounds if r.phase == phase]

    def level(self, phase: str, metric: str) -> float | None:
        """Mean of `metric` over the rounds before the TRIM; the first round after it (the TRIM effect)."""
        rounds = self.of(phase)
        if not rounds:
            return None
        if phase == AFTER:
            return getattr(rounds[0], metric)
        return sum(getattr(r, metric) for r in rounds) / len(rounds)
