"""The profile keys of `op-study`: declared apart from how it runs, so that validating a profile
(plan, check, show) imports no round loop."""

from __future__ import annotations

from dataclasses import dataclass

from ...settings import ACTIVE_RANGE, BLOCK_SIZE, BOOL, MULTIPLE, TestSettings, key, list_of


@dataclass(frozen=True)
class OpStudySettings(TestSettings):
    block_size: int = key(BLOCK_SIZE, "4k", "block size of the random writes")
    precondition_multiple: float = key(MULTIPLE, 2.0, "random-write preconditioning, in times the active range")
    wipc_first: bool = key(BOOL, True, "SEQ preconditioning over the active range before the random writes")
    active_ranges: tuple[float, ...] = key(list_of(ACTIVE_RANGE, "a list of percentages like [100, 75, 50, 25]"),
                                           [100, 75, 50, 25], "active ranges, each from its own purge")
