"""The profile keys of `lat-iops`: declared apart from how it runs, so that validating a profile
(plan, check, show) imports no round loop."""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import SsdptsError
from ...settings import (MAX_THREADS, BLOCK_SIZES, BOOL, DURATION, IODEPTH, PCTS, THREADS, Setting, TestSettings,
                         declared_default, integer, key, list_of)
from ...units import parse_duration


ROUNDS = integer(1, 1000, "sweep rounds")
CHART_THREADS = integer(0, MAX_THREADS, "0 or one of thread_counts")
# a duration, or 0 for none (the warm-up and the preconditioning are optional)
DURATION_OR_NONE = Setting(f"0 (none) or {DURATION.what}",
                           lambda v: not isinstance(v, bool) and (parse_duration(v) == 0 or DURATION.check(v)),
                           lambda v: float(parse_duration(v)), "s")


@dataclass(frozen=True)
class LatIopsSettings(TestSettings):
    block_sizes: tuple[int, ...] = key(BLOCK_SIZES, ["4k", "8k"], "block sizes of the random I/O swept")
    mixes: tuple[int, ...] = key(PCTS, [100, 70, 0], "read % of each R/W mix swept")
    thread_counts: tuple[int, ...] = key(list_of(THREADS), [1, 2, 4], "thread counts (TC, fio numjobs) swept")
    queue_depths: tuple[int, ...] = key(list_of(IODEPTH), [1, 2, 4, 8, 16, 32],
                                        "queue depths per thread (QD, fio iodepth) swept")
    cell_runtime: float = declared_default(TestSettings, "cell_runtime", "30s")
    warmup: float = key(DURATION_OR_NONE, "5s", "fio ramp_time before each point's measured part (0: none)")
    rounds: int = key(ROUNDS, 25, "sweep rounds: every point once per round")
    average_rounds: int = key(ROUNDS, 4, "the last rounds averaged into each point (at most `rounds`)")
    wipc_first: bool = key(BOOL, False, "purge, then SNIA WIPC ([wipc]: SEQ 128K writes of 2× the capacity) before "
                                        "the sweep, as seeds 000 and 003")
    precondition_time: float = key(DURATION_OR_NONE, 0, "RND writes at the largest TC/QD before the sweep, after "
                                                        "any WIPC (0: none)")
    chart_threads: int = key(CHART_THREADS, 0, "the thread count of the reviewers' chart (every family a line "
                                               "per statistic); 0: the largest of thread_counts")

    def __post_init__(self):
        if self.chart_threads and self.chart_threads not in self.thread_counts:
            raise SsdptsError(f"tests.lat-iops: chart_threads = {self.chart_threads} is not one of thread_counts "
                              f"{list(self.thread_counts)}; chart a thread count the sweep runs (or 0: the largest)")
        if self.average_rounds > self.rounds:
            raise SsdptsError(f"tests.lat-iops: average_rounds = {self.average_rounds} is more than rounds = "
                              f"{self.rounds}; average at most the rounds that run (lower average_rounds or raise "
                              "rounds)")
