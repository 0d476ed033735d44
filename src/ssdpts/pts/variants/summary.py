"""The workload-variants study's typed summary."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...targets.purge import PurgeRecord
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
    vs_baseline: float | None = None   # IOPS / IOPS with incompressible data (the first variant without it)


@dataclass
class VariantsSummary(Summary):
    purge: PurgeRecord
    workload: VariantWorkload
    cache_bytes: int | None            # the cache the working-set variants are sized against (None: unknown)
    cache_source: str
    variants: list[VariantResult] = field(default_factory=list)   # in run order (the drive's state carries over)
    notes: list[str] = field(default_factory=list)

    def variant(self, name: str) -> VariantResult | None:
        return next((v for v in self.variants if v.variant == name), None)
