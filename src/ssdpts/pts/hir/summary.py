"""The HIR test's typed summary: the preconditioning loop and, per wait state, the bursts and idle."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...targets.purge import PurgeRecord
from ..results import SteadyResult
from ..spec import Summary


@dataclass
class WaitState:
    """One wait state: AB (bursts after idle) then C (continuous baseline)."""

    idle_s: float                      # the idle set before each AB burst
    bursts: int                        # AB bursts
    ab_iops_mean: float                # mean IOPS of the AB bursts that follow an idle
    c_iops_mean: float                 # mean IOPS of the continuous bursts (after the first)
    recovery_ratio: float | None       # ab_iops_mean / c_iops_mean
    ab_iops: list[float]               # every AB burst, in order
    c_iops: list[float]                # every C burst, in order
    burst_seconds: list[float]         # fio runtime of every burst (AB, then C)
    idle_measured_ms: list[float]      # every idle the engine measured (between AB bursts, before C)


@dataclass
class HirSummary(Summary):
    SCHEMA_VERSION = 2                       # 2: preconditioning in rounds of several cells

    purge: PurgeRecord
    steady: SteadyResult                     # the preconditioning: RND 4K writes to steady state (phase "pc")
    preconditioning_iops: list[float]        # per preconditioning round: its last (tracked) cell
    preconditioning_cells_per_round: int     # cell_runtime cells per preconditioning round
    burst_s: float
    repetitions: int
    wait_states: dict[str, WaitState]        # "5s", "10s" ... in execution order
    notes: list[str] = field(default_factory=list)
