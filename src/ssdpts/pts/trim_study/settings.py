"""The profile keys of `trim-study`: declared apart from how it runs, so that validating a profile
(plan, check, show) imports no round loop."""

from __future__ import annotations

from dataclasses import dataclass

from ...settings import BLOCK_SIZE, POS_INT, TestSettings, key
from ..fill import fill_block_size_key


@dataclass(frozen=True)
class TrimStudySettings(TestSettings):
    block_size: int = key(BLOCK_SIZE, "4k", "block size of the RND write and read cells")
    fill_block_size: int = fill_block_size_key("block size of the SEQ fill before the first round")
    rounds_before: int = key(POS_INT, 3, "rounds of the cells before the TRIM (their mean is the level before)")
    rounds_after: int = key(POS_INT, 5, "rounds of the cells after the TRIM (the first: its effect; the rest: recovery)")
