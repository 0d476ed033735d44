"""A drive that fails I/O is a result, not a crash: the evidence of a failed drive from fio's own output
and the kernel log of the round's window.

fio reports a failed I/O twice: a stderr line per error (`fio: io_u error on file /dev/sdc: Input/output
error: read offset=8388608, buflen=4096`) and, in its JSON, the job's `error` (the first errno) with
`total_err` (errors counted). A job whose first error is one a drive gives (EIO, ENXIO, EROFS, ...) or
that printed io_u errors failed on the drive; anything else (a bad option, a missing binary) is fio's own
failure and stays an ordinary error. docs/faults.md shows what each injected fault leaves here.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

from ..errors import SsdptsError
from ..realtime.timing import VANISH_SETTLE_S
from .fiojson import load_document

# errnos a drive (or its driver) returns for an I/O: media errors, a device gone, read-only media, timeouts
DRIVE_ERRNOS = frozenset({errno.EIO, errno.ENXIO, errno.ENODEV, errno.EROFS, errno.EPERM, errno.ENOMEDIUM,
                          errno.EMEDIUMTYPE, errno.EREMOTEIO, errno.ETIMEDOUT, errno.ENOLINK, errno.EBADE,
                          errno.ENODATA, errno.EILSEQ, errno.ENOSPC})
_IO_U_ERROR = re.compile(r"io_u error on file (?P<file>\S+?): (?P<why>[^:]+): (?P<dir>\w+) offset=(?P<offset>\d+)")
MAX_KERNEL_LINES = 20    # the first ones of the window: the later ones repeat them


@dataclass
class DriveFailure:
    """One drive that failed I/O in a round: what fio and the kernel said, stored with the run."""

    drive: str                    # the member's label (device path)
    cell: str                     # the cell whose I/O failed first
    errors: int                   # fio's count of failed I/Os on this drive in the round (at least 1)
    errno: int                    # the first error fio got (0: fio named none)
    message: str                  # fio's first error line for this drive
    offset: int | None = None     # byte offset of the first failed I/O, where fio printed it
    kernel_log: list[str] = field(default_factory=list)   # kernel log lines of the round's window
    test: str = ""                # set by the runner: the test it happened in
    evidence_dir: str = ""        # the round's kept job file and fio stderr

    def line(self) -> str:
        """One line: the drive, where, how many errors, fio's error."""
        where = f"{self.test + ', ' if self.test else ''}cell {self.cell}"
        at = f" at byte offset {self.offset}" if self.offset is not None else ""
        what = os.strerror(self.errno) if self.errno else "error"
        if not self.errors:        # gone between two I/Os of fio's: no error counted, the device is missing
            return f"drive {self.drive} failed ({where}): {what}"
        return f"drive {self.drive} failed ({where}): {self.errors} I/O error(s), first {what}{at}"

    def evidence(self) -> str:
        """The line, fio's own error and the kernel's first word on it (where it said one)."""
        kernel = f"; kernel: {self.kernel_log[0]}" if self.kernel_log else "; the kernel logged nothing"
        return f"{self.line()}; fio: {self.message}{kernel}"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "DriveFailure":
        names = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in d.items() if k in names})


class DriveFailed(SsdptsError):
    """A round ended because a drive failed I/O; `failures` has the evidence (one per failed drive).
    Not a user error: the run records it as its verdict (status drive-failed) and exits 1."""

    exit_code = 1

    def __init__(self, failures: Sequence[DriveFailure]):
        super().__init__("; ".join(f.line() for f in failures))
        self.failures = list(failures)


def _errors_by_file(stderr: str) -> dict[str, list[re.Match]]:
    found: dict[str, list[re.Match]] = {}
    for m in _IO_U_ERROR.finditer(stderr):
        found.setdefault(m.group("file"), []).append(m)
    return found


def _member_of(job: dict, members: int) -> int:
    """Which member a job ran on: several targets' jobs are named `cell@index` (workload.render_on)."""
    name = str(job.get("jobname", ""))
    suffix = name.rpartition("@")[2]
    return int(suffix) if members > 1 and "@" in name and suffix.isdigit() else 0


def drive_failures(output: str, stderr: str, drives: Sequence[tuple[str, str]],
                   kernel_log: Sequence[str] = ()) -> list[DriveFailure]:
    """The drives that failed I/O in one fio process's run, from its JSON `output` and `stderr`.
    `drives`: (label, fio file name) of each member. Empty when fio's failure was not a drive's."""
    try:
        jobs = load_document(output).get("jobs") or []
    except SsdptsError:
        jobs = []      # fio died before its report: its stderr lines are all there is
    lines = _errors_by_file(stderr)
    failures = []
    for index, (label, filename) in enumerate(drives):
        own = [j for j in jobs if _member_of(j, len(drives)) == index]
        failed_jobs = [j for j in own if j.get("error") in DRIVE_ERRNOS or int(j.get("total_err") or 0) > 0]
        first = lines.get(filename) or ([m for ms in lines.values() for m in ms] if len(drives) == 1 else [])
        if not failed_jobs and not first:
            continue
        counted = sum(int(j.get("total_err") or 0) for j in failed_jobs)
        errno_ = next((int(j["error"]) for j in failed_jobs if j.get("error")), 0)
        cell = str(failed_jobs[0].get("jobname", "")) if failed_jobs else ""
        failures.append(DriveFailure(
            drive=label, cell=cell.split("@")[0], errors=max(counted, len(first), 1), errno=errno_,
            message=first[0].group(0) if first else f"fio job {cell} ended with error {errno_}",
            offset=int(first[0].group("offset")) if first else None, kernel_log=list(kernel_log)))
    return failures


# what opening a block device whose drive the kernel removed answers: its node gone (udev removed it), or
# the node left behind with no device under it
_GONE_ERRNOS = frozenset({errno.ENOENT, errno.ENODEV, errno.ENXIO, errno.ENOMEDIUM})


def _presence(path: str) -> str | None:
    """'gone' (no node, no device under it), 'going' (its capacity zeroed or it no longer opens: the kernel is
    removing it), 'present', or None for anything that is not a local block device node."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "gone"
    except OSError:
        return None
    if not stat.S_ISBLK(st.st_mode):
        return None
    size = Path(f"/sys/dev/block/{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}/size")
    try:
        if int(size.read_text()) == 0:
            return "going"        # a removed NVMe namespace's capacity is set to 0 first (fio: no O_DIRECT)
    except FileNotFoundError:
        return "gone"
    except (OSError, ValueError):
        pass
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
    except OSError as e:
        return "gone" if e.errno in _GONE_ERRNOS else "going"
    return "present"


def vanished(label: str, path: str, cell: str, settle_s: float = VANISH_SETTLE_S) -> DriveFailure | None:
    """The drive at `path` as a failure if the kernel no longer has it, or is removing it (pulled out while fio
    opened it: fio then fails at open, e.g. 'destination does not support O_DIRECT', and counts no I/O
    error); a drive being removed is given `settle_s` to go. None while it is there and usable, and for
    anything that is not a local block device node."""
    state = _presence(path)
    deadline = time.monotonic() + settle_s
    while state == "going" and time.monotonic() < deadline:
        time.sleep(0.1)
        state = _presence(path)
    if state == "gone":
        return DriveFailure(drive=label, cell=cell, errors=0, errno=errno.ENODEV,
                            message=f"{path} is gone: the kernel removed the drive during cell {cell}")
    if state == "going":
        return DriveFailure(drive=label, cell=cell, errors=0, errno=errno.ENODEV,
                            message=f"{path} is going: its capacity is 0 or it no longer opens (the kernel is "
                                    f"removing the drive) since cell {cell}")
    return None


# What the kernel says when block I/O fails, whichever device it names (or whether it names one): kept as a
# failed drive's evidence when no line of the round's window names the drive itself. Kernel wording:
# blk_print_req_error ("I/O error, dev sdd, sector ...", "critical medium error, dev ...", "timeout error,
# dev ..."; "blk_update_request:" / "print_req_error:" before it on older kernels), buffer heads ("Buffer
# I/O error on dev ..."), SCSI sense and offline devices, NVMe command timeouts and controller resets, ATA
# link resets. Anything else (a scheduler, a network card) is not evidence of a drive failure.
BLOCK_IO_FAILURE_PATTERNS = (
    r"I/O error",
    r"\berror, dev \S+, sector",
    r"blk_update_request",
    r"print_req_error",
    r"Sense Key : (Medium|Hardware) Error",
    r"FAILED Result:",
    r"rejecting I/O to (offline|dead) device",
    r"\bI/O (tag )?\d+ .*QID \d+ timeout",
    r"timing out command",
    r"reset(ting)? controller",
    r"hard resetting link",
    r"failed command:",
)
_BLOCK_IO_FAILURE = re.compile("|".join(BLOCK_IO_FAILURE_PATTERNS), re.IGNORECASE)
NOT_NAMING_THE_DRIVE = " (a block I/O failure in the round's window; it does not name the drive)"


def _naming(name: str) -> re.Pattern:
    """A kernel name as a whole word, with its partitions (sdd1, nvme1n1p2): loop1 is not loop10."""
    partition = r"(?:p\d+)?" if name[-1].isdigit() else r"\d*"
    return re.compile(rf"(?<![\w-]){re.escape(name)}{partition}(?![\w-])")


class KernelLog:
    """The kernel log from a point on (/dev/kmsg, read without blocking): what the kernel said about the
    drives while a round ran. Unreadable (not root, a container): no lines, never an error."""

    def __init__(self, path: str = "/dev/kmsg"):
        try:
            self.fd: int | None = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            self.fd = None
        if self.fd is not None:
            try:
                os.lseek(self.fd, 0, os.SEEK_END)     # only what comes after the session started
            except OSError:
                pass      # a pipe has no past to skip
        self._records: list[tuple[float, str]] = []   # (CLOCK_MONOTONIC seconds, text)

    def _read(self) -> None:
        while self.fd is not None:
            try:
                chunk = os.read(self.fd, 8192).decode(errors="replace")
            except BlockingIOError:
                return
            except OSError as e:
                if e.errno == errno.EPIPE:      # overwritten before we read it: go on with the next
                    continue
                return
            if not chunk:        # the end of a file or pipe (/dev/kmsg itself answers EAGAIN)
                return
            # /dev/kmsg gives one record a read ("PRIO,SEQ,USEC,FLAGS;text", then " KEY=value" lines);
            # a file or pipe with recorded ones gives several
            for line in chunk.splitlines():
                head, sep, text = line.partition(";")
                parts = head.split(",")
                if sep and not line.startswith(" ") and len(parts) >= 3 and parts[2].isdigit():
                    self._records.append((int(parts[2]) / 1e6, text))

    def since(self, wall_time: float, names: Sequence[str] = ()) -> list[str]:
        """Lines logged since `wall_time` (time.time()) that concern the drives: those naming one of `names`
        (kernel device names: kernel_names); when none does, those about block I/O failures in general
        (BLOCK_IO_FAILURE_PATTERNS), marked as not naming the drive; never anything else. At most
        MAX_KERNEL_LINES."""
        self._read()
        start = time.monotonic() - (time.time() - wall_time)
        window = [f"[{t:.6f}] {text}" for t, text in self._records if t >= start]
        naming = [_naming(n) for n in names if n]
        named = [line for line in window if any(p.search(line) for p in naming)]
        if named:
            return named[:MAX_KERNEL_LINES]
        failures = [line + NOT_NAMING_THE_DRIVE for line in window if _BLOCK_IO_FAILURE.search(line)]
        return failures[:MAX_KERNEL_LINES]

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def kernel_names(path: str) -> list[str]:
    """The names the kernel logs a block device under: its own (sdc, nvme1n1, dm-0), its controller
    (nvme1) and the disks below a device-mapper device."""
    try:
        name = Path(os.path.realpath(path)).name
    except OSError:
        return []
    names = [name]
    nvme = re.match(r"(nvme\d+)n\d+", name)
    if nvme:
        names.append(nvme.group(1))
    slaves = Path(f"/sys/class/block/{name}/slaves")
    if slaves.is_dir():
        names += [p.name for p in slaves.iterdir()]
    return names
