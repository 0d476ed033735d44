"""The fs-vs-raw study's typed summary: each workload on the raw device and on a file, and their ratio."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..spec import Summary


@dataclass
class WorkloadPair:
    """One workload measured on the raw device and on a file of the same span in a file system on it."""

    name: str                     # cell name, e.g. "rnd_4K_100-0"
    label: str                    # "RND 4K read"
    block_size: int               # bytes
    read_pct: int
    raw_iops: float | None        # None: not measured
    file_iops: float | None
    raw_mib_s: float | None       # MiB/s (2^20 bytes per second)
    file_mib_s: float | None
    raw_lat_mean_us: float | None
    file_lat_mean_us: float | None
    iops_ratio: float | None      # file / raw; None when either side is missing or zero


@dataclass
class FsVsRawSummary(Summary):
    device: str                   # the raw block device
    filesystem: str               # "ext4", "xfs"
    placement: str                # "file on ext4 on /dev/loop3"
    mkfs_command: str
    capacity_bytes: int
    file_bytes: int               # the test file's size; the raw workloads span the same number of bytes
    fill_first: bool              # both sides written once (SEQ) before the workloads
    cell_runtime_s: float
    workloads: list[WorkloadPair] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def pair(self, name: str) -> WorkloadPair | None:
        return next((w for w in self.workloads if w.name == name), None)
