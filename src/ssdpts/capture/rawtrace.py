"""The fast reader: tracefs' per-CPU binary ring-buffer pages (`per_cpu/cpuN/trace_pipe_raw`), parsed here.

Why binary: through `trace_pipe` the kernel formats every event as text in the reader's time and Python parses
it back with a regular expression (about 10 µs an event on this loaded 2-core machine: 25k IOPS lost 57 % of
the events). A raw page is a copy of the kernel's 4 KiB buffer page; parsing it is a walk over fixed-layout
records whose field offsets the kernel publishes (`events/block/NAME/format`). docs/rwsw-capture.md has the
measurements behind the choice.

Page layout (kernel/trace/ring_buffer.c; `events/header_page`, `events/header_event`): u64 timestamp of the
first event, a commit word (low 20 bits: bytes of data; bit 31: events were lost before this page), then
records. A record starts with a u32: type_len (5 low bits) and a time delta (27 bits) added to the running
time. type_len 1..28: data of type_len*4 bytes follows; 0: the next u32 is the length (itself included);
29: padding (time delta 0: the rest of the page is empty); 30: a time extension (next u32 << 27 added);
31: an absolute time stamp.
"""

from __future__ import annotations

import bisect
import os
import re
import struct
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import SsdptsError
from .reduce import SECTOR, Reducer, op_of_rwbs
from .tracefs import INSTANCE_PREFIX, REORDER_S, BlockDevice, _remove, open_instance, tracefs_root

PAGE_HEADER = 16                 # u64 time stamp, then the commit word (a long: 8 bytes on 64-bit kernels)
COMMIT_SIZE_MASK = (1 << 20) - 1
MISSED_EVENTS = 1 << 31
# a request issued to the driver, completed; an application's bio queued, a bio completed
ISSUE, COMPLETE, APP, BIO_DONE = 0, 1, 2, 3
CAPTURE_BUFFER_KB = 65536        # per CPU: 200k IOPS (400k events/s) for ~3 s without a read; see the docs
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_FIELD = re.compile(r"field:(.+?);\s*offset:(\d+);\s*size:(\d+);")


@dataclass(frozen=True)
class EventFormat:
    """Where one tracepoint's fields lie in its record (from its `format` file)."""

    name: str
    kind: int                    # ISSUE | COMPLETE | APP
    id: int                      # common_type: which tracepoint a record belongs to
    dev: int                     # offsets of the fields the capture reads
    sector: int
    nr_sector: int
    rwbs: int
    pid: int = 4                 # common_pid: the task the event fired in


def event_format(events_dir: Path, name: str, kind: int) -> EventFormat:
    """The record layout of tracepoint `name` as this kernel publishes it."""
    text = (events_dir / name / "format").read_text()
    offsets = {}
    for decl, offset, _ in _FIELD.findall(text):
        field_name = decl.split()[-1].split("[")[0]
        offsets[field_name] = int(offset)
    missing = [f for f in ("dev", "sector", "nr_sector", "rwbs") if f not in offsets]
    if missing:
        raise SsdptsError(f"tracepoint {name} has no {', '.join(missing)} field on this kernel; "
                          "capture with --from-blktrace instead")
    return EventFormat(name, kind, int((events_dir / name / "id").read_text()), offsets["dev"],
                       offsets["sector"], offsets["nr_sector"], offsets["rwbs"], offsets.get("common_pid", 4))


class PageParser:
    """Raw pages to `(time_ns, kind, dev, sector, sectors, rwbs, pid)` tuples; counts the pages that say events
    were lost before them."""

    def __init__(self, formats: list[EventFormat]):
        self.by_id = {f.id: f for f in formats}
        self.pages_after_loss = 0

    def parse(self, page: bytes, out: list) -> None:
        """Append the page's events to `out` (in time order: one CPU's page is)."""
        ts, commit = _U64.unpack_from(page, 0)[0], _U64.unpack_from(page, 8)[0]
        if commit & MISSED_EVENTS:
            self.pages_after_loss += 1
        end = PAGE_HEADER + (commit & COMMIT_SIZE_MASK)
        pos = PAGE_HEADER
        by_id, u32, u64, append = self.by_id, _U32.unpack_from, _U64.unpack_from, out.append
        while pos < end:
            head = u32(page, pos)[0]
            type_len, delta = head & 31, head >> 5
            if type_len == 0:                          # a long record: its length follows
                length = u32(page, pos + 4)[0]
                data, size = pos + 8, 4 + length
            elif type_len <= 28:
                data, size = pos + 4, 4 + type_len * 4
            elif type_len == 29:                       # padding; with no delta, the page's end
                if delta == 0:
                    break
                pos += 4 + u32(page, pos + 4)[0]
                continue
            elif type_len == 30:                       # time extension
                ts += (u32(page, pos + 4)[0] << 27) + delta
                pos += 8
                continue
            else:                                      # 31: an absolute time stamp (its high bits: the page's)
                ts = (ts & ~((1 << 59) - 1)) | (u32(page, pos + 4)[0] << 27) | delta
                pos += 8
                continue
            ts += delta
            pos += size
            fmt = by_id.get(page[data] | page[data + 1] << 8)
            if fmt is None:
                continue
            rwbs = page[data + fmt.rwbs:data + fmt.rwbs + 4]
            append((ts, fmt.kind, u32(page, data + fmt.dev)[0], u64(page, data + fmt.sector)[0],
                    u32(page, data + fmt.nr_sector)[0], rwbs, u32(page, data + fmt.pid)[0]))


def cpus_of(instance: Path) -> list[int]:
    return sorted(int(p.name[3:]) for p in (instance / "per_cpu").glob("cpu*") if p.name[3:].isdigit())


def lost_in_stats(instance: Path) -> int:
    """Events the kernel could not keep, over all CPUs: overwritten before they were read ("overrun") or
    refused with the buffer full ("dropped events")."""
    lost = 0
    for cpu in cpus_of(instance):
        try:
            text = (instance / "per_cpu" / f"cpu{cpu}" / "stats").read_text()
        except OSError:
            continue
        for line in text.splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("overrun", "dropped events"):
                lost += int(value.split()[0])
    return lost


class RawReader:
    """Non-blocking readers of every CPU's `trace_pipe_raw` in a tracefs instance."""

    def __init__(self, instance: Path, formats: list[EventFormat]):
        self.parser = PageParser(formats)
        self.page_size = os.sysconf("SC_PAGE_SIZE")
        self.fds = [os.open(instance / "per_cpu" / f"cpu{cpu}" / "trace_pipe_raw", os.O_RDONLY | os.O_NONBLOCK)
                    for cpu in cpus_of(instance)]

    def read(self) -> list:
        """Every event the buffers hold now, sorted by time (each CPU's pages are in order; merged here)."""
        out: list = []
        for fd in self.fds:
            while True:
                try:
                    page = os.read(fd, self.page_size)
                except BlockingIOError:
                    break
                if not page:
                    break
                self.parser.parse(page, out)
        out.sort(key=_time)
        return out

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds = []


def _time(event: tuple) -> int:
    return event[0]


@dataclass(frozen=True)
class _Route:
    """Where a device's events go: its reducer, and the combined one (devices laid end to end)."""

    reducer: Reducer
    first_sector: int
    shift: int                   # bytes before this device in the combined capture
    bio_based: bool
    lo: int                      # the device's sectors on the disk its requests name: [lo, hi)
    hi: int


class CaptureSession:
    """One tracefs instance recording several devices' requests and bios, read raw from every CPU; use as a
    context manager. Request-based devices: block_rq_issue/block_rq_complete are the device's requests,
    block_bio_queue the application's. Devices without a request queue (zram, device-mapper): block_bio_queue
    and block_bio_complete are both."""

    def __init__(self, devices: list[BlockDevice], buffer_kb: int = CAPTURE_BUFFER_KB):
        self.devices, self.buffer_kb = devices, buffer_kb
        self.start = 0.0
        self.reader: RawReader | None = None
        self._pending: list = []
        root = tracefs_root()
        self.events_dir = root / "events" / "block"
        first = devices[0]
        self.instance = root / "instances" / f"{INSTANCE_PREFIX}{os.getpid()}-{first.major}-{first.minor}"
        requests = [d for d in devices if not d.bio_based]
        bios = [d for d in devices if d.bio_based]
        self.filters: dict[tuple[str, int], str] = {}        # (tracepoint, kind) -> filter
        if requests:
            by_request = " || ".join(f"({d.event_filter})" for d in requests)
            self.filters[("block_rq_issue", ISSUE)] = by_request
            self.filters[("block_rq_complete", COMPLETE)] = by_request
        self.filters[("block_bio_queue", APP)] = " || ".join(f"dev == {d.own}" for d in devices)
        if bios:
            self.filters[("block_bio_complete", BIO_DONE)] = " || ".join(f"dev == {d.own}" for d in bios)

    def __enter__(self) -> "CaptureSession":
        open_instance(self.instance, self.devices[0].path, self.buffer_kb)
        try:
            events = self.instance / "events" / "block"
            formats = [event_format(self.events_dir, name, kind) for name, kind in self.filters]
            for (name, _), text in self.filters.items():
                (events / name / "filter").write_text(text)
            self.reader = RawReader(self.instance, formats)
            for name, _ in self.filters:
                (events / name / "enable").write_text("1")
            self.start = time.monotonic()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def events(self, before: float | None) -> list:
        """The raw events recorded before `before` (CLOCK_MONOTONIC; None: all so far), in time order.

        Each CPU's pages are in time order, but a completion read from one CPU can be newer than an issue
        still being committed on another: events wait here until they are REORDER_S old."""
        assert self.reader is not None
        self._pending.extend(self.reader.read())
        self._pending.sort(key=_time)
        if before is None:
            out, self._pending = self._pending, []
            return out
        cut = bisect.bisect_left(self._pending, int(before * 1e9), key=_time)
        out, self._pending = self._pending[:cut], self._pending[cut:]
        return out

    @property
    def lost(self) -> int:
        return lost_in_stats(self.instance)

    def stop(self) -> None:
        """Stop recording (what is in the buffers can still be read)."""
        for name, _ in self.filters:
            try:
                (self.instance / "events" / "block" / name / "enable").write_text("0")
            except OSError:
                pass
        time.sleep(REORDER_S / 10)       # events being committed on other CPUs land in the buffer

    def __exit__(self, *exc) -> None:
        self.stop()
        if self.reader is not None:
            self.reader.close()
            self.reader = None
        _remove(self.instance)


class Dispatcher:
    """Raw events to the reducers of the devices they belong to (and to the combined reducer, if any)."""

    def __init__(self, devices: list[BlockDevice], reducers: list[Reducer], combined: Reducer | None):
        self._requests: dict[int, list[_Route]] = {}     # disk dev_t -> routes (partitions share a disk)
        self._bios: dict[int, list[_Route]] = {}         # own dev_t -> routes
        self._ops: dict[bytes, str] = {}
        shift = 0
        for device, reducer in zip(devices, reducers):
            for r in [reducer] + ([combined] if combined is not None else []):
                route = _Route(r, device.first_sector, shift if r is combined else 0, device.bio_based,
                               device.first_sector, device.first_sector + device.sectors)
                if not device.bio_based:
                    self._requests.setdefault((device.major << 20) | device.minor, []).append(route)
                self._bios.setdefault(device.own, []).append(route)
            shift += device.size_bytes

    def _op(self, rwbs: bytes) -> str:
        op = self._ops.get(rwbs)
        if op is None:
            op = self._ops[rwbs] = op_of_rwbs(rwbs.split(b"\0")[0].decode("ascii", "replace"))
        return op

    def feed(self, events: list) -> None:
        for ts, kind, dev, sector, sectors, rwbs, pid in events:
            t, op = ts / 1e9, self._op(rwbs)
            for route in (self._bios if kind >= APP else self._requests).get(dev, ()):
                if kind < APP and not route.lo <= sector < route.hi and op != "flush":
                    continue
                offset = (sector - route.first_sector) * SECTOR + route.shift
                if kind == ISSUE or (kind == APP and route.bio_based):
                    route.reducer.feed_request(t, False, op, offset, sectors * SECTOR, pid)
                elif kind == COMPLETE or kind == BIO_DONE:
                    route.reducer.feed_request(t, True, op, offset, sectors * SECTOR)
                if kind == APP:          # the application's bio, queued in the task that issued it
                    route.reducer.feed_application(t, op, offset, sectors * SECTOR, pid, streams=not route.bio_based)


def in_flight(device: BlockDevice) -> int:
    """The kernel's count of the device's requests in flight now (0 when it cannot be read)."""
    try:
        return sum(int(x) for x in device.in_flight_file.read_text().split())
    except (OSError, ValueError):
        return 0
