"""Captures taken elsewhere, read as `IoEvent`s: blktrace (blkparse's text, or its binary files through an
installed blkparse) and fio's iolog (`fio --write_iolog`, versions 2 and 3).

blkparse's default line (blkparse(1), "%D %2c %8s %5T.%9t %5p %2a %3d "): device, CPU, sequence, time in
seconds, pid, action, rwbs, then for D (issued to the driver) and C (completed) "SECTOR + SECTORS". Only D
and C are used: they are what tracefs' block_rq_issue/block_rq_complete report.

fio's iolog holds no completions, so an iolog gives IO streams but no queue depths; version 2 holds no
times either (one step, duration unknown); version 3 starts each line with milliseconds since the job began.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ..errors import SsdptsError
from ..inputs import read_text
from .reduce import SECTOR, IoEvent, op_of_rwbs

_BLKPARSE = re.compile(r"^\s*(\d+),(\d+)\s+\d+\s+\d+\s+(\d+\.\d+)\s+\d+\s+([DC])\s+(\S+)\s+(\d+) \+ (\d+)")
_IOLOG_OPS = {"read": "read", "write": "write", "trim": "discard", "sync": "flush", "datasync": "flush"}


@dataclass
class Imported:
    """Events read from files, in time order, and what the files said about themselves."""

    events: list[IoEvent]
    device: str               # the device or file name the records name
    timed: bool               # False: no timestamps (fio iolog v2)
    with_queue_depth: bool    # False: no completions (fio iolog)
    note: str


def read_blktrace(directory: str) -> Imported:
    """A directory of blkparse text output (*.txt or any text file), or binary blktrace files
    (NAME.blktrace.CPU) parsed with blkparse."""
    d = Path(directory)
    if not d.is_dir():
        raise SsdptsError(f"--from-blktrace {d} is not a directory; give the directory holding the blktrace "
                          "files (NAME.blktrace.N) or blkparse's text output")
    binaries = sorted(d.glob("*.blktrace.*"))
    if binaries:
        texts = [_blkparse(d, sorted({p.name.split(".blktrace.")[0] for p in binaries}))]
        note = f"blktrace files {', '.join(p.name for p in binaries)} parsed with blkparse"
    else:
        files = sorted(p for p in d.iterdir() if p.is_file())
        if not files:
            raise SsdptsError(f"--from-blktrace {d} is empty; give a directory with blktrace or blkparse output")
        texts = [read_text(p, "blkparse output") for p in files]
        note = f"blkparse text {', '.join(p.name for p in files)}"
    devices, events = set(), []
    for text in texts:
        for line in text.splitlines():
            m = _BLKPARSE.match(line)
            if m:
                major, minor, t, action, rwbs, sector, nr = m.groups()
                devices.add(f"{major},{minor}")
                events.append(IoEvent(float(t), action == "C", op_of_rwbs(rwbs), int(sector) * SECTOR,
                                      int(nr) * SECTOR))
    if not events:
        raise SsdptsError(f"--from-blktrace {d}: no issue (D) or completion (C) records found; give blkparse's "
                          "default output ('blkparse -i NAME -o NAME.txt') or the binary files")
    if len(devices) > 1:
        raise SsdptsError(f"--from-blktrace {d} holds records of {len(devices)} devices ({', '.join(sorted(devices))}); "
                          "give the files of one device")
    events.sort(key=lambda e: e.t)
    return Imported(events, f"blktrace device {devices.pop()}", True, True, note)


def _blkparse(d: Path, names: Iterable[str]) -> str:
    exe = shutil.which("blkparse")
    if exe is None:
        raise SsdptsError("binary blktrace files need blkparse, which is not installed (Debian: apt install "
                          "blktrace); or give blkparse's text output instead")
    out = []
    for name in names:
        p = subprocess.run([exe, "-q", "-D", str(d), "-i", name], capture_output=True, text=True)
        if p.returncode != 0:
            first = (p.stderr.strip().splitlines() or ["no message"])[0]
            raise SsdptsError(f"blkparse could not read {d}/{name}.blktrace.*: {first}")
        out.append(p.stdout)
    return "\n".join(out)


def read_iolog(path: str) -> Imported:
    """fio's iolog, version 2 or 3 (`fio --write_iolog=FILE`)."""
    lines = read_text(path, "fio iolog").splitlines()
    header = lines[0].strip() if lines else ""
    version = {"fio version 2 iolog": 2, "fio version 3 iolog": 3}.get(header)
    if version is None:
        raise SsdptsError(f"fio iolog {path} does not start with 'fio version 2 iolog' or 'fio version 3 iolog' "
                          f"(found {header[:40]!r}); write one with fio --write_iolog=FILE")
    events, names = [], set()
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split()
        t = 0.0
        if version == 3 and fields:
            t, fields = _number(fields[0], path, number) / 1000.0, fields[1:]
        if len(fields) < 2 or fields[1] in ("add", "open", "close"):
            continue
        if fields[1] not in _IOLOG_OPS or len(fields) < 4:
            raise SsdptsError(f"fio iolog {path} line {number}: {line.strip()[:60]!r} is not 'FILE ACTION OFFSET "
                              "LENGTH' (actions: read, write, trim, sync, datasync)")
        names.add(fields[0])
        events.append(IoEvent(t, False, _IOLOG_OPS[fields[1]], int(_number(fields[2], path, number)),
                              int(_number(fields[3], path, number))))
    if not events:
        raise SsdptsError(f"fio iolog {path} holds no I/O; give the iolog of a job that ran")
    if len(names) > 1:
        raise SsdptsError(f"fio iolog {path} has I/O to {len(names)} files ({', '.join(sorted(names)[:3])}...); "
                          "give the iolog of a job on one device or file")
    events.sort(key=lambda e: e.t)
    return Imported(events, names.pop(), version == 3, False, f"fio iolog version {version}")


def _number(text: str, path: str, line: int) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise SsdptsError(f"fio iolog {path} line {line}: {text!r} is not a non-negative number")
    return value
