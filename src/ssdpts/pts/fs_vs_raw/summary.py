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

    @property
    def access(self) -> str:
        """The workload without its block size, e.g. "SEQ read": one line of the MB/s-vs-block-size chart."""
        kind = "RND" if self.name.startswith("rnd") else "SEQ"
        mix = ("read" if self.read_pct == 100 else "write" if self.read_pct == 0
               else f"{self.read_pct}/{100 - self.read_pct} R/W")
        return f"{kind} {mix}"

    @property
    def raw_mb_s(self) -> float | None:
        """MB/s = 10^6 bytes/s (the seed's Мбайт/с), from the stored MiB/s."""
        return None if self.raw_mib_s is None else self.raw_mib_s * 2**20 / 1e6

    @property
    def file_mb_s(self) -> float | None:
        return None if self.file_mib_s is None else self.file_mib_s * 2**20 / 1e6


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

    def by_access(self) -> dict[str, list[WorkloadPair]]:
        """Workloads measured at two block sizes or more, per access ("SEQ read", ...), block size rising:
        the lines of seed 001's Figs 7-9 (MB/s vs block size, with and without a partition)."""
        out: dict[str, list[WorkloadPair]] = {}
        for w in self.workloads:
            out.setdefault(w.access, []).append(w)
        return {a: sorted(ws, key=lambda w: w.block_size) for a, ws in out.items()
                if len({w.block_size for w in ws}) >= 2}
