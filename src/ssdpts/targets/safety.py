"""Refuse to write where it would destroy something: checks run before a single byte is written."""

from __future__ import annotations

import fcntl
import os
import re
import shlex
import stat
import struct
import subprocess
from pathlib import Path
from typing import Iterable

from ..errors import SsdptsError
from ..units import bs_label
from ..workload.spec import Workload
from . import hold, sysfs
from .base import Target
from .hold import open_by
from .sysfs import SysRoots

# (offset, magic, name) for the signatures blkid may be missing; blkid is asked first.
_MAGICS = [
    (1080, b"\x53\xef", "ext2/3/4 filesystem"),
    (0, b"XFSB", "xfs filesystem"),
    (65600, b"_BHRfS_M", "btrfs filesystem"),
    (4086, b"SWAPSPACE2", "swap area"),
    (0, b"LUKS\xba\xbe", "LUKS volume"),
    (512, b"LABELONE", "LVM physical volume"),
    (512, b"EFI PART", "GPT partition table"),
    (3, b"NTFS    ", "ntfs filesystem"),
    (82, b"FAT32   ", "vfat filesystem"),
    (4096, b"\xfc\x4e\x2b\xa9", "Linux md RAID member"),
    (32769, b"CD001", "iso9660 filesystem"),
]


def _mounted_majmins(roots: SysRoots) -> dict[str, str]:
    """major:minor -> mount point, from /proc/self/mountinfo."""
    out: dict[str, str] = {}
    text = (roots.proc / "self" / "mountinfo")
    try:
        lines = text.read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        parts = line.split()
        if len(parts) > 4:
            out.setdefault(parts[2], parts[4])
    return out


def _swap_devices(roots: SysRoots) -> list[str]:
    try:
        lines = (roots.proc / "swaps").read_text().splitlines()[1:]
    except OSError:
        return []
    return [l.split()[0] for l in lines if l.split()]


def signature(dev_path: str) -> str | None:
    """A filesystem / partition-table / RAID signature on the device, named, or None."""
    try:
        out = subprocess.run(["blkid", "-p", "-o", "export", dev_path], capture_output=True, text=True, timeout=30)
        fields = dict(l.split("=", 1) for l in out.stdout.splitlines() if "=" in l)
        if "PTTYPE" in fields:
            return f"{fields['PTTYPE']} partition table"
        if "TYPE" in fields:
            kind = fields["TYPE"]
            return "swap area" if kind == "swap" else f"{kind} {'member' if 'member' in kind else 'filesystem'}"
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        with open(dev_path, "rb") as f:
            head = f.read(65536 + 1024)
    except OSError:
        return None
    for off, magic, name in _MAGICS:
        if head[off:off + len(magic)] == magic:
            return name
    if len(head) >= 512 and head[510:512] == b"\x55\xaa" and any(head[446:510]):
        return "dos (MBR) partition table"
    return None


def check_block_device(dev_path: str, destroy_data: bool, roots: SysRoots | None = None,
                       check_signature: bool = True) -> None:
    """Raise SsdptsError unless writing to `dev_path` is safe and consented to."""
    roots = roots or SysRoots()
    name = sysfs.device_name(dev_path, roots)
    disk = sysfs.whole_disk(name, roots)
    members = [name] + sysfs.partitions(name, roots)
    mounted = _mounted_majmins(roots)
    for member in members:
        mm = sysfs.majmin(member, roots)
        if mm and mm in mounted:
            where = mounted[mm]
            part = "" if member == name else f" (partition {member})"
            if where == "/":
                raise SsdptsError(f"refusing {dev_path}: it holds the root filesystem{part}; choose another device")
            raise SsdptsError(f"refusing {dev_path}: it is mounted at {where}{part}; unmount it first or choose "
                              "another device")
    swaps = _swap_devices(roots)
    for sw in swaps:
        sw_name = Path(os.path.realpath(sw)).name
        if sw_name in members:
            raise SsdptsError(f"refusing {dev_path}: {sw} is active swap; run 'swapoff {sw}' first or choose another device")
    for member in members:
        h = sysfs.holders(member, roots)
        if h:
            raise SsdptsError(f"refusing {dev_path}: {member} is in use by {', '.join(h)} (md/LVM/dm); "
                              "remove it from that device first")
    if disk != name and any(sysfs.majmin(disk, roots) == mm for mm in mounted):
        raise SsdptsError(f"refusing {dev_path}: its disk {disk} is mounted; choose an unused device")
    if read_only(dev_path, name, roots):
        raise SsdptsError(f"refusing {dev_path}: the device is read-only; make it writable ('blockdev --setrw "
                          f"{dev_path}', or attach the loop device without -r) or choose another device")
    if not destroy_data:
        sig = signature(dev_path) if check_signature else None
        if sig:
            raise SsdptsError(f"refusing {dev_path}: it holds a {sig}; add --destroy-data to overwrite it")
        raise SsdptsError(f"refusing {dev_path}: the test overwrites the whole device; add --destroy-data to consent")


_BLKROGET = 0x125E      # _IO(0x12, 94), linux/fs.h


def read_only(dev_path: str, name: str, roots: SysRoots) -> bool:
    """The kernel's read-only flag: sysfs `ro` of the device (a partition has its own) or BLKROGET."""
    if sysfs.read_only(name, roots):
        return True
    try:
        fd = os.open(dev_path, os.O_RDONLY)
    except OSError:
        return False
    try:
        return struct.unpack("i", fcntl.ioctl(fd, _BLKROGET, b"\0" * 4))[0] != 0
    except OSError:
        return False
    finally:
        os.close(fd)


_MARK = "user.ssdpts"


def mark_scratch_file(path: str) -> None:
    try:
        os.setxattr(path, _MARK, b"scratch")
    except OSError:
        Path(path + ".ssdpts").write_text("scratch file created by ssdpts\n")


def is_scratch_file(path: str) -> bool:
    try:
        return os.getxattr(path, _MARK) == b"scratch"
    except OSError:
        return Path(path + ".ssdpts").exists()


def check_file(path: str, destroy_data: bool, roots: SysRoots | None = None) -> None:
    p = Path(path)
    if p.exists():
        check_file_unused(path, roots or SysRoots())
    where = path if p.exists() else os.path.dirname(path)
    if os.statvfs(where).f_flag & os.ST_RDONLY:
        raise SsdptsError(f"refusing {path}: its file system is read-only; remount it read-write or put the file "
                          "on another file system")
    if not os.access(where, os.W_OK):
        raise SsdptsError(f"refusing {path}: {where} is not writable by this user; choose a file you may write")
    if p.exists() and p.stat().st_size > 0 and not destroy_data and not is_scratch_file(path):
        raise SsdptsError(f"refusing {path}: the file exists and was not created by ssdpts; "
                          "add --destroy-data to overwrite it or name a new file")


_LOOP_GET_STATUS64 = 0x4C05     # linux/loop.h; struct loop_info64 starts with lo_device, lo_inode (__u64 each)
_LOOP_INFO64_SIZE = 232


def _loop_backing_ids(loop: Path, roots: SysRoots) -> set[tuple[int, int]]:
    """(st_dev, st_ino) of the file behind an attached loop device, as the kernel has it (LOOP_GET_STATUS64: right
    for a renamed, deleted or other-namespace file) and as a stat of its sysfs backing_file finds it (the two
    differ where a file system reports another device number to stat, btrfs subvolumes)."""
    ids = set()
    try:
        fd = os.open(roots.dev / loop.name, os.O_RDONLY)
        try:
            ids.add(struct.unpack_from("QQ", fcntl.ioctl(fd, _LOOP_GET_STATUS64, bytes(_LOOP_INFO64_SIZE))))
        finally:
            os.close(fd)
    except OSError:
        pass
    name = sysfs.read_text(loop / "loop" / "backing_file").removesuffix(" (deleted)")
    if name and (st := _stat(name)):
        ids.add((st.st_dev, st.st_ino))
    return ids


def loops_backed_by(st: os.stat_result, roots: SysRoots) -> list[str]:
    """The attached loop devices (names) whose backing file is the file with this stat."""
    try:
        loops = sorted(d for d in (roots.sys / "block").iterdir() if (d / "loop" / "backing_file").exists())
    except OSError:
        return []
    return [d.name for d in loops if (st.st_dev, st.st_ino) in _loop_backing_ids(d, roots)]


def _swap_files(roots: SysRoots) -> list[str]:
    """/proc/swaps names, unescaped (the kernel writes a space in a path as \\040)."""
    return [re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), name) for name in _swap_devices(roots)]


def check_file_unused(path: str, roots: SysRoots) -> None:
    """An existing file target is refused, consent or not, while something else uses its bytes: a loop device
    (mounted or not: its user reads them), the kernel's swap, or another process writing it."""
    st = os.stat(path)
    loops = loops_backed_by(st, roots)
    if loops:
        mounted = _mounted_majmins(roots)
        where = [mounted[mm] for loop in loops for member in [loop] + sysfs.partitions(loop, roots)
                 if (mm := sysfs.majmin(member, roots)) in mounted]
        devices = [f"/dev/{loop}" for loop in loops]
        raise SsdptsError(f"refusing {path}: it backs loop device {', '.join(devices)}"
                          f"{f' (mounted at {where[0]})' if where else ''}; writing it would corrupt what the loop "
                          f"device holds: {'unmount and ' if where else ''}detach it first "
                          f"('losetup -d {' '.join(devices)}') or choose another file")
    for swap in _swap_files(roots):
        sw = _stat(swap)
        if sw is not None and stat.S_ISREG(sw.st_mode) and (sw.st_dev, sw.st_ino) == (st.st_dev, st.st_ino):
            raise SsdptsError(f"refusing {path}: it is an active swap file; run 'swapoff {shlex.quote(swap)}' first or "
                              "choose another file")
    writers = [o for o in open_by(path, roots) if o.writes]
    if writers:
        raise SsdptsError(f"refusing {path}: it is open for writing by {', '.join(map(str, writers))}; stop that "
                          "process first or choose another file")


def check_passthrough_unused(target: Target, roots: SysRoots | None = None) -> None:
    """Holding the namespace's block device keeps mounts and other ssdpts runs off it, not a process sending NVMe
    commands through the generic device: refuse while one has it open."""
    users = open_by(target.passthrough, roots)
    if users:
        raise SsdptsError(f"refusing {target.passthrough}: it is open by {', '.join(map(str, users))} (its NVMe "
                          "commands would reach the namespace beside the test's); stop that process first or choose "
                          "another namespace")


def check_distinct(drives: list[Target], roots: SysRoots | None = None) -> None:
    """The drives of one run share no bytes: not a disk and one of its partitions, not one file by two names."""
    roots = roots or SysRoots()
    local = [d for d in drives if d.host is None and d.kind in ("block", "file")]
    for i, a in enumerate(local):
        for b in local[i + 1:]:
            if a.kind == b.kind == "block" and a.path == b.path:
                raise SsdptsError(f"refusing {b.fio_filename}: it is the namespace of {a.fio_filename}, also named in "
                                  "this run (its block device and its NVMe generic device); name each namespace once")
            if a.kind == b.kind == "block":
                for disk, part in ((a, b), (b, a)):
                    name = sysfs.device_name(part.path, roots)
                    if sysfs.whole_disk(name, roots) != name and sysfs.whole_disk(name, roots) == \
                            sysfs.device_name(disk.path, roots):
                        raise SsdptsError(f"refusing {part.path}: it is a partition of {disk.path}, also named in "
                                          "this run (the test of the disk overwrites it); name the disk or its "
                                          "partitions, not both")
            elif a.kind == b.kind == "file" and (sa := _stat(a.path)) and (sb := _stat(b.path)) and \
                    (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino):
                raise SsdptsError(f"refusing {b.path}: it is the same file as {a.path} (a hard link); name each file "
                                  "once")


def written_paths(target: Target) -> list[str]:
    """The local files a run on `target` writes to: the target itself, and a loop device's backing file."""
    if target.host is not None or target.kind not in ("block", "file"):
        return []
    return [target.path] + ([target.info["backing_file"]] if target.info.get("backing_file") else [])


def check_not_results(target: Target, results_dir: Path) -> None:
    """ssdpts's own files are never a target, consent or not: the results directory and everything in it (the
    database with its -wal and -shm, logs, reports, checkpoints), also through another name (a hard link)."""
    root = os.path.realpath(results_dir)
    inside = [os.path.realpath(p) for p in written_paths(target)]
    ours = next((p for p in inside if p == root or p.startswith(root.rstrip(os.sep) + os.sep)), None)
    if ours is None and os.path.isdir(root):
        inodes = {(st.st_dev, st.st_ino): p for p in inside if (st := _stat(p))}
        for dirpath, _, files in os.walk(root):
            for f in files:
                st = _stat(os.path.join(dirpath, f))
                if st and (st.st_dev, st.st_ino) in inodes:
                    ours = inodes[(st.st_dev, st.st_ino)]
    if ours is not None:
        raise SsdptsError(f"refusing {target.spec}: {ours} is ssdpts's own results ({root}); name a device or a "
                          "scratch file outside the results directory")


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def check_target(target: Target, destroy_data: bool, results_dir: Path) -> None:
    """Every refusal of `target`, on every drive of it, before anything is created: what it is (mounted, swap,
    a loop device's backing file, ...), consent, and whether it could be held for the run (busy, another ssdpts
    run). `ssdpts run` and `ssdpts info` give this one answer."""
    check_distinct(target.drives())
    for member in target.drives():
        if member.host is not None:
            if not destroy_data:
                raise SsdptsError(f"refusing {member.label_id}: the test overwrites the remote target; "
                                  "add --destroy-data")
            continue   # the remote side is checked by its preflight probe; local sysfs says nothing about it
        check_not_results(member, results_dir)
        if member.kind == "block":
            check_block_device(member.path, destroy_data)
        elif member.kind == "file":
            check_file(member.path, destroy_data)
        if member.passthrough:
            check_passthrough_unused(member)
        hold.probe(member.kind, member.path)


def check_room(target: Target, cells: Iterable[tuple[str, Workload]]) -> None:
    """Refuse a target too small for what the tests will run: every I/O in flight needs its own blocks (largest
    I/O × threads × queue depth), and every job needs at least one I/O's worth of the active range."""
    cells = list(cells)
    test, w = max(cells, key=lambda tw: _in_flight(tw[1]), default=("", None))
    if w is not None and target.size_bytes < _in_flight(w):
        raise SsdptsError(f"refusing {target.label_id}: {target.size_bytes} bytes is too small for {test} cell "
                          f"{w.name} ({bs_label(w.max_bs)} I/Os × TC{w.threads} × QD{w.iodepth} = {_in_flight(w)} "
                          "bytes in flight); use a larger target or smaller I/Os, threads or queue depths")
    for test, w in cells:
        _, per_job, _ = w.clone_slices(target.size_bytes, target.logical_block_size)
        if per_job < w.max_bs:
            raise SsdptsError(f"refusing {target.label_id}: {test} cell {w.name} gives each of its {w.threads} jobs "
                              f"{per_job} bytes of the active range, less than one {bs_label(w.max_bs)} I/O; use a "
                              "larger target or a wider active_range")


def _in_flight(w: Workload) -> int:
    """Bytes of the largest I/Os all in flight at once."""
    return w.max_bs * w.threads * w.iodepth
