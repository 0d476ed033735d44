"""The profile keys of the demand sweeps (DIRTH, CBW, RWSW), apart from the sweep itself (demand.py): validating a
profile reads them without importing the sweep's records or its cell results."""

from __future__ import annotations

from dataclasses import dataclass

from ..settings import DURATION, IODEPTH, PCT, THREADS, TestSettings, key, list_of


@dataclass(frozen=True)
class DemandSettings(TestSettings):
    """The profile keys of every demand sweep (DIRTH, CBW, RWSW)."""

    thread_counts: tuple[int, ...] = key(list_of(THREADS), [1, 2, 4, 8, 16, 32], "thread counts (TC) swept")
    queue_depths: tuple[int, ...] = key(list_of(IODEPTH), [1, 2, 4, 8, 16, 32], "queue depths (QD) swept")
    precondition_time: float = key(DURATION, "30m", "one preconditioning round at the largest TC/QD (cut into cells)")
    latency_limit: float = key(DURATION, "5ms", "the Max operating point's mean latency limit")
    prewrite_time: float = key(DURATION, "5m", "writes at the largest TC/QD before every sweep round")
    operating_prewrite_time: float = key(DURATION, "60m", "writes at an operating point's TC/QD before its measurement")
    operating_measure_time: float = key(DURATION, "10m", "an operating point's logged measurement")


@dataclass(frozen=True)
class SweepSettings(DemandSettings):
    """[tests.dirth] and [tests.cbw]: a sweep of one operator-chosen R/W mix; each test declares its read_pct."""

    read_pct: int = key(PCT, 65, "read share of the sweep's I/O")
