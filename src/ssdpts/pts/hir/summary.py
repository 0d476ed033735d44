"""The HIR test's typed summary: the preconditioning loop and, per wait state, the bursts and idle."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...targets.record import PurgeRecord
from ...results import Latency, SteadyResult
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
    # write latency (version 3 on; None in older runs), over the same bursts as the IOPS means: AB bursts
    # after an idle, C bursts after the first; percentiles from the bursts' merged fio histograms
    ab_latency: Latency | None = None
    c_latency: Latency | None = None
    ab_burst_latency: list[Latency | None] = field(default_factory=list)   # every AB burst, in order
    c_burst_latency: list[Latency | None] = field(default_factory=list)    # every C burst, in order


@dataclass
class HirPreconditioning:
    """What ran before the wait states (after the purge)."""

    wipc_multiple: float          # SEQ writes of this many times the capacity first (0: none, as PTS implementations)
    wipc_block_size: int          # bytes, the WIPC's block size
    round_s: float                # one round of RND 4K writes (precondition_time)
    fixed_length: bool            # one round of a set length, as the reviews run it (120/360/600 min), not steady state
    max_rounds: int               # the round limit (1 when fixed_length)
    rounds_run: int
    steady_reached: bool

    def describe(self) -> str:
        wipc = (f"WIPC: SEQ {self.wipc_block_size // 1024} KiB writes of {self.wipc_multiple:g}× the capacity, then "
                if self.wipc_multiple else "no WIPC; ")
        if self.fixed_length:
            rnd = (f"fixed-length preconditioning of {span(self.rounds_run * self.round_s)} of RND 4K writes "
                   "(the seeds' method), not steady state: non-conformant")
        else:
            rnd = (f"RND 4K writes in rounds of {span(self.round_s)} until steady state: "
                   + ("reached" if self.steady_reached else "NOT reached") + f" after {self.rounds_run} rounds")
        return wipc + rnd


def span(seconds: float) -> str:
    """Minutes as the reviews state them ("600 min"), seconds below a minute."""
    return f"{seconds / 60:g} min" if seconds >= 60 else f"{seconds:g} s"


@dataclass
class HirSummary(Summary):
    SCHEMA_VERSION = 3                       # 2: preconditioning in rounds of cells; 3: burst latency, PC record
    READS_SINCE_VERSION = 2                  # a version-2 summary reads with no latency and no PC record

    purge: PurgeRecord
    steady: SteadyResult                     # the preconditioning: RND 4K writes to steady state (phase "pc")
    preconditioning_iops: list[float]        # per preconditioning round: its last (tracked) cell
    preconditioning_cells_per_round: int     # cell_runtime cells per preconditioning round
    burst_s: float
    repetitions: int
    wait_states: dict[str, WaitState]        # "5s", "10s" ... in execution order
    notes: list[str] = field(default_factory=list)
    bursts_latency: Latency | None = None    # every burst (AB and C) of every wait state together (version 3 on)
    preconditioning: HirPreconditioning | None = None   # what ran before the wait states (version 3 on)
    # the load every burst ran at (None: stored before it was recorded): the burst latency is mostly
    # queueing at a deep load, so a latency bound is judged at the load it names
    threads: int | None = None
    iodepth: int | None = None

    def load(self) -> str:
        """'TC8/QD16 (128 I/Os outstanding)', or '' when not recorded."""
        if self.threads is None or self.iodepth is None:
            return ""
        return f"TC{self.threads}/QD{self.iodepth} ({self.threads * self.iodepth} I/Os outstanding)"
