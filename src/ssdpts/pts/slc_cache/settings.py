"""The profile keys of `slc-cache`: declared apart from how it runs, so that validating a profile
(plan, check, show) imports no round loop."""

from __future__ import annotations

from dataclasses import dataclass

from .steps import DEFAULT_MIN_DROP, DEFAULT_MIN_POINTS
from ...settings import (ACTIVE_RANGE, BLOCK_SIZE, DURATION, FRACTION, PCT, POS_INT, Setting, TestSettings, integer,
                         key, list_of)


FILL_PCT = Setting("a fill level, % of the capacity from 0 to below 100", lambda v: PCT.check(v) and v < 100,
                   float, "%")


@dataclass(frozen=True)
class SlcCacheSettings(TestSettings):
    block_size: int = key(BLOCK_SIZE, "1m", "block size of the sequential write")
    interval: float | None = key(DURATION, None, "one stored throughput sample (default: automatic, from the "
                                                  "capacity: resolution.py)")
    time_limit: float = key(DURATION, "24h", "the write stops after this long")
    capacity_percent: float = key(ACTIVE_RANGE, 100, "share of the capacity written")
    min_drop: float = key(FRACTION, DEFAULT_MIN_DROP, "a throughput drop of at least this share ends the cache")
    min_points: int = key(POS_INT, DEFAULT_MIN_POINTS, "intervals a level must last to count")
    # seed 000: "as free blocks run out the SLC cache must be released": the cache measured again after
    # X % of the drive was written (purge, fill, idle, then the same sequential probe)
    fill_levels: tuple | None = key(list_of(FILL_PCT, "a list of fill levels like [0, 50, 80] (% of the capacity, "
                                                      "each 0 to below 100)"), None,
                                    "re-measure the cache after writing each of these shares of the drive")
    fill_idle: float = key(DURATION, "60s", "idle between a fill and its cache probe (the drive folds its cache)")
    bits_per_cell: int | None = key(integer(2, 4, "2 MLC, 3 TLC, 4 QLC"), None,
                                    "bits per native cell, for the cache 'in native terms' (sim: from its preset)")
