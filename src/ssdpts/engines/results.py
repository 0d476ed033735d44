"""What an engine returns for a round: per-cell statistics in one shape, whatever ran the I/O."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Callable, Iterable, Iterator, TypeVar

from .coverage import Coverage
from .hostcpu import HostCpu
from .stimulus import Stimulus

T = TypeVar("T")


@dataclass
class DirStats:
    """One data direction (read or write) of one cell. Latency is total latency (submit to complete), ns."""

    ios: int = 0
    bytes: int = 0
    iops: float = 0.0
    bw_bytes: float = 0.0          # bytes per second
    lat_mean_ns: float = 0.0
    lat_min_ns: float = 0.0
    lat_max_ns: float = 0.0
    lat_stddev_ns: float = 0.0
    percentiles: dict[str, float] = field(default_factory=dict)   # "99.9" -> ns
    bins: dict[int, int] | None = None                           # latency ns -> count (json+)

    @property
    def mib_s(self) -> float:
        return self.bw_bytes / 2**20


@dataclass
class CellResult:
    name: str
    read: DirStats
    write: DirStats
    runtime_ms: float = 0.0
    usr_cpu: float = 0.0
    sys_cpu: float = 0.0
    latency_source: str = "lat"      # lat (total) | clat (fallback when fio lacks total-latency percentiles)
    intervals: list[dict] = field(default_factory=list)
    errors: int = 0                  # I/O and verify errors fio counted and went past (continue_on_error)
    parts: dict[str, "CellResult"] = field(default_factory=dict)   # per target, when several run at once
    jobs: dict[str, "CellResult"] = field(default_factory=dict)    # per fio job, for a cell of several (JobMix)
    host_cpu: HostCpu | None = None    # whole-host CPU over the cell (None: not measured, e.g. simulated)
    stimulus: Stimulus | None = None   # what the device saw during the cell (engines/stimulus.py); None: not stored
    coverage: Coverage | None = None   # LBAs the cell touched (simulator, or run --trace-stimulus)

    @property
    def iops(self) -> float:
        """SNIA: mixed-cell IOPS is read IOPS + write IOPS (never a weighted mean)."""
        return self.read.iops + self.write.iops

    @property
    def bw_bytes(self) -> float:
        return self.read.bw_bytes + self.write.bw_bytes

    @property
    def lat_mean_ns(self) -> float:
        n = self.read.ios + self.write.ios
        if not n:
            return 0.0
        return (self.read.lat_mean_ns * self.read.ios + self.write.lat_mean_ns * self.write.ios) / n

    @property
    def lat_max_ns(self) -> float:
        return max(self.read.lat_max_ns, self.write.lat_max_ns)

    def metric(self, name: str) -> float:
        """Tracking-variable lookup used by steady-state loops."""
        if name == "iops":
            return self.iops
        if name in ("read_iops", "write_iops"):
            return getattr(self, name.split("_")[0]).iops
        if name in ("read_bw", "write_bw"):
            return getattr(self, name.split("_")[0]).bw_bytes
        if name == "bw":
            return self.bw_bytes
        if name == "lat_mean":
            return self.lat_mean_ns
        if name == "lat_max":
            return self.lat_max_ns
        raise KeyError(f"unknown metric {name!r}")

    def to_dict(self) -> dict:
        d = asdict(self)
        for k in ("read", "write"):
            if d[k]["bins"] is not None:
                d[k]["bins"] = {str(a): b for a, b in d[k]["bins"].items()}
        d["parts"] = {label: part.to_dict() for label, part in self.parts.items()}
        d["jobs"] = {name: job.to_dict() for name, job in self.jobs.items()}
        return d


@dataclass
class DeviceIdle:
    """The device's idle time at one transition, measured at the block layer (engines/blockidle.py):
    from the sample that last saw I/O of the cell before to the sample that first saw the next one's.
    `ms` None: not measured (the round's `device_idle_note` says why); 0.0: the device never idled
    (then `last_io`/`next_io` are the bounds of the gate-side window the sampler looked at). `last_io` to
    `next_io` is the idle run as the counters showed it: `ms` plus `held_ms`."""

    ms: float | None
    last_io: float | None = None     # wall clock (s since epoch) of those two samples
    next_io: float | None = None
    cause: str = ""                  # "resume": the pause across a stop and its resume (pts/resume.py)
    # of the idle run the counters showed, the time the device had requests it had been given without counting
    # them in flight (dm-delay; a cell still due to run): latency, not idle, so not in `ms` (blockidle.IdleRun)
    held_ms: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class IoProgress:
    """How far a running round has got, from the engine's periodic status (fio's --status-interval): given to
    the `on_progress` callback a round was submitted with, from the engine's own thread."""

    bytes_done: int                  # read + written so far, every job and target
    bytes_total: int | None          # what the round's size-bound cells will move; None: time-bound
    io_seconds: float                # how long its I/O has run so far

    @classmethod
    def of(cls, cells: list[CellResult], bytes_total: int | None = None) -> "IoProgress":
        """A finished round's (cells run one after another)."""
        return cls(sum(c.read.bytes + c.write.bytes for c in cells), bytes_total,
                   sum(c.runtime_ms for c in cells) / 1000)

    @property
    def fraction(self) -> float | None:
        return min(self.bytes_done / self.bytes_total, 1.0) if self.bytes_total else None

    @property
    def bytes_per_s(self) -> float | None:
        return self.bytes_done / self.io_seconds if self.io_seconds > 0 else None


def size_bound_bytes(cells, targets: int = 1) -> int | None:
    """Bytes the cells move in all when every one is size bound (io_size per job), else None."""
    if any(not c.io_size for c in cells):
        return None
    return sum(c.io_size * c.threads for c in cells) * targets


@dataclass(frozen=True)
class Stall:
    """A time-based cell whose fio stopped making progress: killed, and its round run again."""

    cell: str
    why: str
    evidence_file: str        # the kept job file, fio's stderr and the evidence (stacks, wchan, in flight)


@dataclass
class RoundOutput:
    """One fio process (or simulator call) worth of cells, with everything needed to reproduce it."""

    cells: list[CellResult]
    engine: str
    job_text: str = ""
    command: list[str] = field(default_factory=list)
    raw_output: str = ""
    stderr: str = ""
    started_at: float = 0.0          # wall clock, s since epoch
    ended_at: float = 0.0
    gap_before_ms: float | None = None    # idle time between the previous round's last I/O and this round's first
    gaps_inside_ms: list[float] = field(default_factory=list)   # idle time between consecutive cells
    # the same transitions measured at the device (gate-side figures above are lower bounds)
    device_idle_before: DeviceIdle | None = None
    device_idle_inside: list[DeviceIdle] = field(default_factory=list)
    device_idle_note: str = ""       # why device idle is not measured, if it is not
    # a session's first round: the block layer's first I/O after the session began (wall clock), where the
    # device was quiet when sampling began; how long a resumed run's drive idled (pts/resume.py)
    first_io_at: float | None = None
    fio_version: str = ""
    logs: dict[str, str] = field(default_factory=dict)   # fio log files (e.g. *_iops.1.log), by name
    stalls: list[Stall] = field(default_factory=list)     # stalled attempts before the one these cells are from


def percentile_from_bins(bins: dict[int, int], pct: float) -> float | None:
    """The latency (ns) at percentile `pct` of a fio json+ histogram (bucket value -> count)."""
    total = sum(bins.values())
    if not total:
        return None
    need = pct / 100.0 * total
    seen = 0
    for value in sorted(bins):
        seen += bins[value]
        if seen >= need:
            return float(value)
    return float(max(bins))


def merge_bins(parts) -> dict[int, int]:
    out: dict[int, int] = {}
    for b in parts:
        for k, v in (b or {}).items():
            out[k] = out.get(k, 0) + v
    return out


SHORT_PIECE = 0.5     # of an interval: a piece of a continuous job shorter than this is no round of its own


def fold_short_pieces(pieces: Iterable[T], interval_ms: float, duration_ms: Callable[[T], float],
                      merge: Callable[[T, T], T]) -> Iterator[T]:
    """The pieces of a continuous job, each piece after the first that is shorter than half an interval (a
    zero-runtime remainder included) merged into the one before it: a rate over a few ms (or none) is no round
    (its I/O counted in one piece, its bytes or time in the next, a round of 0 IOPS). A piece is given when the
    next one is long enough to stand alone, or the pieces ended: one piece behind."""
    held = None
    for piece in pieces:
        if held is not None and duration_ms(piece) < interval_ms * SHORT_PIECE:
            held = merge(held, piece)
            continue
        if held is not None:
            yield held
        held = piece
    if held is not None:
        yield held


@dataclass
class Interval:
    """One slice of a continuous cell, cut from fio's periodic status (or the simulator's clock)."""

    cell_index: int
    name: str
    index: int                 # 1-based, per cell
    start_ms: float            # from the cell's start, active (I/O) time
    duration_ms: float
    result: CellResult
    raw: dict | None = None    # the cumulative fio job document this slice ends at


def _merge_dirs(dirs: list[DirStats], seconds: float | None) -> DirStats:
    """One direction's statistics from several pieces: counts added, histograms merged.

    seconds=None: the pieces ran at the same time (several targets), so rates add up;
    otherwise they ran one after another for `seconds` in total, so rates are counts / time.
    """
    ios = sum(d.ios for d in dirs)
    nbytes = sum(d.bytes for d in dirs)
    bins = merge_bins(d.bins for d in dirs if d.bins) or None
    pcts = sorted({p for d in dirs for p in d.percentiles}, key=float)
    if seconds is None:
        iops, bw = sum(d.iops for d in dirs), sum(d.bw_bytes for d in dirs)
    else:
        iops, bw = (ios / seconds, nbytes / seconds) if seconds else (0.0, 0.0)
    return DirStats(
        ios=ios, bytes=nbytes, iops=iops, bw_bytes=bw,
        lat_mean_ns=sum(d.lat_mean_ns * d.ios for d in dirs) / ios if ios else 0.0,
        lat_min_ns=min((d.lat_min_ns for d in dirs if d.ios), default=0.0),
        lat_max_ns=max((d.lat_max_ns for d in dirs), default=0.0),
        percentiles={p: v for p in pcts if bins and (v := percentile_from_bins(bins, float(p))) is not None},
        bins=bins)


def aggregate(parts: dict[str, CellResult], name: str) -> CellResult:
    """The aggregate of one cell run on several targets at once: IOPS, bandwidth and I/O errors summed, latency
    from the merged histograms; each target's own result stays in `parts` (latency is never averaged away)."""
    values = list(parts.values())
    return CellResult(name=name, read=_merge_dirs([p.read for p in values], None),
                      write=_merge_dirs([p.write for p in values], None),
                      runtime_ms=max((p.runtime_ms for p in values), default=0.0),
                      usr_cpu=sum(p.usr_cpu for p in values), sys_cpu=sum(p.sys_cpu for p in values),
                      latency_source=values[0].latency_source if values else "lat",
                      errors=sum(p.errors for p in values), parts=dict(parts))


def merge_jobs(jobs: dict[str, CellResult], name: str) -> CellResult:
    """One cell run as several fio jobs at once (Workload.jobs): summed as `aggregate` sums targets, each job's
    own result kept in `jobs` (its own I/O counts: what fio applied of each)."""
    out = aggregate(jobs, name)
    out.parts, out.jobs = {}, dict(jobs)
    return out


def combine(results: list[CellResult], name: str | None = None) -> CellResult:
    """One CellResult for consecutive slices of the same cell (counts summed, histograms merged)."""
    seconds = sum(r.runtime_ms for r in results) / 1000.0
    return CellResult(name=name or (results[0].name if results else ""),
                      read=_merge_dirs([r.read for r in results], seconds),
                      write=_merge_dirs([r.write for r in results], seconds),
                      runtime_ms=sum(r.runtime_ms for r in results),
                      usr_cpu=0.0, sys_cpu=0.0, latency_source=results[0].latency_source if results else "lat",
                      errors=sum(r.errors for r in results))
