"""File-system actions of the file-system studies: make a file system on a raw device, mount it in a private
directory (always unmounted and removed), create a test file in it, TRIM a device or a mounted file system and
time it. (Where an existing file lives: targets/placement.py.)

A test never runs mkfs, mount or fstrim itself: it calls these (docs/fs-studies.md).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Iterator

from ..errors import SsdptsError
from ..realtime.timing import PURGE_TIMEOUT_S, TOOL_TIMEOUT_S
from . import sysfs
from .base import Target
from .resolve import open_target, prepare_file
from .sysfs import SysRoots



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
    free = os.statvfs(mount_point)
    room = free.f_bavail * free.f_frsize
    if size_bytes > room:
        raise SsdptsError(f"the test file ({size_bytes} bytes) does not fit in the new file system ({room} bytes "
                          "free); lower file_size_percent")
    target = open_target(os.path.join(mount_point, name), size=size_bytes)
    prepare_file(target)
    return target
