"""The profile keys of `fresh-peak`: declared apart from how it runs, so that validating a profile
(plan, check, show) imports no round loop."""

from __future__ import annotations

from dataclasses import dataclass

from ...settings import BLOCK_SIZE, TestSettings, choice, key, list_of


WORKLOADS = ("randread", "randwrite", "read", "write")


@dataclass(frozen=True)
class FreshPeakSettings(TestSettings):
    block_size: int = key(BLOCK_SIZE, "4k", "block size of the fresh-out-of-box cells")
    workloads: tuple[str, ...] = key(list_of(choice(*WORKLOADS)), ["randread", "randwrite"], "one cell each, in order")
