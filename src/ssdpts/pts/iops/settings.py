"""The profile keys of `iops`: declared apart from how it runs, so that validating a profile
(plan, check, show) imports no round loop."""

from __future__ import annotations

from dataclasses import dataclass

from ...settings import POS_INT, TRACK, key
from ..matrix import MatrixSettings


MIN_LOG_MS = 10    # below this fio's averaged log is mostly timer jitter


@dataclass(frozen=True)
class IopsSettings(MatrixSettings):
    interval_cells: tuple[tuple[int, int], ...] = key(
        TRACK, [["4k", 0], ["4k", 100]], "cells whose IOPS and latency are logged per interval in every round "
        "([block size, read %]; the report charts the window's last round: consistency inside a cell)")
    interval_points: int = key(POS_INT, 60, "intervals per logged cell: the log interval is the cell runtime "
                                            f"divided by this, at least {MIN_LOG_MS} ms (fio log_avg_msec)")
