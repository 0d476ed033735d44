"""The workload file (`*.workload.json`, schema `ssdpts.workload/1`): a block-layer capture reduced to IO streams.

An IO stream (SNIA RWSW) is one unique combination of transfer size, direction (read/write) and access
(random/sequential). The file keeps, for the whole capture and for every time step, each stream's I/O count and
bytes, and the queue depth the device saw (in-flight requests at each issue), plus the LBA range touched. The
applied test workload is the top-N streams by I/O count (`WorkloadCapture.top`). Every figure is a count from the
capture; shares are computed from counts, never stored separately.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import SsdptsError
from ..records import from_data, to_data, type_problem
from ..units import bs_label

SCHEMA = "ssdpts.workload/1"
DAMAGED = "the file is damaged: capture again or restore it"
DIRECTIONS = ("read", "write")
COMPLETIONS, IN_FLIGHT_SAMPLES, NO_DEPTHS = "completions", "in-flight samples", "none"   # queue_depth_from
ACCESSES = ("random", "sequential")
LBA_ZONES = 20                   # the LBA histogram's parts: 5 % of the device each


@dataclass(frozen=True)
class StreamKey:
    """One IO stream: transfer size, direction and access pattern."""

    bs: int                      # bytes per I/O
    rw: str                      # read | write
    access: str                  # random | sequential

    def __post_init__(self):
        if self.bs <= 0 or self.rw not in DIRECTIONS or self.access not in ACCESSES:
            raise ValueError(f"not an IO stream: bs={self.bs} rw={self.rw!r} access={self.access!r}")

    @property
    def label(self) -> str:
        """'RND 4K R', 'SEQ 128K W': the RWSW style."""
        return f"{'RND' if self.access == 'random' else 'SEQ'} {bs_label(self.bs)} {self.rw[0].upper()}"


@dataclass
class StreamCount:
    stream: StreamKey
    ios: int
    bytes: int


@dataclass
class QueueDepth:
    """In-flight requests on the device at each issue (the issued one included): a histogram and its mean."""

    histogram: dict[int, int] = field(default_factory=dict)      # depth -> issues that saw it

    @property
    def samples(self) -> int:
        return sum(self.histogram.values())

    @property
    def mean(self) -> float:
        n = self.samples
        return sum(d * c for d, c in self.histogram.items()) / n if n else 0.0

    def percentile(self, p: float) -> int:
        """The smallest depth at or below which `p` % of the issues saw the device."""
        n, seen = self.samples, 0
        for depth in sorted(self.histogram):
            seen += self.histogram[depth]
            if seen * 100 >= p * n:
                return depth
        return 0


@dataclass
class Step:
    """One time step of the capture."""

    start_s: float
    duration_s: float
    streams: list[StreamCount]
    queue_depth: QueueDepth
    threads: int = 0             # tasks that queued I/O in the step (the bios' pids; 0: not captured)

    @property
    def ios(self) -> int:
        return sum(s.ios for s in self.streams)


@dataclass
class CaptureSource:
    kind: str                    # tracefs | blktrace | fio-iolog
    device: str                  # what was captured (a path, or the name in imported files)
    started_at: str              # ISO 8601 UTC; "" when the source does not say
    duration_s: float
    step_s: float
    command: str = ""            # how it was taken (ssdpts capture ..., or the import)
    note: str = ""


@dataclass
class WorkloadCapture:
    schema: str
    source: CaptureSource
    device_size_bytes: int       # 0 when unknown (imports)
    lba_min_bytes: int           # the lowest offset touched
    lba_max_bytes: int           # the end of the highest I/O
    streams: list[StreamCount]   # the whole capture, most I/Os first
    queue_depth: QueueDepth
    steps: list[Step]
    # Fields added after the first files were written: their defaults are what those files meant.
    lost_events: int = 0         # trace events the kernel could not keep: > 0, the counts are low
    queue_depth_from: str = COMPLETIONS   # completions (matched to issues) | in-flight samples (the kernel's
    #                                       counter, sampled: used when events were lost) | none (imports)
    # The application's requests (block_bio_queue: before the block layer splits them to the device's maximum
    # transfer or merges neighbours). `streams` are the device's requests, and the replay applies those.
    # Empty when the source has no bios (imports) or the device takes bios directly (zram, device-mapper).
    application_streams: list[StreamCount] = field(default_factory=list)
    # Reads and writes starting in each of LBA_ZONES equal parts of the device ([0, device_size_bytes), or
    # [0, lba_max_bytes) when the size is not known): where the I/O lands. Empty: not recorded (older files).
    lba_zones: list[int] = field(default_factory=list)
    trace_file: str = ""         # the kept trace (capture --keep-trace), beside this file; "": none kept

    @property
    def lossy(self) -> bool:
        return self.lost_events > 0

    @property
    def ios(self) -> int:
        return sum(s.ios for s in self.streams)

    def share(self, stream: StreamKey) -> float:
        """The stream's fraction of all I/Os (0..1)."""
        total = self.ios
        return next((s.ios for s in self.streams if s.stream == stream), 0) / total if total else 0.0

    def top(self, n: int) -> list[StreamCount]:
        """The applied test workload: the `n` streams with most I/Os (ties: larger bytes first)."""
        return sorted(self.streams, key=lambda s: (-s.ios, -s.bytes, s.stream.label))[:n]

    def to_json(self) -> dict:
        return to_data(self)

    @classmethod
    def from_json(cls, data: dict, origin: str = "workload file") -> "WorkloadCapture":
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            found = data.get("schema") if isinstance(data, dict) else type(data).__name__
            raise SsdptsError(f"{origin} is not an ssdpts workload file (schema {found!r}, expected {SCHEMA!r}); "
                              "make one with 'ssdpts capture DEVICE --out FILE'")
        try:
            capture = from_data(cls, data)
        except (TypeError, ValueError, KeyError, AttributeError) as e:
            raise SsdptsError(f"{origin}: malformed workload file ({e}); {DAMAGED}") from None
        wrong = type_problem(cls, capture)
        if wrong:
            raise SsdptsError(f"{origin}: malformed workload file ({wrong}); {DAMAGED}")
        _check_values(capture, origin)
        return capture


def _count(value, what: str, origin: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SsdptsError(f"{origin}: {what} is {value!r}, not a count (a whole number >= 0); {DAMAGED}")
    return value


def _seconds(value, what: str, origin: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise SsdptsError(f"{origin}: {what} is {value!r}, not a number of seconds >= 0; {DAMAGED}")
    return float(value)


def _check_counts(streams: list[StreamCount], where: str, origin: str) -> None:
    for s in streams:
        _count(s.ios, f"{where} {s.stream.label} ios", origin)
        _count(s.bytes, f"{where} {s.stream.label} bytes", origin)


def _check_depths(qd: QueueDepth, where: str, origin: str) -> None:
    for depth, seen in qd.histogram.items():
        _count(depth, f"{where} queue depth", origin)
        _count(seen, f"{where} queue depth {depth} samples", origin)


def _check_values(capture: "WorkloadCapture", origin: str) -> None:
    """Counts that are counts and times that are times: the record reader checks shapes, not values."""
    _seconds(capture.source.duration_s, "source duration_s", origin)
    _seconds(capture.source.step_s, "source step_s", origin)
    for name in ("device_size_bytes", "lba_min_bytes", "lba_max_bytes"):
        _count(getattr(capture, name), name, origin)
    _check_counts(capture.streams, "stream", origin)
    _check_counts(capture.application_streams, "application stream", origin)
    _count(capture.lost_events, "lost_events", origin)
    for n, seen in enumerate(capture.lba_zones, 1):
        _count(seen, f"LBA zone {n} I/Os", origin)
    _check_depths(capture.queue_depth, "capture", origin)
    for n, step in enumerate(capture.steps, 1):
        _seconds(step.start_s, f"step {n} start_s", origin)
        _seconds(step.duration_s, f"step {n} duration_s", origin)
        _count(step.threads, f"step {n} threads", origin)
        _check_counts(step.streams, f"step {n} stream", origin)
        _check_depths(step.queue_depth, f"step {n}", origin)


def load(path: str | Path) -> WorkloadCapture:
    """Read a workload file (one line naming the problem if it is not one)."""
    from ..inputs import read_json

    return WorkloadCapture.from_json(read_json(path, "workload file"), str(path))
