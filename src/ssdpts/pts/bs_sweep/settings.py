"""The profile keys of `bs-sweep`: declared apart from how it runs, so that validating a profile
(plan, check, show) imports no round loop."""

from __future__ import annotations

from dataclasses import dataclass

from ...settings import BLOCK_SIZE, BLOCK_SIZES, BOOL, MULTIPLE, TestSettings, choice, declared_default, key, list_of


WORKLOADS = ("read", "randread", "write", "randwrite")
STATES = ("fresh", "used")


@dataclass(frozen=True)
class BsSweepSettings(TestSettings):
    iodepth: int = declared_default(TestSettings, "iodepth", 4)
    block_sizes: tuple[int, ...] = key(BLOCK_SIZES, ["512", "1k", "2k", "4k", "8k", "16k", "32k", "64k", "128k",
                                                     "256k", "512k", "1m"], "block sizes swept (below the logical "
                                       "block size: skipped)")
    fresh_fill: bool = key(BOOL, True, "one sequential pass over the active range before the fresh sweep")
    used_block_size: int = key(BLOCK_SIZE, "64k", "block size of the random writes that make the drive used")
    used_multiple: float = key(MULTIPLE, 1.5, "random writes that make the drive used, in times the active range")
    workloads: tuple[str, ...] = key(list_of(choice(*WORKLOADS)), list(WORKLOADS), "workloads swept")
    states: tuple[str, ...] = key(list_of(choice(*STATES)), list(STATES), "drive states swept")
