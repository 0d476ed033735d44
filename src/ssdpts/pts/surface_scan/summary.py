"""The surface scan's typed summary."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..spec import Summary


@dataclass
class ScanRegion:
    index: int                         # 1-based, in LBA order
    start_bytes: int                   # offset of the region on the target
    size_bytes: int
    mib_s: float                       # MiB/s (2^20 B/s) of the scan pass: reads (read mode) or writes (write-verify)
    verify_mib_s: float | None         # MiB/s of fio's read-back of the written data (write-verify), else None
    lat_max_ms: float                  # the slowest I/O of the region
    errors: int                        # I/O and verify errors fio counted (continue_on_error)
    slow: bool                         # mib_s below slow_threshold x the median of all regions


@dataclass
class SurfaceScanSummary(Summary):
    mode: str                          # read | write-verify
    verify: str | None                 # fio verify checksum (write-verify), else None
    data_verified: bool                # False where the engine cannot check data (the simulated drive stores none)
    block_size: int                    # bytes
    iodepth: int
    capacity_bytes: int
    scanned_bytes: int
    elapsed_s: float
    median_mib_s: float | None
    slow_threshold: float              # a share of the median
    errors: int                        # over all regions
    regions: list[ScanRegion] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def slow_regions(self) -> list[ScanRegion]:
        return [r for r in self.regions if r.slow]

    @property
    def min_mib_s(self) -> float | None:
        return min((r.mib_s for r in self.regions), default=None)
