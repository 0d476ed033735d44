"""The profile keys of `purge-study`: declared apart from how it runs, so that validating a profile
(plan, check, show) imports no round loop."""

from __future__ import annotations

from dataclasses import dataclass

from ...settings import DURATION, MULTIPLE, POS_INT, TestSettings, choice, key, list_of


METHODS = ("purge", "trim", "zero-fill", "none")


@dataclass(frozen=True)
class PurgeStudySettings(TestSettings):
    methods: tuple = key(list_of(choice(*METHODS), f"a list of methods from {', '.join(METHODS)}"),
                         list(METHODS), "the methods compared, in this order")
    dirty_multiple: float = key(MULTIPLE, 1.0, "SEQ writes of this many capacities before every method")
    dirty_time: float = key(DURATION, "30s", "then RND 4K writes for this long (the used state)")
    burst_cells: int = key(POS_INT, 5, "RND 4K write cells after every method")
    burst_time: float = key(DURATION, "5s", "length of one burst cell")
