"""Block-layer I/O events reduced to a workload file: IO streams, queue depths, steps, LBA range.

Every source (tracefs, blktrace, fio's iolog) turns its records into `IoEvent`s; `Reducer` counts them.

Random or sequential, by a table of stream heads (`StreamHeads`, one per direction): an I/O is sequential
when it starts where an open stream is expected to continue (the end of that stream's last I/O), else random.
RWSW's reference capture tool (hIOmon) calls an I/O sequential when it starts where the previous I/O to the
same file ended; at the block layer there are no files and several streams interleave on one device, so a
single "previous I/O" would call most of them random. A stream opens at its third request: an I/O that starts
at the end of an unclaimed I/O of its direction, among the `WINDOW` most recent of that I/O's size, makes a
pair, and an I/O that continues a pair within `WINDOW` I/Os of the pair's size opens the stream; the pair's two
I/Os, counted random until then, are moved to the stream (its opening request is part of it). Once open a stream is followed however slowly it
goes (a 64K log at 50 IOPS among 4K random writes at 8,000 IOPS: 160 other I/Os between two of its writes)
until `OPEN_STREAMS` busier streams push it out.

Why a pair first: uniform random I/O of size b on a device of D bytes lands on a given end with probability
b/D (N = D/b blocks). Opening at the first continuation (the rule before) calls a random I/O sequential at
up to WINDOW/N: 1,024 / 262,144 = 0.4 % on a 1 GiB device with 4K I/O, 1.1-3.6 % measured (fio's random map
steers I/Os to untouched blocks, the very blocks after recent ends). Two chance continuations in a row are
needed now: at most WINDOW/N x WINDOW/N = 1.5e-5 of the I/Os on that device (6e-11 on 1 TB); with k sizes of
random I/O, k x WINDOW ends are live, so k² times that. A real stream of two requests stays random, and one whose
first three requests are more than `HELD` requests of its direction apart is not found.
Queue depth: the requests in flight on the device when one is issued, the issued one included. An issue
is in flight until a completion with the same device, direction and start sector; completions of requests
issued before the capture began are not counted (the capture starts with the depth it sees, a little low).
When trace events were lost, missed completions would keep requests "in flight" for ever, so the depths come
from the kernel's own in-flight counter (/sys/block/DEV/inflight) sampled while capturing instead
(`sample_in_flight`).

Application requests: `feed_application` counts the bios as the application queued them (block_bio_queue),
before the block layer splits them to the device's maximum transfer or merges neighbours, as IO streams of
their own (`WorkloadCapture.application_streams`); the device's requests stay the workload's streams.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from dataclasses import dataclass, field

from ..workload.trace import TraceWriter
from .model import (COMPLETIONS, IN_FLIGHT_SAMPLES, LBA_ZONES, NO_DEPTHS, SCHEMA, CaptureSource, QueueDepth, Step,
                    StreamCount, StreamKey, WorkloadCapture)

WINDOW = 1024               # I/Os of its size and direction an unclaimed end or a pair waits for its continuation
HELD = 16 * WINDOW          # unclaimed ends (and pairs) kept per direction, of all sizes together
OPEN_STREAMS = 256
SECTOR = 512


@dataclass(frozen=True)
class IoEvent:
    """One block-layer record: an issue to the device or a completion from it."""

    t: float                # seconds, on the source's clock
    completed: bool         # False: issued to the device; True: completed by it
    op: str                 # read | write | discard | flush | other
    offset: int             # bytes from the device's start
    size: int               # bytes


def op_of_rwbs(rwbs: str) -> str:
    """The operation of a kernel `rwbs` string (blk_fill_rwbs): 'R', 'RA', 'WS', 'FWFS' (flush + write +
    FUA + sync), 'D' discard, 'DE' secure erase, 'FN'/'F' a flush, 'N' anything else."""
    if rwbs[:1] == "F" and rwbs[1:2] in ("", "F", "N"):               # a flush alone (blkparse: 'FN')
        return "flush"
    body = rwbs[1:] if rwbs[:1] == "F" else rwbs                        # a leading F is a pre-flush
    return {"R": "read", "W": "write", "D": "discard"}.get(body[:1], "other")


@dataclass
class _StepCounts:
    ios: Counter = field(default_factory=Counter)         # StreamKey -> I/Os
    bytes: Counter = field(default_factory=Counter)       # StreamKey -> bytes
    depth: Counter = field(default_factory=Counter)       # depth -> issues
    in_flight: Counter = field(default_factory=Counter)   # depth -> samples of the kernel's counter (> 0 only)
    issuers: set = field(default_factory=set)             # pids that queued bios


class StreamHeads:
    """One direction's open sequential streams, by the offset where each is expected to continue, and the
    recent I/Os that may open one. `access` takes a tag for each I/O (whatever the caller needs to recount
    it: its step and size) and hands back the tags of a pair when the pair turns out to be a stream's start.

    An unclaimed end or a pair waits `WINDOW` I/Os of its own size (a 128K scan's ends are not pushed out by a
    flood of 4K random reads: 1,500 of them between two scan reads at 270k IOPS), `HELD` of all sizes at most."""

    def __init__(self):
        self.seen: Counter = Counter()                  # size -> I/Os of that size
        self.ends: OrderedDict = OrderedDict()          # end of an unclaimed I/O -> (size, seen then, tag)
        self.pairs: OrderedDict = OrderedDict()         # end of a pair -> (size, seen then, the pair's tags)
        self.streams: OrderedDict = OrderedDict()       # heads of open streams, least recently continued first

    def _live(self, entry) -> bool:
        return entry is not None and self.seen[entry[0]] - entry[1] <= WINDOW

    def access(self, offset: int, size: int, tag=None) -> tuple[str, tuple]:
        """('sequential', opening tags) when the I/O continues an open stream or a pair (then the stream opens
        and the pair's tags come back, to be counted sequential); ('random', ()) otherwise."""
        seen = self.seen[size] = self.seen[size] + 1
        end = offset + size
        opening: tuple = ()
        if offset in self.streams:
            del self.streams[offset]
        elif self._live(pair := self.pairs.pop(offset, None)):
            opening = pair[2]
            if len(self.streams) >= OPEN_STREAMS:
                self.streams.popitem(last=False)
        elif self._live(first := self.ends.pop(offset, None)):
            self.pairs.pop(end, None)
            self.pairs[end] = (first[0], self.seen[first[0]], (first[2], tag))
            if len(self.pairs) > HELD:
                self.pairs.popitem(last=False)
            return "random", ()
        else:
            self.ends.pop(end, None)
            self.ends[end] = (size, seen, tag)
            if len(self.ends) > HELD:
                self.ends.popitem(last=False)
            return "random", ()
        self.streams.pop(end, None)
        self.streams[end] = None
        return "sequential", opening


def _new_heads() -> dict[str, StreamHeads]:
    return {rw: StreamHeads() for rw in ("read", "write")}


def step_count(duration_s: float, step_s: float) -> int:
    """Steps of `step_s` covering `duration_s` (the last one possibly shorter); one when the duration is 0."""
    return max(1, -int(-round(duration_s, 6) // step_s)) if duration_s > 0 else 1


class Reducer:
    """Feed `IoEvent`s in time order; `capture()` returns the workload file's record.

    `start` is the capture's start on the events' clock; steps are `step_s` long from there. `end` (None: open)
    closes the window: later events and samples are not the workload's, and one at `end` itself belongs to the
    last step (a 10 s capture in 2 s steps has five, not a sixth of no length). `device_size` (bytes; 0: not
    known) sets the LBA histogram's zones; `trace`: every read and write is kept there too."""

    def __init__(self, start: float, step_s: float, with_queue_depth: bool = True, device_size: int = 0,
                 trace: TraceWriter | None = None, end: float | None = None):
        self.start, self.step_s, self.with_queue_depth = start, step_s, with_queue_depth
        self.end = end
        self._last_step = None if end is None else step_count(end - start, step_s) - 1
        self.device_size, self.trace = device_size, trace
        # where I/Os start: by zone of the device when its size is known, else by MiB (zoned at the end)
        self._where: Counter = Counter()
        self._where_unit = -(-device_size // LBA_ZONES) if device_size else 1 << 20
        self.steps: dict[int, _StepCounts] = {}
        self._heads = _new_heads()
        self._app_heads = _new_heads()
        self.app_ios: Counter = Counter()         # StreamKey -> the application's requests (bios)
        self.app_bytes: Counter = Counter()
        self._keys: dict[tuple[int, str, str], StreamKey] = {}
        self.lost_events = 0                      # set by the reader; > 0: depths from the in-flight samples
        self._in_flight: Counter = Counter()                              # (op, offset) -> requests
        self.depth_now = 0
        self.lba_min: int | None = None
        self.lba_max = 0
        self.kept_out: Counter = Counter()        # op -> requests not in the streams (discards, flushes)
        self.kept_out_bytes: Counter = Counter()
        self.last_t = start

    @property
    def ios(self) -> int:
        """Read and write I/Os counted so far."""
        return sum(sum(c.ios.values()) for c in self.steps.values())

    def _key(self, size: int, op: str, access: str) -> StreamKey:
        """The stream's key, made once (a live capture counts hundreds of thousands of I/Os a second)."""
        key = self._keys.get((size, op, access))
        if key is None:
            key = self._keys[(size, op, access)] = StreamKey(size, op, access)
        return key

    def feed(self, ev: IoEvent) -> None:
        self.feed_request(ev.t, ev.completed, ev.op, ev.offset, ev.size)

    def _in_window(self, t: float) -> bool:
        return t >= self.start and (self.end is None or t <= self.end)

    def _index(self, t: float) -> int:
        step = int((t - self.start) // self.step_s)
        return step if self._last_step is None else min(step, self._last_step)

    def _step(self, t: float, step: int | None = None) -> _StepCounts:
        """The counts of the step holding time `t` (`step`: its index, when the caller has it already)."""
        if step is None:
            step = self._index(t)
        counts = self.steps.get(step)
        if counts is None:
            counts = self.steps[step] = _StepCounts()
        return counts

    def feed_application(self, t: float, op: str, offset: int, size: int, pid: int = 0,
                         streams: bool = True) -> None:
        """A bio as the application queued it (before splits and merges), in task `pid` (0: not known).
        `streams` False: only who queued it (a device that takes bios directly counts them as its requests)."""
        if not self._in_window(t) or op not in ("read", "write") or size <= 0:
            return
        if pid:
            self._step(t).issuers.add(pid)
        if not streams:
            return
        access, opening = self._app_heads[op].access(offset, size, size)
        self.app_ios[self._key(size, op, access)] += 1
        self.app_bytes[self._key(size, op, access)] += size
        for n in opening:                     # the stream's first two bios, counted random until now
            _recount(self.app_ios, self.app_bytes, self._key(n, op, "random"), self._key(n, op, "sequential"), n)

    def sample_in_flight(self, t: float, depth: int) -> None:
        """The kernel's count of requests in flight at time `t` (used when trace events were lost)."""
        if depth > 0 and self._in_window(t):
            self._step(t).in_flight[depth] += 1

    def feed_request(self, t: float, completed: bool, op: str, offset: int, size: int, pid: int = 0) -> None:
        """A request issued to the device (completed False, by task `pid`: 0 not known) or completed by it."""
        if t > self.last_t:
            self.last_t = t
        # A flush has no sector: issued at 0, it completes at (sector_t)-1, so flushes are matched by op alone.
        key = (op, None if op == "flush" else offset)
        if completed:
            if self._in_flight[key] > 0:
                self._in_flight[key] -= 1
                self.depth_now -= 1
            return
        if not self._in_window(t):
            return
        self._in_flight[key] += 1
        self.depth_now += 1
        if op not in ("read", "write") or size <= 0:
            kind = op if size > 0 or op not in ("read", "write") else f"zero-length {op}"
            self.kept_out[kind] += 1
            self.kept_out_bytes[kind] += size
            return
        step = self._index(t)
        access, opening = self._heads[op].access(offset, size, (step, size))
        stream = self._key(size, op, access)
        counts = self._step(t, step)
        if self.trace is not None:
            self.trace.add(int((t - self.start) * 1e9), op, offset, size, pid)
        self._where[offset // self._where_unit] += 1
        counts.ios[stream] += 1
        counts.bytes[stream] += size
        for was_step, n in opening:           # the stream's first two requests, counted random until now
            c = self.steps[was_step]
            _recount(c.ios, c.bytes, self._key(n, op, "random"), self._key(n, op, "sequential"), n)
        if self.with_queue_depth:
            counts.depth[self.depth_now] += 1
        if self.lba_min is None or offset < self.lba_min:
            self.lba_min = offset
        if offset + size > self.lba_max:
            self.lba_max = offset + size

    def note(self) -> str:
        """What the streams leave out, in words (for the capture's source note)."""
        parts = [f"{n:,} {op} requests ({self.kept_out_bytes[op]:,} bytes)" if self.kept_out_bytes[op]
                 else f"{n:,} {op} requests" for op, n in sorted(self.kept_out.items())]
        return (f"kept out of the IO streams (neither read nor write data): {', '.join(parts)}" if parts
                else "no discards or flushes seen")

    def capture(self, source: CaptureSource, device_size_bytes: int = 0) -> WorkloadCapture:
        """The workload record; steps cover `source.duration_s` in `source.step_s` pieces, the last one
        possibly shorter, empty steps included (an idle step is part of the workload)."""
        n_steps = step_count(source.duration_s, self.step_s)
        n_steps = max(n_steps, max(self.steps, default=-1) + 1)
        steps, total_ios, total_bytes, total_depth = [], Counter(), Counter(), Counter()
        sampled = self.lost_events > 0
        for i in range(n_steps):
            c = self.steps.get(i, _StepCounts())
            depth = c.in_flight if sampled else c.depth
            begin = i * self.step_s
            length = min(self.step_s, max(source.duration_s - begin, 0.0)) if source.duration_s > 0 else 0.0
            steps.append(Step(start_s=round(begin, 6), duration_s=round(length, 6), streams=_streams(c.ios, c.bytes),
                              queue_depth=QueueDepth(dict(sorted(depth.items()))), threads=len(c.issuers)))
            total_ios.update(c.ios)
            total_bytes.update(c.bytes)
            total_depth.update(depth)
        return WorkloadCapture(schema=SCHEMA, source=source, device_size_bytes=device_size_bytes,
                               lba_min_bytes=self.lba_min or 0, lba_max_bytes=self.lba_max,
                               streams=_streams(total_ios, total_bytes),
                               queue_depth=QueueDepth(dict(sorted(total_depth.items()))), steps=steps,
                               lost_events=self.lost_events,
                               queue_depth_from=(IN_FLIGHT_SAMPLES if sampled else COMPLETIONS)
                               if self.with_queue_depth else NO_DEPTHS,
                               application_streams=_streams(self.app_ios, self.app_bytes),
                               lba_zones=self._zones(device_size_bytes or self.device_size))

    def _zones(self, device_size: int) -> list[int]:
        """The LBA histogram: I/Os starting in each of LBA_ZONES equal parts of the device (of the span touched
        when its size is not known)."""
        if not self._where:
            return []
        if self.device_size and device_size == self.device_size:
            return [self._where.get(z, 0) for z in range(LBA_ZONES)]
        span = device_size or self.lba_max
        zones = [0] * LBA_ZONES
        for unit, n in self._where.items():
            zones[min(LBA_ZONES - 1, unit * self._where_unit * LBA_ZONES // span)] += n
        return zones


def _recount(ios: Counter, nbytes: Counter, was: StreamKey, now: StreamKey, size: int) -> None:
    """One I/O of `size` bytes moved from stream `was` to stream `now`."""
    ios[was] -= 1
    nbytes[was] -= size
    if not ios[was]:
        del ios[was], nbytes[was]
    ios[now] += 1
    nbytes[now] += size


def _streams(ios: Counter, nbytes: Counter) -> list[StreamCount]:
    """Most I/Os first (ties: more bytes, then the label)."""
    counts = [StreamCount(stream=k, ios=n, bytes=nbytes[k]) for k, n in ios.items()]
    return sorted(counts, key=lambda s: (-s.ios, -s.bytes, s.stream.label))
