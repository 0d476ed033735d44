"""What the device saw during each cell (its *stimulus*), from the block layer, and how it compares with what
the cell asked for.

At every cell boundary (the gates know them, engines/gates.py) the engine reads the kernel's counters of the
device, `/sys/block/DEV/stat` (Documentation/block/stat.rst): reads/writes/discards completed, sectors moved,
io_ticks (field 10: ms with at least one request in flight) and time_in_queue (field 11: the sum of every
request's time in flight, ms). Their differences over a cell are its `Stimulus`: requests and bytes per
direction, mean request size, read share, mean queue depth (Little's law: time in queue / elapsed) and
utilisation (io_ticks / elapsed). The simulated drive gives the same record from its own counters (host bytes,
clock) and its per-job request counts and latencies.

`judge` compares a record with the cell's workload and fio's own counts; the tolerances below say why they are
what they are (docs/conformance.md, 'Stimulus').
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from ..workload import Workload
    from .results import CellResult

SECTOR = 512          # /sys/block/DEV/stat counts 512-byte sectors whatever the device's block size

# Tolerances, measured on loop devices (kernel 6.18, direct-io loop, scheduler none and mq-deadline, fio
# io_uring and libaio; docs/conformance.md 'Stimulus' has the table):
# random 4K at QD 1-32 and sequential 4K/128K reached the device as requests of exactly the block size (0 merges,
# requests = fio's total_ios); 1 MiB I/O was split into 512 KiB requests at the default limits (max_segments=128
# of 4 KiB pages) and into 64 KiB ones at max_sectors_kb=64. A split at least halves a request, so 10 % leaves
# room for a few foreign requests without hiding any split.
REQUEST_SIZE_TOLERANCE = 0.10
# Read share by bytes (merges and splits change request counts, never bytes): fio's rwmixread=70 gave 69.96 %.
# 5 points, or 4 binomial standard deviations where a cell has too few I/Os for that.
MIX_TOLERANCE_PTS = 5.0
MIX_SIGMAS = 4.0
# Device bytes against fio's: equal over whole fio runs on loop devices. A time-based cell's successor is let go
# at its predicted end, and fio counts its runtime from its own start a little after its release: with 200 ms
# cells on a loaded 2-core host up to 12 % of a cell's bytes completed in the next cell's window. 25 % plus the
# in-flight I/O of both neighbours (2 x threads x iodepth x block size) still catches I/O that never reached
# the device (page cache, another device) and foreign I/O of the cell's size.
BYTES_TOLERANCE = 0.25
# A direction the cell did not use is judged by the mix only; others get FOREIGN_BYTES more: udev probes a block
# device (blkid reads its first and last blocks) each time a process that opened it for writing closes it.
FOREIGN_BYTES = 1 << 20
# Mean queue depth, in the cell's own I/Os (a split I/O counts once): the device cannot hold more than the cell's
# threads x iodepth. Below that is common (a loop device at QD 32 kept 17-21 in flight: host time between a
# completion and the next submission), not a stimulus mismatch; docs/conformance.md says what judges it.
QUEUE_DEPTH_EXCESS = 1.25
# A cell whose predecessor ran on into its window for more than this share of it is judged by that alone: its
# record holds both cells' I/O (fio's teardown, 10-25 ms, is counted in the overlap: 10 % of a 200 ms cell).
OVERLAP_SHARE = 0.10
QUEUE_DEPTH_SLACK = 1.0


@dataclass
class Stimulus:
    """The I/O the device completed during one cell, from the block layer or the simulator's counters. `note`
    set: not measured (why, e.g. 'not available: remote target ...'); the figures are then 0/None."""

    source: str = ""              # "block layer: loop3" | "simulator counters"
    note: str = ""
    elapsed_ms: float = 0.0
    read_ios: int = 0
    read_bytes: int = 0
    write_ios: int = 0
    write_bytes: int = 0
    discard_ios: int = 0
    discard_bytes: int = 0
    busy_ms: float | None = None      # field 10, io_ticks (None: the simulator has no such counter)
    in_queue_ms: float | None = None  # field 11, time_in_queue; simulator: the sum of its requests' latencies
    devices: int = 1
    # the request-size limits of the device's queue when the cell ran (sysfs queue/), None where unknown
    max_sectors_kb: int | None = None
    max_segments: int | None = None
    page_size: int | None = None
    # the cell before ran on into this one's window by this much (its last clone reported its end this long
    # after this cell's release; fio's teardown included): their I/O is mixed in both records
    overlap_ms: float = 0.0
    # this cell ran on into the next one's window by this much (its last clone reported its end this long after the
    # next cell's release; fio's teardown included): the I/O of that time is counted in the next record, not here
    # (0 for records stored before it was kept)
    ran_on_ms: float = 0.0
    # the bytes of the cell's warm-up (fio ramp_time: done, not counted by the engine) where the record knows them
    # apart (the simulator runs the warm-up as its own job); None: the warm-up is only inside the counts
    warmup_read_bytes: int | None = None
    warmup_write_bytes: int | None = None

    @property
    def measured(self) -> bool:
        return not self.note

    @property
    def mixed_with_neighbours(self) -> bool:
        """The cell before ran on into this window, or this cell into the next one's, for more than OVERLAP_SHARE of
        it: the record holds a neighbour's I/O or lacks the cell's own tail, so its shares are the window's."""
        return self.elapsed_ms > 0 and max(self.overlap_ms, self.ran_on_ms) > OVERLAP_SHARE * self.elapsed_ms

    def request_bytes(self, direction: str) -> float | None:
        ios = getattr(self, f"{direction}_ios")
        return getattr(self, f"{direction}_bytes") / ios if ios else None

    @property
    def read_share(self) -> float | None:
        """Reads' share of the bytes read and written (0..1)."""
        total = self.read_bytes + self.write_bytes
        return self.read_bytes / total if total else None

    @property
    def queue_depth(self) -> float | None:
        """Mean requests in flight (per device where several carry the cell)."""
        if self.in_queue_ms is None or self.elapsed_ms <= 0:
            return None
        return self.in_queue_ms / self.elapsed_ms / self.devices

    @property
    def utilisation(self) -> float | None:
        """Share of the cell's time with at least one request in flight (0..1, mean over devices)."""
        if self.busy_ms is None or self.elapsed_ms <= 0:
            return None
        return min(1.0, self.busy_ms / self.elapsed_ms / self.devices)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Stimulus":
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})

    def __add__(self, other: "Stimulus") -> "Stimulus":
        """Consecutive slices of one cell (the simulator's streamed intervals, or its warm-up then the cell)."""
        def add(a, b):
            return None if a is None or b is None else a + b
        return Stimulus(self.source, self.note or other.note, self.elapsed_ms + other.elapsed_ms,
                        *(getattr(self, k) + getattr(other, k) for k in COUNTS),
                        add(self.busy_ms, other.busy_ms), add(self.in_queue_ms, other.in_queue_ms), self.devices,
                        self.max_sectors_kb, self.max_segments, self.page_size, self.overlap_ms,
                        other.ran_on_ms, add(self.warmup_read_bytes, other.warmup_read_bytes),
                        add(self.warmup_write_bytes, other.warmup_write_bytes))

    def as_warmup(self) -> "Stimulus":
        """This record as a cell's warm-up, added before the cell's own: its bytes stay known apart."""
        return replace(self, warmup_read_bytes=self.read_bytes, warmup_write_bytes=self.write_bytes)

    def counted_bytes(self, direction: str) -> int | None:
        """The bytes of the cell's counted part (the warm-up's taken out) where the record knows the warm-up."""
        warmup = getattr(self, f"warmup_{direction}_bytes")
        return None if warmup is None else getattr(self, f"{direction}_bytes") - warmup


COUNTS = ("read_ios", "read_bytes", "write_ios", "write_bytes", "discard_ios", "discard_bytes")


def not_available(reason: str) -> Stimulus:
    return Stimulus(note=reason)


def not_per_interval(counters: str) -> Stimulus:
    """A streamed round: one interval of a continuous job, whose `counters` are read at the job's ends only."""
    return not_available(f"not measured per interval: each round is an interval of one continuous job, and "
                         f"{counters} are read at its start and end only")


# -- the block layer ------------------------------------------------------------------------------------------

def _queue_dir(stat: Path) -> Path:
    """A partition's queue/ is its disk's."""
    return stat.parent / "queue" if (stat.parent / "queue").is_dir() else stat.parent.parent / "queue"


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text())
    except (OSError, ValueError):
        return None


@dataclass(frozen=True)
class Snapshot:
    """Every device's stat fields at one instant (monotonic clock)."""

    t_ns: int
    fields: tuple[tuple[int, ...], ...]


class BlockCounters:
    """The stat files of the devices under a target (the gatekeeper reads them at each cell boundary) and their
    queues' request-size limits."""

    def __init__(self, stat_paths: Sequence[Path]):
        self.paths = list(stat_paths)
        self.names = [p.parent.name for p in self.paths]
        queues = [_queue_dir(p) for p in self.paths]
        sectors = [_read_int(q / "max_sectors_kb") for q in queues]
        segments = [_read_int(q / "max_segments") for q in queues]
        self.max_sectors_kb = min((s for s in sectors if s), default=None)
        self.max_segments = min((s for s in segments if s), default=None)

    def between(self, start: Snapshot | None, end: Snapshot | None) -> Stimulus:
        if start is None or end is None:
            return not_available("not measured: no block-layer counters at the cell's start or end (the device "
                                 "could not be read, or the cell never reported)")
        d = [0] * 17
        for a, b in zip(start.fields, end.fields):
            for i, (x, y) in enumerate(zip(a, b)):
                if i < len(d):
                    d[i] += y - x
        return Stimulus(source="block layer: " + ", ".join(self.names), elapsed_ms=(end.t_ns - start.t_ns) / 1e6,
                        read_ios=d[0], read_bytes=d[2] * SECTOR, write_ios=d[4], write_bytes=d[6] * SECTOR,
                        discard_ios=d[11], discard_bytes=d[13] * SECTOR, busy_ms=float(d[9]),
                        in_queue_ms=float(d[10]), devices=len(self.paths), max_sectors_kb=self.max_sectors_kb,
                        max_segments=self.max_segments, page_size=os.sysconf("SC_PAGE_SIZE"))


# -- the simulated drive --------------------------------------------------------------------------------------

def from_sim(before: dict, after: dict, job_result: dict) -> Stimulus:
    """A simulated cell's record: bytes and elapsed time from the drive's own counters (before and after the
    job), requests from its per-job counts, time in flight from its latencies (each request's, summed)."""
    def ios(direction: str) -> int:
        return int(job_result.get(direction, {}).get("total_ios", 0))

    in_queue_ns = sum(ios(k) * float(job_result.get(k, {}).get("lat_ns", {}).get("mean", 0.0)) for k in ("read", "write"))
    return Stimulus(source="simulator counters", elapsed_ms=(after["clock_ns"] - before["clock_ns"]) / 1e6,
                    read_ios=ios("read"), read_bytes=after["host_read_bytes"] - before["host_read_bytes"],
                    write_ios=ios("write"), write_bytes=after["host_write_bytes"] - before["host_write_bytes"],
                    in_queue_ms=in_queue_ns / 1e6, warmup_read_bytes=0, warmup_write_bytes=0)


def side_by_side(records: list[Stimulus | None]) -> Stimulus | None:
    """One cell on several simulated drives at once: their counts summed over the longest drive's time, as the
    block layer counts several devices carrying one cell (`devices`); None where a drive has no record."""
    if not records or any(r is None for r in records):
        return None
    queued = [r.in_queue_ms for r in records]
    return Stimulus(source=records[0].source, note=records[0].note, elapsed_ms=max(r.elapsed_ms for r in records),
                    read_ios=sum(r.read_ios for r in records), read_bytes=sum(r.read_bytes for r in records),
                    write_ios=sum(r.write_ios for r in records), write_bytes=sum(r.write_bytes for r in records),
                    discard_ios=sum(r.discard_ios for r in records),
                    discard_bytes=sum(r.discard_bytes for r in records),
                    in_queue_ms=None if None in queued else sum(queued), devices=sum(r.devices for r in records))


# -- judging --------------------------------------------------------------------------------------------------

def size_label(n: float) -> str:
    """512 KiB, 1 MiB, 4 KiB, 6.5 KiB."""
    for unit, scale in (("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"


@dataclass(frozen=True)
class Mismatch:
    """One way a cell's stimulus differs from what it asked for."""

    kind: str        # split | mix | volume | queue
    what: str        # the finding, the same words for every cell it applies to
    detail: str = ""     # this cell's figures

    @property
    def evidence(self) -> str:
        return f"{self.what} ({self.detail})" if self.detail else self.what


def queue_limit(s: Stimulus, asked: int) -> str | None:
    """The queue limit that makes `asked`-byte I/O into smaller requests, None where none does."""
    if s.max_sectors_kb and s.max_sectors_kb * 1024 < asked:
        return f"max_sectors_kb={s.max_sectors_kb}"
    if s.max_segments and s.page_size and s.max_segments * s.page_size < asked:
        return (f"max_segments={s.max_segments} × {size_label(s.page_size)} pages = "
                f"{size_label(s.max_segments * s.page_size)}")
    return None


def _smaller_requests(w: Workload, direction: str, asked: float, seen: float, fio_ios: int, s: Stimulus) -> Mismatch:
    """Why a direction's requests were smaller than its I/O: a queue limit; else the cell before, whose I/O ran
    on into this window; else a split nothing here explains."""
    requests = f"{fio_ios:,} I/Os, {getattr(s, direction + '_ios'):,} requests"
    limit = queue_limit(s, int(w.max_bs if w.bssplit else w.bs))
    shown = size_label(asked) if not w.bssplit else f"{size_label(asked)} mean"
    if limit is None and s.overlap_ms > 0:
        return Mismatch("overlap", f"the cell before ran on into the cell's window: its requests and this cell's "
                        f"are mixed at the device ({direction} requests of {size_label(seen)} mean)",
                        f"{requests}, {s.overlap_ms:.0f} ms of {s.elapsed_ms:.0f} ms")
    cause = limit or (f"no queue limit explains it (max_sectors_kb={s.max_sectors_kb}, "
                      f"max_segments={s.max_segments}): a stacked device or the file system split them")
    return Mismatch("split", f"{shown} {direction}s reached the device as {size_label(seen)} requests: {cause}",
                    requests)


def _asked_size(w: Workload, direction: str, cell: CellResult) -> float | None:
    """The mean I/O size the cell asked for in a direction: its block size, or fio's own mean for a split."""
    d = getattr(cell, direction)
    if w.bssplit:
        return d.bytes / d.ios if d.ios else None
    return float(w.bs)


def _judge_trace(w: Workload, s: Stimulus) -> list[Mismatch]:
    """A kept trace's replay: its sizes and read share are the trace's own, and fio's byte counts of an iolog
    replay are not reliable (fio 3.33 reported 4 KiB for two 4K reads; its I/O counts are right), so only the
    volume is judged, against the trace's bytes (`io_size`)."""
    device, asked = s.read_bytes + s.write_bytes, w.io_size or 0
    allowance = BYTES_TOLERANCE * asked + FOREIGN_BYTES
    if asked and not asked - allowance <= device <= asked + allowance:
        return [Mismatch("volume", f"the device saw {'less' if device < asked else 'more'} than the trace replayed",
                         f"trace {size_label(asked)}, the device {size_label(device)}")]
    return []


def _tail(cell: CellResult, fio, s: Stimulus) -> float:
    """The most of a direction's bytes the cell could have completed after its window closed: fio's bytes at its
    own mean rate over the time it ran on (an end report came after the next cell's release; its teardown is in
    that time, so this is an upper bound); 0 where it did not run on."""
    if s.ran_on_ms <= 0 or cell.runtime_ms <= 0:
        return 0.0
    return fio.bytes * min(1.0, s.ran_on_ms / cell.runtime_ms)


def judge(w: Workload, cell: CellResult, s: Stimulus, counted_by: str = "fio") -> list[Mismatch]:
    """How the device's record of a cell differs from the cell's workload and the engine's counts (empty: it
    matches); `counted_by` names the engine that counted the cell (`Clock.writer`: fio, or the simulated drive's
    engine)."""
    if not s.measured or not w.direct:     # buffered cells: the page cache lies between (the io-mode rule says so)
        return []
    if s.elapsed_ms and s.overlap_ms > OVERLAP_SHARE * s.elapsed_ms:
        return [Mismatch("overlap", "the cell before ran on into the cell's window (its I/O and this cell's are mixed "
                         "at the device)", f"{s.overlap_ms:.0f} ms of {s.elapsed_ms:.0f} ms")]
    if w.trace:
        return _judge_trace(w, s)
    out: list[Mismatch] = []
    outstanding = w.threads * w.iodepth
    for direction in ("read", "write"):
        asked, seen = _asked_size(w, direction, cell), s.request_bytes(direction)
        fio = getattr(cell, direction)
        if asked and seen and fio.ios and seen < asked * (1 - REQUEST_SIZE_TOLERANCE):
            out.append(_smaller_requests(w, direction, asked, seen, fio.ios, s))
        allowance = BYTES_TOLERANCE * fio.bytes + 2 * outstanding * w.max_bs * s.devices + FOREIGN_BYTES
        counted = s.counted_bytes(direction)
        # the warm-up's own bytes where known (the simulator); else the block layer's window holds the warm-up too,
        # and its share is estimated by time (a warm-up faster than the cell, e.g. into a freed SLC cache, is not)
        ramp = (w.runtime_s + w.ramp_s) / w.runtime_s if w.ramp_s and w.runtime_s and counted is None else 1.0
        device = getattr(s, f"{direction}_bytes") if counted is None else counted
        if fio.bytes and device < fio.bytes - allowance and device >= fio.bytes - allowance - _tail(cell, fio, s):
            out.append(Mismatch("overlap", f"the cell ran on into the next cell's window: the device completed the "
                                f"rest of its {direction} bytes there (fio's end report came after the next "
                                "cell's release)", f"{counted_by} {size_label(fio.bytes)}, the device "
                                f"{size_label(device)} in the cell's window, {s.ran_on_ms:.0f} ms past it"))
        elif fio.bytes and not fio.bytes - allowance <= device <= fio.bytes * ramp + allowance:
            out.append(Mismatch("volume", f"the device saw {'less' if device < fio.bytes else 'more'} {direction} "
                                f"bytes than {counted_by} moved (beyond {BYTES_TOLERANCE:.0%} plus the I/O in flight)",
                                f"{counted_by} {size_label(fio.bytes)}, the device {size_label(device)}"))
    share = s.read_share
    fio_total = cell.read.bytes + cell.write.bytes
    if share is not None and fio_total:
        expected = cell.read.bytes / fio_total if (w.write_bssplit or w.verify) else w.reads / 100
        n = max(1, cell.read.ios + cell.write.ios)
        band = max(MIX_TOLERANCE_PTS, 100 * MIX_SIGMAS * math.sqrt(expected * (1 - expected) / n))
        if abs(100 * (share - expected)) > band:
            out.append(Mismatch("mix", f"asked {100 * expected:.0f} % reads, the device's read share differs "
                                f"beyond the tolerance", f"{100 * share:.1f} % of its bytes read, ±{band:.1f} points"))
    qd, fio_ios = s.queue_depth, cell.read.ios + cell.write.ios
    requests = s.read_ios + s.write_ios
    if qd is not None and fio_ios and requests:
        per_io = qd * fio_ios / requests       # a split I/O's pieces in flight together count once
        if per_io > outstanding * QUEUE_DEPTH_EXCESS + QUEUE_DEPTH_SLACK:
            out.append(Mismatch("queue", f"asked {w.threads} × {w.iodepth} = {outstanding} outstanding, the device "
                                "held more of the cell's I/Os in flight (another process's I/O?)",
                                f"{per_io:.1f} on average"))
    return out
