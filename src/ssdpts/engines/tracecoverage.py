"""LBA coverage of fio cells from the block layer (`ssdpts run --trace-stimulus`, docs/coverage.md).

A tracefs instance of its own (capture/tracefs.py) records the device's `block_rq_complete` events; a thread
reads them and counts each completed read, write or discard into the bitmap of the cell that was running when it
completed: the cell released last (the gates' release report) before the completion, until that cell's last clone
reported its end. A time-based cell's successor is let go at the cell's predicted end, so the few requests the
cell still had in flight then (at most threads x iodepth) count for its successor.

Completions only, not issues: half the events, and the reader is Python text parsing (about 2 us a line).
When it falls behind, the kernel's ring buffer overwrites the oldest events and trace_pipe says how many
("[LOST n EVENTS]"): the record counts them (`events_lost`) and its moved bytes are those of the events seen,
so the cell's expectation (engines/coverage.py) is judged on the same events as what it touched.

An engine never knows which test it serves: cells are known by their gates only.
"""

from __future__ import annotations

import bisect
import math
import os
import threading
import time
from dataclasses import dataclass, field

from ..capture.tracefs import REORDER_S, TraceSession, block_device, lost_events
from ..errors import SsdptsError
from ..realtime.timing import TRACE_POLL_S
from ..workload import Workload
from .coverage import Coverage, access_of
from .gates import Gates

MAX_GRANULES = 1 << 28          # 32 MiB of bitmap per cell, as the simulator (sim/src/engine.rs `Coverage`)
SECTOR = 512
_COMPLETE = b": block_rq_complete: "
_DATA_OPS = {b"R", b"W", b"D"}  # read, write, discard: flushes move no data


def check_traceable(target) -> None:
    """Refuse --trace-stimulus, before anything is written, where the target's block events cannot be read."""
    if target.kind == "sim":
        raise SsdptsError("--trace-stimulus reads a real device's block events; the simulated drive records every "
                          "cell's LBA coverage itself: drop --trace-stimulus")
    members = target.drives()
    if len(members) > 1:
        raise SsdptsError("--trace-stimulus traces one device; test the targets one at a time (--sequential) or "
                          "drop --trace-stimulus")
    m = members[0]
    if getattr(m, "host", None):
        raise SsdptsError(f"--trace-stimulus cannot read {m.label_id}'s block events: they are on host {m.host}; "
                          "run ssdpts on that host, or drop --trace-stimulus")
    if m.kind != "block":
        raise SsdptsError(f"--trace-stimulus counts a block device's sectors, and {m.path} is a file (the file "
                          "system maps its offsets elsewhere on its device, beside its own I/O); run on a block "
                          "device, or drop --trace-stimulus")
    if os.geteuid() != 0:
        raise SsdptsError("--trace-stimulus reads the kernel's block tracepoints (tracefs), which needs root; run "
                          "as root, or drop --trace-stimulus")
    try:
        with TraceSession(block_device(m.path), events=("block_rq_complete",)):
            pass      # the instance can be made, set and removed: the run's one will be
    except SsdptsError as e:
        raise SsdptsError(f"--trace-stimulus: {e}; or drop --trace-stimulus") from None


def granule_of(w: Workload, range_bytes: int) -> int:
    """The bitmap unit, as the simulator's: the largest power of two every I/O's offset and length are multiples
    of (dividing the cell's block sizes and alignment), doubled while the range would need more than MAX_GRANULES
    bits (a partly touched granule then counts whole)."""
    unit = math.gcd(w.bs, w.align, *(b for b, _ in w.bssplit + w.write_bssplit)) or SECTOR
    g = unit & -unit
    while range_bytes // g > MAX_GRANULES:
        g *= 2
    return g


@dataclass
class _CellTrace:
    """What one cell's completions touched so far."""

    access: str
    range_offset: int
    range_bytes: int
    granule: int
    kept: bool = True                # False: a streamed cell, only known so its events count for no other cell
    bits: bytearray | None = None    # allocated at the first event: rounds are submitted ahead of time
    moved: int = 0
    lowest: int | None = None
    highest_end: int = 0
    seen: int = 0
    lost: int = 0

    def add(self, offset: int, size: int) -> None:
        if not self.kept:
            return
        self.seen += 1
        self.moved += size
        end = offset + size
        self.lowest = offset if self.lowest is None or offset < self.lowest else self.lowest
        self.highest_end = max(self.highest_end, end)
        g, base = self.granule, self.range_offset
        n = -(-self.range_bytes // g)
        a, b = max(0, (offset - base) // g), min(n, -(-(end - base) // g))
        if a >= b:
            return        # outside the cell's range (counted in lowest/highest only)
        if self.bits is None:
            self.bits = bytearray(-(-n // 8))
        bits = self.bits
        if b - a == 1:
            bits[a >> 3] |= 1 << (a & 7)
            return
        first, last = a >> 3, (b - 1) >> 3
        if first == last:
            bits[first] |= ((1 << (b - a)) - 1) << (a & 7)
            return
        bits[first] |= (0xFF << (a & 7)) & 0xFF
        bits[last] |= 0xFF >> (7 - ((b - 1) & 7))
        if last > first + 1:
            bits[first + 1:last] = b"\xff" * (last - first - 1)

    def record(self) -> Coverage:
        touched = int.from_bytes(self.bits, "little").bit_count() * self.granule if self.bits else 0
        return Coverage(source="tracefs", access=self.access, range_offset=self.range_offset,
                        range_bytes=self.range_bytes, touched_bytes=min(touched, self.range_bytes),
                        moved_bytes=self.moved, lowest=self.lowest if self.lowest is not None else 0,
                        highest_end=self.highest_end, granule=self.granule, events_seen=self.seen,
                        events_lost=self.lost)


def parse_completion(line: bytes) -> tuple[float, int, int] | None:
    """(time, sector, sectors) of a read, write or discard completion line; None for any other line.
    "fio-16619 [001] ..... 16957.662145: block_rq_complete: 7,0 R () 7904 + 8 be,0,4 [0]" (a SCSI command
    inside the parentheses may hold spaces; older kernels print no ioprio). Plain byte splitting: the line
    rate is the device's IOPS."""
    i = line.find(_COMPLETE)
    if i < 0:
        return None
    rest = line[i + len(_COMPLETE):]
    try:
        rwbs = rest.split(b" ", 2)[1]
        op = rwbs[1:2] if rwbs[:1] == b"F" and len(rwbs) > 1 else rwbs[:1]
        if op not in _DATA_OPS:
            return None
        after = rest[rest.index(b") ") + 2:].split(b" ", 3)
        return float(line[line.rfind(b" ", 0, i) + 1:i]), int(after[0]), int(after[2])
    except (IndexError, ValueError):      # a line cut or shaped otherwise: not one of ours
        return None


@dataclass
class _Pending:
    """Parsed lines waiting until the gates have surely reported the cell they belong to."""

    events: list[tuple[float, int, int]] = field(default_factory=list)
    losses: list[tuple[float, int]] = field(default_factory=list)    # (time of the event before it, lost)


class CoverageTracer:
    """Traces one local block device for a fio session; `register` a cell before it runs, `finish` it after."""

    def __init__(self, path: str, gates: Gates, device_bytes: int, logical_block: int):
        self.device = block_device(path)
        self.gates, self.device_bytes, self.logical_block = gates, device_bytes, logical_block
        self.cells: dict[int, _CellTrace] = {}
        self._cond = threading.Condition()
        self._done_until = 0.0          # every event before this (CLOCK_MONOTONIC) is counted
        self._stop = False
        self._last_t = 0.0
        self.session = TraceSession(self.device, events=("block_rq_complete",)).__enter__()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def register(self, gid: int, w: Workload, kept: bool = True) -> None:
        """A cell about to run; `kept` False: a cell streamed in intervals, which gets no record (its events
        must still not count for the cell before it)."""
        offset, size = w.region(self.device_bytes, self.logical_block)
        with self._cond:
            self.cells[gid] = _CellTrace(access_of(w.rw, w.distribution), offset, size, granule_of(w, size), kept)

    def forget(self, gids) -> None:
        """Cells that will not run (a stalled round armed again under new gates)."""
        with self._cond:
            for gid in gids:
                self.cells.pop(gid, None)

    def finish(self, gids: list[int]) -> list[Coverage | None]:
        """The cells' records, once every event up to their end is counted (their gates have reported)."""
        ends = [max(self.gates.fires.get(g) or [0]) for g in gids]
        until = (max(ends, default=0) - (time.time_ns() - time.monotonic_ns())) / 1e9
        with self._cond:
            while self._done_until <= until and self._thread.is_alive():
                self._cond.wait(TRACE_POLL_S)
            cells = [self.cells.pop(g, None) for g in gids]
            for gid in [g for g, c in self.cells.items() if not c.kept and self._ended_before(g, until)]:
                del self.cells[gid]
        return [c.record() if c is not None else None for c in cells]

    def _ended_before(self, gid: int, until: float) -> bool:
        fires = self.gates.fires.get(gid) or []
        offset_ns = time.time_ns() - time.monotonic_ns()
        return len(fires) >= self.gates.clones.get(gid, 1) and (max(fires) - offset_ns) / 1e9 < until

    def _windows(self, offset_ns: int) -> tuple[list[float], list[tuple[float, _CellTrace]]]:
        """Started cells in release order: their release and (end, cell) on CLOCK_MONOTONIC (end: inf while
        a clone still runs)."""
        found = []
        for gid, cell in self.cells.items():
            starts = self.gates.starts.get(gid)
            if not starts:
                continue
            fires = self.gates.fires.get(gid) or []
            done = len(fires) >= self.gates.clones.get(gid, 1)
            found.append(((min(starts) - offset_ns) / 1e9,
                          (max(fires) - offset_ns) / 1e9 if done else math.inf, cell))
        found.sort(key=lambda x: x[0])
        return [s for s, _, _ in found], [(e, c) for _, e, c in found]

    def _cell_at(self, t: float, starts: list[float], windows) -> _CellTrace | None:
        i = bisect.bisect_right(starts, t) - 1
        if i < 0:
            return None
        end, cell = windows[i]
        return cell if t <= end else None

    def _run(self) -> None:
        pending = _Pending()
        first_sector = self.device.first_sector
        while not self._stop:
            for line in self.session.read_lines():
                ev = parse_completion(line)
                if ev is not None:
                    pending.events.append(ev)
                    self._last_t = ev[0]
                elif b"LOST" in line:
                    pending.losses.append((self._last_t, lost_events(line.decode("ascii", "replace"))))
            # events this old are in the buffer, and the gates' release reports of their cells are in
            horizon = time.monotonic() - REORDER_S
            with self._cond:
                offset_ns = time.time_ns() - time.monotonic_ns()
                starts, windows = self._windows(offset_ns)
                keep = []
                for ev in pending.events:
                    if ev[0] >= horizon:
                        keep.append(ev)
                        continue
                    cell = self._cell_at(ev[0], starts, windows)
                    if cell is not None:
                        cell.add((ev[1] - first_sector) * SECTOR, ev[2] * SECTOR)
                pending.events = keep
                later = []
                for t, n in pending.losses:
                    cell = self._cell_at(t, starts, windows) if t < horizon else None
                    if cell is not None:
                        cell.lost += n
                    elif t >= horizon:
                        later.append((t, n))
                pending.losses = later
                self._done_until = horizon
                self._cond.notify_all()
            time.sleep(TRACE_POLL_S)

    def close(self) -> None:
        self._stop = True
        self._thread.join()
        self.session.__exit__(None, None, None)
