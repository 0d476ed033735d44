"""The results database's medium: what a failed write means for the user (file system full or read-only,
an I/O error, another program's lock), each as one line naming the problem and the fix; the space a run
keeps in reserve to record why it stopped; and whether a database can be opened for writing at all."""

from __future__ import annotations

import errno
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from ..errors import SsdptsError

EX_IOERR = 74        # sysexits.h: an input/output error (the results medium failed a write)
EX_TEMPFAIL = 75     # sysexits.h: a temporary failure, try again later (another program's lock)
RESERVE_BYTES = 2**20   # a status update and its WAL frames need a few pages; the run log a few lines
FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)


class ResultsMediumError(SsdptsError):
    """A write to the results failed because of what holds them (full, read-only, I/O error)."""

    exit_code = EX_IOERR

    def __init__(self, problem: str, fix: str):
        self.problem, self.fix = problem, fix
        super().__init__(f"{problem}; {fix}, then run the command again")


class ResultsLockedError(SsdptsError):
    exit_code = EX_TEMPFAIL


class ResultsReadOnlyError(SsdptsError):
    """A command that writes, on a database this process can only read (exit 2: nothing was changed)."""


def _free_bytes(directory: Path) -> int | None:
    try:
        st = os.statvfs(directory)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def _mounted_read_only(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _refusal(directory: Path) -> int | None:
    """The errno with which `directory` refuses a new file now (None: it takes one)."""
    import tempfile     # here: only a refused write probes the directory

    try:
        fd, name = tempfile.mkstemp(prefix=".ssdpts-probe-", dir=directory)
    except OSError as e:
        return e.errno
    os.close(fd)
    os.unlink(name)
    return None


def full(directory: Path, detail: str) -> ResultsMediumError:
    free = _free_bytes(directory)
    room = f"{free} bytes free" if free is not None else "free space unknown"
    return ResultsMediumError(f"results file system full: {directory} has {room} ({detail})", "free space there")


def read_only(directory: Path, detail: str) -> ResultsMediumError:
    return ResultsMediumError(f"results file system read-only: {directory} is on a file system now mounted "
                              f"read-only ({detail})", "remount it read-write")


def medium_error(directory: Path, error: sqlite3.Error) -> ResultsMediumError | None:
    """What a failed SQLite write says about the medium, or None when it is not about the medium."""
    code = getattr(error, "sqlite_errorcode", 0) & 0xFF
    if code not in (sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN):
        return None
    if code == sqlite3.SQLITE_FULL:
        return full(directory, str(error))
    # SQLite does not pass errno on (EROFS comes back as an I/O error), and a file system that an error turns
    # read-only is flagged so a moment later: a file created beside the database says what a write meets now
    refused = _refusal(directory)
    if refused == errno.EROFS or _mounted_read_only(directory):
        return read_only(directory, str(error))
    if refused in FULL_ERRNOS:
        return full(directory, str(error))
    return ResultsMediumError(f"I/O error on the results database in {directory} ({error})",
                              "check the disk that holds it (dmesg)")


def os_medium_error(directory: Path, error: BaseException) -> ResultsMediumError | None:
    """An OSError of a write under the results directory (log, checkpoint) when that file system is the cause:
    full (less than the reserve left) or read-only; None otherwise (e.g. the target's file system)."""
    if not isinstance(error, OSError):
        return None
    if error.errno == errno.EROFS and _mounted_read_only(directory):
        return read_only(directory, str(error))
    if error.errno in FULL_ERRNOS and (_free_bytes(directory) or 0) < RESERVE_BYTES:
        return full(directory, str(error))
    return None


def why_read_only(db: Path) -> str:
    """Why this process can only read the database file `db` ("" when it can write it, or it is not there)."""
    if not db.exists():
        return ""
    if _mounted_read_only(db):
        return "its file system is mounted read-only"
    if not os.access(db, os.W_OK):
        return "the file is not writable for this user"
    if not os.access(db.parent, os.W_OK | os.X_OK):   # WAL mode creates and removes -wal and -shm beside it
        return "its directory is not writable for this user"
    return ""


class SpaceReserve:
    """RESERVE_BYTES held on the results file system while a run writes there: when the file system fills
    up, releasing it first lets the run still record that it stopped and why."""

    def __init__(self, path: Path):
        self.path = path

    def hold(self) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.posix_fallocate(fd, 0, RESERVE_BYTES)   # allocated, not a sparse hole
        except OSError:
            os.close(fd)
            self.release()
            raise
        os.close(fd)

    def release(self) -> None:
        try:
            self.path.unlink(missing_ok=True)
        except OSError:     # a file system turned read-only keeps it: 'ssdpts delete' or the resume removes it
            pass


@dataclass(frozen=True)
class Holder:
    pid: int
    name: str
    locks: bool      # holds a write lock (from /proc/locks), else only has the file open (/proc/PID/fd)

    def __str__(self) -> str:
        return f"{self.name} (pid {self.pid})"


def _ids(paths: list[Path]) -> set[tuple[int, int]]:
    ids = set()
    for p in paths:
        try:
            st = p.stat()
        except OSError:
            continue
        ids.add((st.st_dev, st.st_ino))
    return ids


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "a process"


def _write_lockers(ids: set[tuple[int, int]]) -> set[int]:
    """Pids with a POSIX write lock on one of the files (SQLite locks byte ranges of the database file in
    rollback mode and of its -shm in WAL mode)."""
    pids = set()
    try:
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return pids
    for line in lines:
        fields = line.split()
        if "->" in fields or len(fields) < 6 or fields[3] != "WRITE":
            continue
        try:
            major, minor, inode = fields[5].split(":")
            key = (os.makedev(int(major, 16), int(minor, 16)), int(inode))
            if key in ids:
                pids.add(int(fields[4]))
        except ValueError:
            continue
    return pids


def _openers(ids: set[tuple[int, int]]) -> set[int]:
    pids = set()
    for fd_dir in Path("/proc").glob("[0-9]*/fd"):
        try:
            for fd in fd_dir.iterdir():
                st = fd.stat()
                if (st.st_dev, st.st_ino) in ids:
                    pids.add(int(fd_dir.parent.name))
                    break
        except OSError:
            continue
    return pids


def lock_holders(db: Path) -> list[Holder]:
    """Other processes of this host holding a write lock on the database (or its -wal/-shm); when none is
    seen, those that have one of them open."""
    ids = _ids([db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")])
    me = os.getpid()
    lockers = _write_lockers(ids) - {me}
    if lockers:
        return [Holder(pid, _name(pid), True) for pid in sorted(lockers)]
    return [Holder(pid, _name(pid), False) for pid in sorted(_openers(ids) - {me})]


def locked(db: Path, waited_s: float) -> ResultsLockedError:
    holders = lock_holders(db)
    if holders and holders[0].locks:
        who = ", ".join(map(str, holders)) + " holds a write lock on it"
        fix = f"let it finish its transaction or end it (kill {holders[0].pid})"
    elif holders:
        who = "a write lock is held; open by " + ", ".join(map(str, holders))
        fix = "let that program finish or end it"
    else:
        who = "a write lock is held by a process not on this host (or not visible to this user)"
        fix = "find the program using it and let it finish"
    return ResultsLockedError(f"results database {db} is locked: {who} (waited {waited_s:g} s); {fix}, "
                              "then run the command again")
