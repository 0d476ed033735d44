"""The workload description shared by every engine (fio, simulator, remote fio)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from ..units import bs_label

RW_MODES = ("read", "write", "randread", "randwrite", "randrw", "rw")
# Each data pattern and the fraction of its bytes a compressor keeps: what the drive is meant to see
# (tests/test_data_patterns.py checks it on zram)
DATA_PATTERN_COMPRESSED_FRACTION = {"random": 1.0, "compress50": 0.5, "zero": 0.0}
DATA_PATTERNS = tuple(DATA_PATTERN_COMPRESSED_FRACTION)
# fio sync=: none; dsync = O_DSYNC (data on stable media before a write completes); sync = O_SYNC (metadata too)
SYNC_MODES = ("none", "dsync", "sync")
# what a direct=0 result measures, on every table and chart that shows one (the variants study's label too)
PAGE_CACHE_LABEL = "buffered: page cache, not the drive"


def io_mode_label(direct: bool, sync: str) -> str:
    """How the cells' I/O reaches the drive, in words: 'direct', 'direct, O_DSYNC', or the page-cache label."""
    parts = ["direct" if direct else PAGE_CACHE_LABEL]
    if sync != "none":
        parts.append(f"O_{sync.upper()}")
    return ", ".join(parts)
DEFAULT_PERCENTILES = (99.0, 99.9, 99.99, 99.999)


@dataclass(frozen=True)
class JobMix:
    """One of several fio jobs a cell runs at once, each with its own mix: streams that one job cannot draw
    together (random and sequential I/O of different sizes in one direction) run as separate jobs. Their
    shares of the cell's I/Os are held by fio: `flow` weights (by I/O count, jobs of the cell alone), or
    each job's own `rate_iops`."""

    name: str                            # the job's section is CELL.NAME
    rw: str
    read_pct: int | None = None
    bssplit: tuple[tuple[int, int], ...] = ()
    write_bssplit: tuple[tuple[int, int], ...] = ()
    random_pct: tuple[int, int] = (100, 100)
    threads: int = 1
    iodepth: int = 1
    flow: int = 0                        # fio flow weight among the cell's jobs (0: not held by flow)
    rate_iops: int = 0                   # fio rate_iops of each of the job's threads (0: unthrottled)

    def __post_init__(self):
        if self.rw not in RW_MODES:
            raise ValueError(f"job {self.name}: rw must be one of {', '.join(RW_MODES)}, not {self.rw!r}")
        if self.threads < 1 or self.iodepth < 1 or self.flow < 0 or self.rate_iops < 0:
            raise ValueError(f"job {self.name}: threads and iodepth must be >= 1, flow and rate_iops >= 0")

    @classmethod
    def from_dict(cls, d: dict) -> "JobMix":
        d = dict(d)
        for k in ("bssplit", "write_bssplit"):
            d[k] = tuple(tuple(x) for x in d.get(k, ()))
        d["random_pct"] = tuple(d.get("random_pct", (100, 100)))
        return cls(**d)


@dataclass(frozen=True)
class Workload:
    """What one cell (one fio job with `threads` clones) does.

    threads = TC (fio numjobs), iodepth = QD per thread; OIO = threads * iodepth.
    The active range is a fraction of the target's capacity: [range_start, range_start + range_size).
    Stop by `runtime_s` (time based) and/or `io_size` (bytes per thread), whichever comes first.
    """

    name: str
    rw: str
    bs: int = 4096
    read_pct: int | None = None          # for randrw/rw; derived from rw otherwise
    bssplit: tuple[tuple[int, int], ...] = ()   # ((bytes, percent), ...) overrides bs
    # writes' own split (then `bssplit` is the reads'); empty: `bssplit` serves both directions
    write_bssplit: tuple[tuple[int, int], ...] = ()
    # % of reads and of writes at random offsets, the rest continuing sequentially (random rw modes only)
    random_pct: tuple[int, int] = (100, 100)
    threads: int = 1
    iodepth: int = 1
    range_start: float = 0.0
    range_size: float = 1.0
    runtime_s: float | None = None
    io_size: int | None = None
    ramp_s: float = 0.0
    data_pattern: str = "random"
    direct: bool = True
    sync: str = "none"                   # one of SYNC_MODES
    distribution: str = "random"        # random | zoned:50/5:30/15:20/80 | zipf:1.2 | pareto:0.9
    thinktime_us: int = 0
    thinktime_iotime_s: float = 0.0
    seed: int | None = None
    percentiles: tuple[float, ...] = DEFAULT_PERCENTILES
    log_interval_ms: int = 0             # >0: per-interval IOPS/bandwidth/latency logs
    idle_before_s: float = 0.0           # the device is left idle this long before the cell starts
    align: int = 0                       # random I/O offsets aligned to this many bytes (0: the block size)
    verify: str = ""                     # fio verify= checksum: written blocks are read back and checked ("": none)
    continue_on_error: bool = False      # I/O and verify errors are counted (fio total_err), the job goes on
    # a file target that is absent or too small: fio writes it out in full before a write cell (fio `overwrite=1`)
    # instead of creating it allocated but unwritten (fio's default for write jobs; reads always write it out)
    overwrite: bool = False
    # several fio jobs at once instead of the cell's own mix (empty: one job). The cell's own fields still
    # say what they add up to (the simulator, which runs one job, and the stimulus judgement read them);
    # its threads x iodepth should be their outstanding I/Os (`fio_jobs` gives each job's workload)
    jobs: tuple[JobMix, ...] = ()
    # a kept trace (workload/trace.py) replayed exactly instead of the mix: fio read_iolog of iologs the engine
    # writes from it beside the job file, one per thread (`threads`: the trace's issuing tasks), redirected to
    # the target; its I/Os at their captured times, run at `trace_rate_pct` % of the captured rate (fio
    # replay_time_scale); `iodepth` caps each thread's I/Os in flight
    trace: str = ""
    trace_rate_pct: int = 100

    def __post_init__(self):
        if self.rw not in RW_MODES:
            raise ValueError(f"rw must be one of {', '.join(RW_MODES)}, not {self.rw!r}")
        if self.data_pattern not in DATA_PATTERNS:
            raise ValueError(f"data_pattern must be one of {', '.join(DATA_PATTERNS)}")
        if isinstance(self.sync, bool):   # stored before sync had modes (every decoder lands here): True was O_DSYNC
            object.__setattr__(self, "sync", "dsync" if self.sync else "none")
        if self.sync not in SYNC_MODES:
            raise ValueError(f"sync must be one of {', '.join(SYNC_MODES)}, not {self.sync!r}")
        if self.runtime_s is None and self.io_size is None:
            raise ValueError(f"workload {self.name}: set runtime_s or io_size")
        if not 0 <= self.range_start < 1 or not 0 < self.range_size <= 1 or self.range_start + self.range_size > 1 + 1e-9:
            raise ValueError(f"workload {self.name}: active range must lie within the capacity")
        for split in (self.bssplit, self.write_bssplit):
            if split and sum(p for _, p in split) != 100:
                raise ValueError(f"workload {self.name}: bssplit percentages must sum to 100")
        if self.write_bssplit and not self.bssplit:
            raise ValueError(f"workload {self.name}: write_bssplit needs bssplit (the reads' split)")
        if not all(0 <= p <= 100 for p in self.random_pct) or (self.random_pct != (100, 100) and not self.random):
            raise ValueError(f"workload {self.name}: random_pct must be two percentages, for a random rw mode")
        if self.threads < 1 or self.iodepth < 1:
            raise ValueError(f"workload {self.name}: threads and iodepth must be >= 1")
        if self.trace and (self.jobs or self.trace_rate_pct < 1):
            raise ValueError(f"workload {self.name}: a trace replay is one job (a thread per task) at a rate >= 1 %")

    @property
    def random(self) -> bool:
        return self.rw.startswith("rand")

    @property
    def clones(self) -> int:
        """fio threads the cell starts (every job's numjobs)."""
        return sum(j.threads for j in self.jobs) if self.jobs else self.threads

    def fio_jobs(self) -> list["Workload"]:
        """The cell as fio jobs: itself, or one workload per JobMix (named CELL.JOB, its own seed)."""
        if not self.jobs:
            return [self]
        return [replace(self, name=f"{self.name}.{j.name}", rw=j.rw, read_pct=j.read_pct, bssplit=j.bssplit,
                        write_bssplit=j.write_bssplit, random_pct=j.random_pct, threads=j.threads,
                        iodepth=j.iodepth, jobs=(), seed=None if self.seed is None else self.seed + k)
                for k, j in enumerate(self.jobs)]

    @property
    def reads(self) -> int:
        """Read percentage 0..100."""
        if self.read_pct is not None and self.rw in ("randrw", "rw"):
            return self.read_pct
        return 100 if self.rw in ("read", "randread") else 0 if self.rw in ("write", "randwrite") else 50

    @property
    def max_bs(self) -> int:
        return max((b for b, _ in self.bssplit + self.write_bssplit), default=self.bs)

    @property
    def min_bs(self) -> int:
        return min((b for b, _ in self.bssplit + self.write_bssplit), default=self.bs)

    def combined_bssplit(self) -> tuple[tuple[int, int], ...]:
        """One split for all I/Os (reads' and writes' splits weighted by the read share; whole percents,
        the largest absorbing the rounding), for an engine that takes a single split."""
        if not self.write_bssplit:
            return self.bssplit
        share: dict[int, float] = {}
        for split, weight in ((self.bssplit, self.reads), (self.write_bssplit, 100 - self.reads)):
            for b, p in split:
                share[b] = share.get(b, 0.0) + p * weight / 100
        parts = {b: round(v) for b, v in share.items() if round(v) > 0}
        biggest = max(parts, key=parts.get)
        parts[biggest] += 100 - sum(parts.values())
        return tuple(sorted(parts.items()))

    @property
    def mix_label(self) -> str:
        return f"{self.reads}/{100 - self.reads}"

    @property
    def bs_label(self) -> str:
        return "split" if self.bssplit else bs_label(self.bs)

    def with_(self, **changes) -> "Workload":
        return replace(self, **changes)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["bssplit"] = [list(x) for x in self.bssplit]
        d["write_bssplit"] = [list(x) for x in self.write_bssplit]
        d["random_pct"] = list(self.random_pct)
        d["percentiles"] = list(self.percentiles)
        d["jobs"] = [{**j, "bssplit": [list(x) for x in j["bssplit"]],
                      "write_bssplit": [list(x) for x in j["write_bssplit"]], "random_pct": list(j["random_pct"])}
                     for j in d["jobs"]]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Workload":
        d = dict(d)
        # stored before SEQ cells began at their slice start (docs/coverage.md): a stream's name and position
        d.pop("stream", None)
        d.pop("stream_offset", None)
        d["bssplit"] = tuple(tuple(x) for x in d.get("bssplit", ()))
        d["write_bssplit"] = tuple(tuple(x) for x in d.get("write_bssplit", ()))
        d["random_pct"] = tuple(d.get("random_pct", (100, 100)))
        d["percentiles"] = tuple(d.get("percentiles", DEFAULT_PERCENTILES))
        d["jobs"] = tuple(JobMix.from_dict(j) for j in d.get("jobs", ()))
        return cls(**d)

    def region(self, capacity: int, align: int) -> tuple[int, int]:
        """(offset, size) in bytes of the active range, aligned so every I/O fits."""
        align = max(align, self.max_bs, self.align)
        offset = int(self.range_start * capacity) // align * align
        size = int(self.range_size * capacity) // align * align
        size = min(size, (capacity - offset) // align * align)
        return offset, size

    def clone_slices(self, capacity: int, align: int) -> tuple[int, int, int]:
        """(offset, size per clone, offset increment) of the range: a sequential job's clones each stream
        over their own slice (fio clones would otherwise all stream from the same offset)."""
        offset, size = self.region(capacity, align)
        if self.random or self.threads == 1:
            return offset, size, 0
        step = max(self.max_bs, 4096)
        per = size // self.threads // step * step
        return offset, per, per
