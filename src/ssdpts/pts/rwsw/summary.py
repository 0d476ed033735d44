"""The RWSW test's typed summary: the shared demand sweep of the applied workload, and the replay of the capture."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from ..demand import DemandSummary
from ...results import Latency
from .composite import Composite


@dataclass
class WorkloadSource:
    """The workload file the test applied."""

    given: str                   # as the profile named it (a path or a shipped workload's name)
    path: str                    # the file read
    kind: str                    # how it was captured: tracefs | blktrace | fio-iolog
    device: str                  # what was captured
    duration_s: float
    step_s: float
    ios: int                     # I/Os in the capture
    streams: int                 # IO streams in the capture
    queue_depth_mean: float      # the device's mean queue depth over the capture


@dataclass
class ReplayStep:
    """One captured time step, replayed as one cell: its own top streams at their shares and its mean QD."""

    step: int                    # 1-based, in capture order
    start_s: float               # into the capture
    captured_s: float            # the step's length in the capture
    captured_ios: int
    captured_iops: float
    captured_qd_mean: float
    qd: int                      # the replayed cell's iodepth (TC 1): the step's mean QD, rounded, at least 1
    idle_before_s: float         # device idle before the cell: the capture's idle steps before it, scaled
    composite: Composite         # the step's streams as run
    runtime_s: float             # fio runtime of the replayed cell
    iops: float
    lat_mean_us: float
    read_lat: Latency | None
    write_lat: Latency | None
    delivered_pct: dict[str, float] | None   # each stream's share of the replayed I/Os, when fio's counts tell


@dataclass(kw_only=True)
class RwswSummary(DemandSummary):
    SCHEMA_VERSION = 1
    PREWRITE: ClassVar[str] = "applied-workload I/O"

    workload: WorkloadSource
    applied: Composite           # the top streams of the whole capture: preconditioning, sweep, operating points
    replay: list[ReplayStep] = field(default_factory=list)   # empty when replay = false
    replay_time_scale: float = 1.0
