"""A kept trace (`ssdpts capture --keep-trace`): every read and write request the captured device was issued, in
time order, beside the workload file; and fio's iolog (version 3) made from it, for an exact replay.

File: gzip (level 1) of a magic line, then one fixed record per I/O (`RECORD`): the time since the capture began
(ns), the offset and size (bytes), the issuing process (the tracepoint's pid: the task that issued the request to
the device, often the application's thread, sometimes a kernel worker; 0 where the event has none) and the
direction. About 9 MB per million random I/Os (docs/rwsw-capture.md).

The iologs are written where fio runs (the engine, beside the job file) for the target it runs on, one per
issuing task (fio `numjobs` clones, each replaying its own): fio replays each I/O at its captured time
(`replay_time_scale` scales the times), with its captured offset, size and direction, redirected to the target
(`replay_redirect`). A captured offset beyond the target's end wraps around (offset
modulo the target's size, aligned to its logical block): sequential streams stay sequential and every size and
direction stays as captured; the LBA layout beyond the target's size folds onto it.
"""

from __future__ import annotations

import gzip
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

MAGIC = b"ssdpts.trace/1\n"
RECORD = struct.Struct("<QQIIB")      # t_ns, offset, size, pid, op (READ | WRITE)
READ, WRITE = 0, 1
OPS = {"read": READ, "write": WRITE}
_FLUSH_BYTES = 1 << 20
TRACE_SUFFIX = ".trace.gz"


@dataclass(frozen=True)
class TraceIo:
    t_ns: int                    # since the capture began
    op: str                      # read | write
    offset: int                  # bytes from the captured device's start
    size: int                    # bytes
    pid: int                     # the issuing task (0: not known)


class TraceWriter:
    """Appends I/Os to a kept trace; buffered, so a live capture pays a struct pack per I/O. Written to a
    temporary file beside `path`, renamed to it by `close(keep=True)`."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._tmp = self.path.with_name(f".{self.path.name}.tmp")
        self._f = gzip.open(self._tmp, "wb", compresslevel=1)
        self._f.write(MAGIC)
        self._buf = bytearray()
        self.ios = 0
        self.bytes = 0

    def add(self, t_ns: int, op: str, offset: int, size: int, pid: int) -> None:
        self._buf += RECORD.pack(t_ns, offset, size, pid, OPS[op])
        self.ios += 1
        self.bytes += size
        if len(self._buf) >= _FLUSH_BYTES:
            self._f.write(self._buf)
            self._buf.clear()

    def close(self, keep: bool) -> None:
        """Finish the file at `path` (keep), or remove what was written."""
        if self._f is not None:
            self._f.write(self._buf)
            self._f.close()
            self._f = None
            if keep:
                self._tmp.replace(self.path)
            else:
                self._tmp.unlink(missing_ok=True)


class TraceProblem(ValueError):
    """The file is not a kept trace, or it is cut short."""


def read_trace(path: str | Path) -> Iterator[TraceIo]:
    """The trace's I/Os in time order."""
    names = {READ: "read", WRITE: "write"}
    try:
        with gzip.open(path, "rb") as f:
            if f.read(len(MAGIC)) != MAGIC:
                raise TraceProblem(f"{path} is not an ssdpts trace (capture --keep-trace writes them)")
            while chunk := f.read(RECORD.size * 4096):
                if len(chunk) % RECORD.size:
                    raise TraceProblem(f"{path} is cut short (a partial record at its end)")
                for t, offset, size, pid, op in RECORD.iter_unpack(chunk):
                    yield TraceIo(t, names.get(op, "read"), offset, size, pid)
    except (OSError, EOFError) as e:
        raise TraceProblem(f"{path}: {e}") from None


@dataclass(frozen=True)
class IologMade:
    """What an iolog made from a trace holds."""

    ios: int
    bytes: int
    wrapped: int                 # I/Os whose offset wrapped around the target's end
    duration_us: int             # the last I/O's time


def trace_tasks(path: str | Path) -> list[int]:
    """The trace's issuing tasks (pids; 0: not known), in the order they first issued."""
    seen: dict[int, None] = {}
    for io in read_trace(path):
        seen.setdefault(io.pid, None)
    return list(seen)


def write_iologs(trace: str | Path, outs: list[Path], device: str, target_bytes: int, align: int) -> IologMade:
    """fio iologs (version 3) of `trace` for a target of `target_bytes`, one per issuing task: the task that
    first issued goes to `outs[0]`, the next to `outs[1]`, ... (around again when there are more tasks than
    files); each file names `device` (the job's replay_redirect sends it to the target).

    Times in µs from the trace's first I/O, plus 1: fio delays each I/O by its time minus the previous line's,
    from the file's open, and takes a previous time of 0 as "none" (it would issue the next I/O at once); the
    add/open lines at 1 make every file's first I/O wait its own time, so the tasks keep their captured offsets
    to one another."""
    span = target_bytes // align * align
    ios = nbytes = wrapped = last = 0
    files = [open(out, "w") for out in outs]
    slot: dict[int, int] = {}
    try:
        for f in files:
            f.write(f"fio version 3 iolog\n1 {device} add\n1 {device} open\n")
        first = None
        for io in read_trace(trace):
            offset = io.offset
            if offset + io.size > span:
                wrapped += 1
                offset = offset % span // align * align
                if offset + io.size > span:
                    offset = max(0, (span - io.size) // align * align)
            first = io.t_ns if first is None else first
            last = 1 + (io.t_ns - first) // 1000
            k = slot.setdefault(io.pid, len(slot) % len(files))
            files[k].write(f"{last} {device} {io.op} {offset} {io.size}\n")
            ios += 1
            nbytes += io.size
        for f in files:
            f.write(f"{last} {device} close\n")
    finally:
        for f in files:
            f.close()
    return IologMade(ios, nbytes, wrapped, last)


def trace_path(workload_file: str | Path) -> Path:
    """The kept trace beside a workload file: app.workload.json -> app.trace.gz."""
    p = Path(workload_file)
    stem = p.name[:-len(".workload.json")] if p.name.endswith(".workload.json") else p.stem
    return p.with_name(stem + TRACE_SUFFIX)
