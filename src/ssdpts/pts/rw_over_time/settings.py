"""The profile keys of `rw-over-time`: declared apart from how it runs, so that validating a profile
(plan, check, show) imports no round loop."""

from __future__ import annotations

from dataclasses import dataclass

from ...settings import BLOCK_SIZES, DURATION, PCT, TestSettings, key


@dataclass(frozen=True)
class RwOverTimeSettings(TestSettings):
    block_sizes: tuple[int, ...] = key(BLOCK_SIZES, ["2k", "4k", "8k", "16k", "32k", "64k", "128k"],
                                       "block sizes, each from its own purge (below the logical block size: skipped)")
    duration: float = key(DURATION, "4h", "random writes per block size")
    interval: float = key(DURATION, "1m", "one stored throughput sample")
    level_band_pct: float = key(PCT, 10, "time to level off: MB/s within this band (± % of the final level) "
                                         "from then to the end")
