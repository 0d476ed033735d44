"""The profile keys of `xsr`: declared apart from how it runs, so that validating a profile
(plan, check, show) imports no round loop."""

from __future__ import annotations

from dataclasses import dataclass

from ...settings import DURATION, DURATIONS, Setting, TestSettings, key


GROUP_TIMES = Setting('three durations, e.g. ["8h", "6h", "8h"]', lambda v: DURATIONS.check(v) and len(v) == 3,
                      DURATIONS.parse, DURATIONS.unit)


@dataclass(frozen=True)
class XsrSettings(TestSettings):
    interval: float = key(DURATION, "1m", "one stored throughput and latency sample")
    group_times: tuple[float, float, float] = key(GROUP_TIMES, ["8h", "6h", "8h"],
                                                  "lengths of the three access groups (SEQ, RND, SEQ writes)")
