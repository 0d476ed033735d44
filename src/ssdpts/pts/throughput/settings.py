"""The profile keys of `throughput`: declared apart from how it runs, so that validating a profile
(plan, check, show) imports no round loop."""

from __future__ import annotations

from dataclasses import dataclass

from ...settings import BLOCK_SIZES, TestSettings, choice, key, list_of


@dataclass(frozen=True)
class ThroughputSettings(TestSettings):
    block_sizes: tuple[int, ...] = key(BLOCK_SIZES, ["1024k"], "SEQ block sizes, each with its own purge and WIPC")
    tracking: tuple[str, ...] = key(list_of(choice("read", "write"), 'a list of directions like ["read", "write"]'),
                                    ["read", "write"], "the bandwidths whose steady state ends the rounds")
