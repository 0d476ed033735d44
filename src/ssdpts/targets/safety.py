"""Refuse to write where it would destroy something: checks run before a single byte is written."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ..errors import SsdptsError
from . import sysfs
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
    if not destroy_data:
        sig = signature(dev_path) if check_signature else None
        if sig:
            raise SsdptsError(f"refusing {dev_path}: it holds a {sig}; add --destroy-data to overwrite it")
        raise SsdptsError(f"refusing {dev_path}: the test overwrites the whole device; add --destroy-data to consent")


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


def check_file(path: str, destroy_data: bool) -> None:
    p = Path(path)
    if p.exists() and p.stat().st_size > 0 and not destroy_data and not is_scratch_file(path):
        raise SsdptsError(f"refusing {path}: the file exists and was not created by ssdpts; "
                          "add --destroy-data to overwrite it or name a new file")
