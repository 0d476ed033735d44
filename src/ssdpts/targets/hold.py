"""The run's exclusive hold on its target: a block device opened O_EXCL (nobody can mount it or start a second
ssdpts run on it), a file locked with flock (no second ssdpts run on it). A file-system study lets go of a
device while it runs mkfs, mount or blkdiscard itself (`released`).

Who else has a target open (`open_by`) is read from /proc: a refusal names the process and the fix."""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from ..errors import SsdptsError
from . import sysfs
from .sysfs import SysRoots

_held: dict[str, int] = {}      # device path -> the O_EXCL file descriptor of this process
_locked: dict[str, int] = {}    # file path -> the descriptor holding this process's flock on it


@dataclass(frozen=True)
class Opener:
    """A process that has the target open (found in /proc/PID/fd)."""

    pid: int
    command: str
    writes: bool = False          # one of its descriptors is open O_WRONLY or O_RDWR (/proc/PID/fdinfo)
    ssdpts: bool = False          # an ssdpts process (its command line names ssdpts)

    def __str__(self) -> str:
        return f"{self.command} (pid {self.pid})"


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def _rdevs(name: str, roots: SysRoots) -> set[str]:
    """major:minor of the device and its partitions: a process on a partition uses the disk too."""
    return {mm for m in [name] + sysfs.partitions(name, roots) if (mm := sysfs.majmin(m, roots))}


def _opened_for_writing(fdinfo: str) -> bool:
    """fdinfo's `flags:` are octal open(2) flags; the access mode is their low two bits."""
    for line in fdinfo.splitlines():
        if line.startswith("flags:"):
            try:
                return int(line.split()[1], 8) & os.O_ACCMODE in (os.O_WRONLY, os.O_RDWR)
            except (IndexError, ValueError):
                return False
    return False


def open_by(path: str, roots: SysRoots | None = None) -> list[Opener]:
    """Other processes holding `path` open: a block device (or one of its partitions) by device number, a file
    by inode. O_EXCL only stops other exclusive openers and mounts; a plain open (dd, a backup, a second fio)
    is seen only here. Processes this user may not look into are not seen (run as root to see all)."""
    roots = roots or SysRoots()
    st = _stat(path)
    if st is None:
        return []
    block = stat.S_ISBLK(st.st_mode)
    wanted = _rdevs(sysfs.device_name(path, roots), roots) if block else set()
    wanted.add(f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}" if block else "")

    def same(fd_st: os.stat_result) -> bool:
        if block:
            return stat.S_ISBLK(fd_st.st_mode) and f"{os.major(fd_st.st_rdev)}:{os.minor(fd_st.st_rdev)}" in wanted
        return (fd_st.st_dev, fd_st.st_ino) == (st.st_dev, st.st_ino)

    found = []
    try:
        pids = [int(p) for p in os.listdir(roots.proc) if p.isdigit()]
    except OSError:
        return []
    for pid in pids:
        if pid == os.getpid():
            continue
        fd_dir = roots.proc / str(pid) / "fd"
        try:
            fds = [fd for fd in os.listdir(fd_dir) if (fd_st := _stat(str(fd_dir / fd))) is not None and same(fd_st)]
        except OSError:
            continue
        if fds:
            writes = any(_opened_for_writing(sysfs.read_text(roots.proc / str(pid) / "fdinfo" / fd)) for fd in fds)
            try:
                args = (roots.proc / str(pid) / "cmdline").read_bytes().split(b"\0")
            except OSError:
                args = []
            ours = any(os.path.basename(a) == b"ssdpts" or a == b"ssdpts" for a in args)
            found.append(Opener(pid, sysfs.read_text(roots.proc / str(pid) / "comm") or "?", writes, ours))
    return found


def busy_device(path: str, roots: SysRoots | None = None) -> str:
    """Why an O_EXCL open of `path` failed once mounts, swap and md/LVM holders were ruled out (they are
    refused by name before): the processes that have it open, or the kernel users it may be held by."""
    openers = open_by(path, roots)
    runs = [o for o in openers if o.ssdpts]
    if runs:
        return (f"refusing {path}: another ssdpts run holds it ({', '.join(map(str, runs))}); wait for that run to "
                "end or stop it ('ssdpts list' shows it)")
    if openers:
        return (f"refusing {path}: another program holds it exclusively (open by {', '.join(map(str, openers))}); "
                "stop that program or choose another device")
    return (f"refusing {path}: the kernel holds it exclusively (a mount in another mount namespace, a swap area, "
            f"a device-mapper or bcache user, or its disk or a partition is named twice); 'lsblk {path}' and "
            f"'fuser -vm {path}' show the user: stop that use first")


def _claim(path: str) -> int:
    try:
        return os.open(path, os.O_RDONLY | os.O_EXCL)
    except OSError as e:
        if e.errno == errno.EBUSY:
            raise SsdptsError(busy_device(path)) from None
        raise


def _lock_file(path: str) -> int:
    """A descriptor of `path` holding its flock (released when it is closed)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        runs = [o for o in open_by(path) if o.ssdpts]
        who = f" ({', '.join(map(str, runs))})" if runs else ""
        raise SsdptsError(f"refusing {path}: another ssdpts run is using this file{who}; wait for it to end or "
                          "stop it ('ssdpts list' shows it)") from None
    return fd


@contextmanager
def held(path: str) -> Iterator[None]:
    """Hold block device `path` exclusively for the block."""
    _held[path] = _claim(path)
    try:
        yield
    finally:
        fd = _held.pop(path, None)      # None: a study could not take it back (it said so)
        if fd is not None:
            os.close(fd)


@contextmanager
def locked(path: str) -> Iterator[None]:
    """Hold file `path` (when it exists) with flock for the block: a second ssdpts run on it is refused."""
    if os.path.exists(path):
        _locked[path] = _lock_file(path)
    try:
        yield
    finally:
        fd = _locked.pop(path, None)
        if fd is not None:
            os.close(fd)


def remove_locked_file(path: str) -> None:
    """Delete file `path`, closing this process's lock on it first: an open descriptor keeps a deleted file's
    blocks allocated, so the file made in its place would need room for both (ENOSPC where fio alone fits).
    `relock` takes the lock on the new file."""
    fd = _locked.pop(path, None)
    if fd is not None:
        os.close(fd)
    os.remove(path)


def relock(path: str) -> None:
    """Lock file `path` as it is now (made anew after `remove_locked_file`), when this process holds none."""
    if path not in _locked and os.path.exists(path):
        _locked[path] = _lock_file(path)


def probe(kind: str, path: str) -> None:
    """Refuse now what holding the target would refuse (busy, another ssdpts run), holding nothing after."""
    if kind == "block":
        os.close(_claim(path))
    elif kind == "file" and os.path.exists(path):
        os.close(_lock_file(path))


@contextmanager
def released(path: str) -> Iterator[None]:
    """Let go of this process's hold on `path` (if it has one) for the block, and take it back after."""
    fd = _held.pop(path, None)
    if fd is None:
        yield
        return
    os.close(fd)
    try:
        yield
    finally:
        _held[path] = _claim(path)
