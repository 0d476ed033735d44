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
    drives: tuple[str, ...] = ()    # every drive at the bottom of the layers (several: md raid1, a spanning dm)
    layers: tuple[str, ...] = ()    # the layers from `device` down, as block_stack names them

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


@dataclass(frozen=True)
class BlockStack:
    """The layers from a block device down to the drives under it (sysfs: a partition's parent disk, a dm or md
    device's `slaves/`, a loop device's backing file and the file system that file is on)."""

    drives: tuple[str, ...]         # whole disks at the bottom ("nvme0n1"); several under md raid1 or a spanning dm
    layers: tuple[str, ...]         # each step, top down: "dm-0 (LVM 'vg-lv') over sdb1", "sdb1 (partition of sdb)"
    why: str = ""                   # "not available: <layer> hides the drive (...)" when a layer ends the walk


# block devices with no drive under them: what each is, for the "hides the drive" line
_NO_DRIVE = (("zram", "a compressed RAM disk"), ("ram", "a RAM disk"), ("nbd", "a network block device"),
             ("rbd", "a Ceph RBD image"), ("drbd", "a DRBD network replica"), ("pmem", "persistent memory"))
MAX_LAYERS = 16


def _dm_kind(name: str, roots: SysRoots) -> str:
    d = sysfs.block_dir(name, roots) / "dm"
    uuid, label = sysfs.read_text(d / "uuid"), sysfs.read_text(d / "name")
    kind = "LVM" if uuid.startswith("LVM-") else "LUKS" if uuid.startswith("CRYPT-") else "dm"
    return f"{kind} '{label}'" if label else kind


def _loop_backing(name: str, roots: SysRoots) -> str:
    return sysfs.read_text(sysfs.block_dir(name, roots) / "loop" / "backing_file")


def block_stack(name: str, roots: SysRoots | None = None, depth: int = 0) -> BlockStack:
    """Walk from block device `name` down through partitions, dm, md and loop devices to the drives."""
    roots = roots or SysRoots()
    if depth > MAX_LAYERS:
        return BlockStack((), (), f"{NOT_AVAILABLE}: /dev/{name} hides the drive (more than {MAX_LAYERS} layers)")
    d = sysfs.block_dir(name, roots)
    if (d / "partition").exists():
        below = block_stack(d.parent.name, roots, depth + 1)
        return BlockStack(below.drives, (f"{name} (partition of {d.parent.name})",) + below.layers, below.why)
    if name.startswith(("dm-", "md")):
        slaves = sorted(p.name for p in (d / "slaves").glob("*"))
        kind = _dm_kind(name, roots) if name.startswith("dm-") else \
            f"md {sysfs.read_text(d / 'md' / 'level') or 'array'}"
        layer = f"{name} ({kind}) over {', '.join(slaves) or 'no device'}"
        if not slaves:
            return BlockStack((), (layer,), f"{NOT_AVAILABLE}: /dev/{name} ({kind}) hides the drive: it has no "
                                            "device under it in sysfs")
        drives, layers, whys = [], [layer], []
        for slave in slaves:
            below = block_stack(slave, roots, depth + 1)
            drives += [x for x in below.drives if x not in drives]
            layers += below.layers
            whys += [below.why] if below.why else []
        return BlockStack(tuple(drives), tuple(layers), "; ".join(whys))
    if name.startswith("loop"):
        backing = _loop_backing(name, roots)
        if not backing:
            return BlockStack((), (f"{name} (loop)",), f"{NOT_AVAILABLE}: /dev/{name} (loop) hides the drive: it "
                                                      "has no backing file")
        layer = f"{name} (loop over {backing})"
        if backing.endswith(" (deleted)") or not os.path.exists(backing):
            return BlockStack((), (layer,), f"{NOT_AVAILABLE}: /dev/{name} (loop) hides the drive: its backing "
                                            f"file {backing} is gone")
        fstype, _, under = _device_of(backing, roots)
        if under is None:
            return BlockStack((), (layer,), f"{NOT_AVAILABLE}: /dev/{name} (loop) hides the drive: its backing file "
                                            f"{backing} is on {fstype or 'a file system'}, which has no block device")
        below = block_stack(under, roots, depth + 1)
        return BlockStack(below.drives, (layer,) + below.layers, below.why)
    for prefix, what in _NO_DRIVE:
        if name.startswith(prefix):
            return BlockStack((), (f"{name} ({what})",), f"{NOT_AVAILABLE}: /dev/{name} ({what}) hides the drive")
    return BlockStack((name,), (name,))


def _through_stack(name: str, roots: SysRoots) -> tuple[str | None, str, BlockStack]:
    """The one drive under `name`, else why not (several drives: each is named, none stands for the file)."""
    stack = block_stack(name, roots)
    if len(stack.drives) == 1 and not stack.why:
        return stack.drives[0], "", stack
    if len(stack.drives) > 1:
        return None, (f"{NOT_AVAILABLE} as one drive: the file system spans {len(stack.drives)} drives "
                      f"({', '.join('/dev/' + x for x in stack.drives)}) through {stack.layers[0]}; each drive's "
                      "health is recorded"), stack
    return None, stack.why or f"{NOT_AVAILABLE}: /dev/{name} hides the drive", stack


def _device_of(path: str, roots: SysRoots) -> tuple[str | None, str | None, str | None]:
    """(file system type, mount point, kernel name of its block device or None) of an existing path."""
    st = os.stat(path)
    majmin = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    fstype, point, source = _mount_of(os.path.realpath(path), majmin, roots.proc)
    link = roots.sys / "dev" / "block" / majmin
    name = Path(os.path.realpath(link)).name if link.exists() else None
    if name is None and source and source.startswith("/dev/") and os.path.exists(source):
        name = sysfs.device_name(source, roots)           # btrfs: an anonymous st_dev, the source names the device
    return fstype, point, name


def file_placement(path: str, roots: SysRoots | None = None) -> FilePlacement:
    """The file system, block device and whole disk under `path` (or under its directory if it does not exist)."""
    roots = roots or SysRoots()
    where = path if os.path.exists(path) else os.path.dirname(path)
    fstype, point, name = _device_of(where, roots)
    if name is None:
        return FilePlacement(fstype, point, None, None, None, None,
                             f"{NOT_AVAILABLE}: {fstype or 'this file system'} has no block device")
    lbs = int(sysfs.read_text(sysfs.block_dir(name, roots) / "queue" / "logical_block_size", "0") or 0) or None
    pbs = int(sysfs.read_text(sysfs.block_dir(name, roots) / "queue" / "physical_block_size", "0") or 0) or None
    drive, why, stack = _through_stack(name, roots)
    if lbs is None:                                       # a partition: its queue is the disk's
        disk = sysfs.whole_disk(name, roots)
        lbs = int(sysfs.read_text(sysfs.block_dir(disk, roots) / "queue" / "logical_block_size", "0") or 0) or None
        pbs = int(sysfs.read_text(sysfs.block_dir(disk, roots) / "queue" / "physical_block_size", "0") or 0) or None
    return FilePlacement(fstype, point, f"/dev/{name}", f"/dev/{drive}" if drive else None, lbs, pbs, why,
                         drives=tuple(f"/dev/{x}" for x in stack.drives), layers=stack.layers)


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
