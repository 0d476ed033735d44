"""The workload-variants study's typed summary."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...targets.record import PurgeRecord
from ..spec import Summary


@dataclass
class VariantWorkload:
    """The workload every variant runs (the variants change data pattern, sync, page cache or working set)."""

    rw: str
    block_size: int            # bytes
    read_pct: int | None
    threads: int | None        # None: no variant ran
    iodepth: int | None


@dataclass
class VariantResult:
    variant: str               # random | compress50 | zero | dsync | ws-small | ws-large | buffered
    label: str
    iops: float
    mb_s: float                # MB/s (10^6 bytes/s)
    mib_s: float
    lat_mean_us: float
    lat_max_us: float
    working_set_bytes: int
    direct: bool
    sync: bool
    data_pattern: str
    vs_baseline: float | None = None   # IOPS / IOPS of the same workload with incompressible data (else its first)
    # the workload this result ran (None: stored before workload lists, when the summary's one workload)
    rw: str | None = None
    block_size: int | None = None      # bytes
    threads: int | None = None         # jobs (the working-set variants may set their own)
    iodepth: int | None = None         # None: stored before it was recorded (the workload's)


@dataclass
class VariantsSummary(Summary):
    purge: PurgeRecord
    workload: VariantWorkload
    cache_bytes: int | None            # the cache the working-set variants are sized against (None: unknown)
    cache_source: str
    variants: list[VariantResult] = field(default_factory=list)   # in run order (the drive's state carries over)
    notes: list[str] = field(default_factory=list)
    # every workload, in run order (empty: stored before workload lists, when `workload` was the only one)
    workloads: list[VariantWorkload] = field(default_factory=list)

    @property
    def all_workloads(self) -> list[VariantWorkload]:
        return self.workloads or [self.workload]

    def results_of(self, w: VariantWorkload) -> list[VariantResult]:
        """The variants of one workload, in run order."""
        return [v for v in self.variants if v.rw is None or (v.rw, v.block_size) == (w.rw, w.block_size)]

    def variant(self, name: str, rw: str | None = None, block_size: int | None = None) -> VariantResult | None:
        """A variant's result: of the workload rw / block size, or of the first workload."""
        w = self.all_workloads[0]
        if rw is not None:
            w = next((x for x in self.all_workloads if (x.rw, x.block_size) == (rw, block_size)), None)
        return next((v for v in self.results_of(w) if v.variant == name), None) if w else None
