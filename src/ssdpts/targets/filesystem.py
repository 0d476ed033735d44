"""File-system facts and actions: where a file target lives (file system, block device, whole disk), the O_DIRECT
alignment fio needs on it, and for the file-system studies: make a file system on a raw device, mount it in a
private directory (always unmounted and removed), TRIM a device or a mounted file system and time it.

A test never runs mkfs, mount or fstrim itself: it calls these (docs/fs-studies.md).
"""

from __future__ import annotations

import mmap
import os
import re
import shutil
import subprocess
import tempfile
import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ..errors import SsdptsError
from ..realtime.timing import PURGE_TIMEOUT_S, TOOL_TIMEOUT_S
from . import sysfs
from .base import Target
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


# --- file-system studies: mkfs, mount, TRIM ---------------------------------------------------------------------

FILESYSTEMS = ("ext4", "xfs")


def _tool(cmd: list[str], what: str, timeout: float = TOOL_TIMEOUT_S) -> subprocess.CompletedProcess:
    if not shutil.which(cmd[0]):
        raise SsdptsError(f"{what} needs {cmd[0]}, which is not installed; install it (e2fsprogs, xfsprogs, "
                          "util-linux) or choose another file system")
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        raise SsdptsError(f"'{' '.join(cmd)}' did not finish in {timeout:g} s; check the device") from None
    if out.returncode != 0:
        last = (out.stderr or out.stdout).strip().splitlines()[-1:] or [f"exit {out.returncode}"]
        raise SsdptsError(f"'{' '.join(cmd)}' failed: {last[0]}")
    return out


def mkfs_command(filesystem: str, device: str) -> list[str]:
    if filesystem == "ext4":
        return ["mkfs.ext4", "-q", "-F", device]
    if filesystem == "xfs":
        return ["mkfs.xfs", "-q", "-f", device]
    raise SsdptsError(f"file system {filesystem!r} is not supported; choose one of {', '.join(FILESYSTEMS)}")


def mkfs_available(filesystem: str) -> bool:
    return shutil.which(mkfs_command(filesystem, "/dev/null")[0]) is not None


@contextmanager
def mounted_filesystem(device: str, filesystem: str) -> Iterator[str]:
    """Make `filesystem` on `device` (destroying its data: the caller has the user's --destroy-data) and mount it
    on a private temporary directory; yields the mount point. Always unmounted and the directory removed, also
    on failure or Ctrl-C. The run's exclusive hold on the device is let go meanwhile (mount holds it instead)."""
    from .hold import released

    with released(device):
        _tool(mkfs_command(filesystem, device), f"making {filesystem}", timeout=PURGE_TIMEOUT_S)
        point = tempfile.mkdtemp(prefix="ssdpts-fs-")
        try:
            _tool(["mount", "-t", filesystem, device, point], f"mounting {device}")
            try:
                yield point
            finally:
                unmount(point)
        finally:
            os.rmdir(point)


def unmount(point: str) -> None:
    """Unmount, waiting out a brief busy (udev, a closing fio); lazily as the last resort so nothing stays."""
    for _ in range(10):
        if subprocess.run(["umount", point], capture_output=True, timeout=TOOL_TIMEOUT_S).returncode == 0:
            return
        time.sleep(0.5)
    subprocess.run(["umount", "-l", point], capture_output=True, timeout=TOOL_TIMEOUT_S)


@dataclass
class TrimRecord:
    """One TRIM of a whole device (blkdiscard) or of a mounted file system's free space (fstrim)."""

    command: str
    started: float                # wall clock (s since the epoch)
    seconds: float
    bytes_trimmed: int            # blkdiscard: the device size; fstrim: what it reports
    space_bytes: int              # what could be trimmed: the device size; the file system's free space
    gib_per_s: float | None       # bytes_trimmed in GiB (2^30 bytes) per second; None: no measurable time


def _timed_trim(cmd: list[str], release: str | None = None) -> tuple[subprocess.CompletedProcess, float, float]:
    from .hold import released

    with released(release) if release else nullcontext():
        started, t0 = time.time(), time.monotonic()
        out = _tool(cmd, "TRIM", timeout=PURGE_TIMEOUT_S)
        return out, started, time.monotonic() - t0


def _record(cmd: list[str], started: float, seconds: float, trimmed: int, space: int) -> TrimRecord:
    return TrimRecord(" ".join(cmd), started, seconds, trimmed, space,
                      trimmed / 2**30 / seconds if seconds > 0 else None)


def discard_max_bytes(device: str, roots: SysRoots | None = None) -> int:
    """The kernel's discard limit of a block device (of its disk for a partition); 0: no discard."""
    roots = roots or SysRoots()
    name = sysfs.device_name(device, roots)
    for d in (name, sysfs.whole_disk(name, roots)):
        value = sysfs.read_text(sysfs.block_dir(d, roots) / "queue" / "discard_max_bytes")
        if value:
            return int(value)
    return 0


FSTRIM_BYTES = re.compile(r"\((\d+) bytes\) trimmed")


def refuse_without_discard(device: str) -> None:
    if discard_max_bytes(device) <= 0:
        raise SsdptsError(f"{device} does not support TRIM/discard (discard_max_bytes = 0); the TRIM study needs a "
                          "device that does")


def trim_device(device: str, size_bytes: int) -> TrimRecord:
    """blkdiscard the whole device, timed (the run's exclusive hold let go: blkdiscard takes its own)."""
    refuse_without_discard(device)
    cmd = ["blkdiscard", "-f", device]
    _, started, seconds = _timed_trim(cmd, release=device)
    return _record(cmd, started, seconds, size_bytes, size_bytes)


def trim_filesystem(mount_point: str) -> TrimRecord:
    """fstrim -v on a mounted file system, timed; the bytes are what fstrim reports it trimmed."""
    cmd = ["fstrim", "-v", mount_point]
    fs = os.statvfs(mount_point)
    out, started, seconds = _timed_trim(cmd)
    m = FSTRIM_BYTES.search(out.stdout)
    if not m:
        raise SsdptsError(f"fstrim printed no byte count ({out.stdout.strip() or 'nothing'}); util-linux too old?")
    return _record(cmd, started, seconds, int(m.group(1)), fs.f_bfree * fs.f_frsize)


def make_test_file(mount_point: str, size_bytes: int, name: str = "ssdpts-test.img") -> Target:
    """A file target of `size_bytes` in a mounted file system, created fully allocated; refused (one line) when
    it does not fit in the file system's free space."""
    from .resolve import open_target, prepare_file

    free = os.statvfs(mount_point)
    room = free.f_bavail * free.f_frsize
    if size_bytes > room:
        raise SsdptsError(f"the test file ({size_bytes} bytes) does not fit in the new file system ({room} bytes "
                          "free); lower file_size_percent")
    target = open_target(os.path.join(mount_point, name), size=size_bytes)
    prepare_file(target)
    return target
