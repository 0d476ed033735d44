"""Where a file target lives: its file system, block device and whole disk (for health data and sector sizes), and
the O_DIRECT alignment fio needs on it. Read-only."""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass
from pathlib import Path

from . import sysfs
from .sysfs import SysRoots

DIO_PROBE_SIZES = (512, 1024, 2048, 4096)
NOT_AVAILABLE = "not available"


@dataclass(frozen=True)
class FilePlacement:
    """Where a file target's bytes go. `device` holds the file system; `disk` is the drive whose health and
    sector sizes belong to the file (None with `why_no_disk` when that cannot be told)."""

    filesystem: str | None          # "ext4", "xfs", "tmpfs" ... (None: not in /proc/self/mountinfo)
    mount_point: str | None
    device: str | None              # /dev/nvme0n1p2, /dev/loop3, /dev/dm-0 (None: no block device)
    disk: str | None                # /dev/nvme0n1: what health snapshots read
    logical_block_size: int | None  # of `device` (bytes)
    physical_block_size: int | None
    why_no_disk: str = ""

    @property
    def description(self) -> str:
        """"file on ext4 on /dev/nvme0n1p2" (what the run's target facts record)."""
        return f"file on {self.filesystem or 'an unknown file system'} on {self.device or 'no block device'}"


def _mount_of(path: str, majmin: str, proc: Path) -> tuple[str | None, str | None, str | None]:
    """(file system type, mount point, source) of the mount holding `path` with device number `majmin`."""
    best: tuple[str | None, str | None, str | None] = (None, None, None)
    try:
        lines = (proc / "self" / "mountinfo").read_text().splitlines()
    except OSError:
        return best
    for line in lines:
        left, _, right = line.partition(" - ")
        f, r = left.split(), right.split()
        if len(f) < 5 or len(r) < 2:
            continue
        point = f[4].encode().decode("unicode_escape")      # mountinfo writes a space as \040
        inside = path == point or path.startswith(point.rstrip("/") + "/")
        if f[2] == majmin and inside and len(point) >= len(best[1] or ""):
            best = (r[0], point, r[1])
    return best


def _through_stack(name: str, roots: SysRoots) -> tuple[str | None, str]:
    """The one drive under a dm/md device (a single-slave stack such as LUKS on a partition), else why not."""
    seen = name
    while seen.startswith(("dm-", "md")):
        slaves = sorted(p.name for p in (sysfs.block_dir(seen, roots) / "slaves").glob("*"))
        if len(slaves) != 1:
            return None, f"{NOT_AVAILABLE}: file system on dm/md device /dev/{name} over {len(slaves)} devices"
        seen = slaves[0]
    return seen, ""


def file_placement(path: str, roots: SysRoots | None = None) -> FilePlacement:
    """The file system, block device and whole disk under `path` (or under its directory if it does not exist)."""
    roots = roots or SysRoots()
    where = path if os.path.exists(path) else os.path.dirname(path)
    st = os.stat(where)
    majmin = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    fstype, point, source = _mount_of(os.path.realpath(where), majmin, roots.proc)
    link = roots.sys / "dev" / "block" / majmin
    name = Path(os.path.realpath(link)).name if link.exists() else None
    if name is None and source and source.startswith("/dev/") and os.path.exists(source):
        name = sysfs.device_name(source, roots)           # btrfs: an anonymous st_dev, the source names the device
    if name is None:
        return FilePlacement(fstype, point, None, None, None, None,
                             f"{NOT_AVAILABLE}: {fstype or 'this file system'} has no block device")
    lbs = int(sysfs.read_text(sysfs.block_dir(name, roots) / "queue" / "logical_block_size", "0") or 0) or None
    pbs = int(sysfs.read_text(sysfs.block_dir(name, roots) / "queue" / "physical_block_size", "0") or 0) or None
    drive, why = _through_stack(name, roots)
    if lbs is None and drive:                             # a partition: its queue is the disk's
        disk = sysfs.whole_disk(drive, roots)
        lbs = int(sysfs.read_text(sysfs.block_dir(disk, roots) / "queue" / "logical_block_size", "0") or 0) or None
        pbs = int(sysfs.read_text(sysfs.block_dir(disk, roots) / "queue" / "physical_block_size", "0") or 0) or None
    disk = f"/dev/{sysfs.whole_disk(drive, roots)}" if drive else None
    return FilePlacement(fstype, point, f"/dev/{name}", disk, lbs, pbs, why)


def direct_io_alignment(path: str) -> int | None:
    """The smallest O_DIRECT read size the file system accepts on an existing file (what fio's direct=1 needs:
    ext4 asks for the device's logical block, xfs its own sector size); None if O_DIRECT is refused or the
    file is too small to tell. Read-only."""
    try:
        if os.path.getsize(path) < 2 * max(DIO_PROBE_SIZES):
            return None
        fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    except OSError:
        return None
    buf = mmap.mmap(-1, max(DIO_PROBE_SIZES))             # page-aligned, as O_DIRECT wants its memory
    try:
        for size in DIO_PROBE_SIZES:
            try:
                if os.preadv(fd, [memoryview(buf)[:size]], size) == size:
                    return size
            except OSError:
                continue
        return None
    finally:
        buf.close()
        os.close(fd)
