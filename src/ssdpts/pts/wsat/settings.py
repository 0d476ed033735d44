"""The profile keys of `wsat`: declared apart from how it runs, so that validating a profile
(plan, check, show) imports no round loop."""

from __future__ import annotations

from dataclasses import dataclass

from ...settings import DURATION, MULTIPLE, TestSettings, choice, declared_default, key, list_of


# PTS 2.0 WSAT workloads: name -> (rw, block size, read %)
WORKLOADS = {
    "rnd4k-write": ("randwrite", 4096, 0),     # Write Intensive (RND 4KiB RW0): the default
    "oltp": ("randrw", 8192, 65),              # Mixed / OLTP (RND 8KiB RW65)
    "vod": ("rw", 128 * 1024, 90),             # Video on Demand (SEQ 128KiB RW90)
    "metadata": ("rw", 512, 50),               # Meta Data (SEQ 0.5KiB RW50)
    "cbw": ("randrw", 0, 40),                  # Composite Block Size Workload
}


@dataclass(frozen=True)
class WsatSettings(TestSettings):
    max_rounds: int = declared_default(TestSettings, "max_rounds", 1440)
    round_time: float = key(DURATION, "1m", "one round: an interval cut from the continuous job")
    time_limit: float = key(DURATION, "24h", "the job stops after this long")
    capacity_multiple: float = key(MULTIPLE, 4.0, "the job stops after writing this many times the capacity")
    workloads: tuple[str, ...] = key(list_of(choice(*WORKLOADS)), ["rnd4k-write"], "the workloads, one after another")
