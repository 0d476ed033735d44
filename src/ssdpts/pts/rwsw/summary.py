"""The RWSW test's typed summary: the shared demand sweep of the applied workload, and the replay of the capture."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from ..demand import DemandSummary
from ...engines.stimulus import OVERLAP_SHARE
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
    """One captured time step, replayed as one cell: one job per top stream at its captured IOPS."""

    step: int                    # 1-based, in capture order
    start_s: float               # into the capture
    captured_s: float            # the step's length in the capture
    captured_ios: int
    captured_iops: float
    captured_qd_mean: float
    qd: int                      # the replayed cell's iodepth: its jobs' together (stored before 2026-11: mean QD)
    idle_before_s: float         # device idle before the cell: the capture's idle steps before it, scaled
    composite: Composite         # the step's streams as run
    runtime_s: float             # fio runtime of the replayed cell
    iops: float
    lat_mean_us: float
    read_lat: Latency | None
    write_lat: Latency | None
    delivered_pct: dict[str, float] | None   # each stream's share of the replayed I/Os, from fio's counts per job
    # each stream's share of the I/Os the device completed in the cell (block layer; None: not measured, or a
    # stream its per-direction counts cannot tell apart)
    measured_pct: dict[str, float | None] | None = None
    qd_per_stream: int = 0       # each stream job's iodepth: the step's 99th-percentile QD (0: stored before)
    rates: dict[str, int] = field(default_factory=dict)   # fio rate_iops of each stream's job ({}: unthrottled)
    threads: int = 0             # tasks that issued the step's I/O in the capture (0: not captured: one each)
    # the cell's window at the device (its block-layer record), how long the cell before ran on into it, and how long
    # this cell ran on into the next step's (engines/stimulus.py overlap_ms and ran_on_ms: end reports, fio's teardown
    # included); 0: not measured, none, or stored before
    window_ms: float = 0.0
    overlap_before_ms: float = 0.0
    overlap_after_ms: float = 0.0

    @property
    def device_mixed(self) -> bool:
        """The device's record of the step is mixed with a neighbour's: the cell before ran on into its window, or
        the step into the next one's, for more than OVERLAP_SHARE of it (the block layer's counts of the window
        then hold the neighbour's I/O, or lack the step's own tail): its measured shares are not the step's."""
        return self.beyond_share(self.overlap_before_ms) or self.beyond_share(self.overlap_after_ms)

    def beyond_share(self, overlap_ms: float) -> bool:
        """An overlap of the step's measured window longer than OVERLAP_SHARE of it."""
        return self.window_ms > 0 and overlap_ms > OVERLAP_SHARE * self.window_ms

    @property
    def iops_error_pct(self) -> float | None:
        """Replayed IOPS against the captured, %."""
        return 100 * (self.iops - self.captured_iops) / self.captured_iops if self.rates and self.captured_iops \
            else None


@dataclass
class TraceReplay:
    """The kept trace (capture --keep-trace) replayed I/O for I/O with fio's read_iolog, as one cell."""

    trace: str                   # the trace file replayed
    captured_ios: int            # reads and writes in the capture (the trace holds each of them)
    captured_bytes: int
    captured_s: float
    rate_pct: int                # fio replay_time_scale: the captured rate's %
    iodepth: int                 # fio's cap on each thread's I/Os in flight: the capture's deepest queue
    runtime_s: float
    fio_ios: int                 # fio's count of the I/Os it replayed
    device_ios: int | None       # the block layer's count during the cell (None: not measured)
    device_bytes: int | None
    iops: float
    lat_mean_us: float
    read_lat: Latency | None
    write_lat: Latency | None
    threads: int = 1             # fio threads: the trace's issuing tasks, each replaying its own I/Os


@dataclass(kw_only=True)
class RwswSummary(DemandSummary):
    SCHEMA_VERSION = 1
    PREWRITE: ClassVar[str] = "applied-workload I/O"

    workload: WorkloadSource
    applied: Composite           # the top streams of the whole capture: preconditioning, sweep, operating points
    replay: list[ReplayStep] = field(default_factory=list)   # empty when replay = false
    replay_time_scale: float = 1.0
    # the applied workload's stream shares over the sweep's cells: fio's per-job counts, the device's (block
    # layer); None: not measured, or the counts cannot tell the streams apart (stored before: None)
    applied_fio_pct: dict[str, float] | None = None
    applied_device_pct: dict[str, float | None] | None = None
    trace_replay: TraceReplay | None = None      # replay_trace = true: the kept trace replayed instead of the steps
    lba_distribution: str = "random"             # fio random_distribution of the capture's LBA histogram
