"""Block-layer I/O events reduced to a workload file: IO streams, queue depths, steps, LBA range.

Every source (tracefs, blktrace, fio's iolog) turns its records into `IoEvent`s; `Reducer` counts them.

Random or sequential, by a table of stream heads (`StreamHeads`, one per direction): an I/O is sequential
when it starts where an open stream is expected to continue (the end of that stream's last I/O), else random.
RWSW's reference capture tool (hIOmon) calls an I/O sequential when it starts where the previous I/O to the
same file ended; at the block layer there are no files and several streams interleave on one device, so a
single "previous I/O" would call most of them random. A stream opens when an I/O starts at the end of one of
the `CANDIDATE_ENDS` most recent I/Os of its direction; once open it is followed however slowly it goes
(a 64K log at 50 IOPS among 4K random writes at 8,000 IOPS: 160 other I/Os between two of its writes)
until `OPEN_STREAMS` busier streams push it out. A random I/O lands on one of the candidate ends rarely
(1,024 ends of a 1 TB device's 4 KiB blocks: ~1 in 260,000).

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

from .model import (COMPLETIONS, IN_FLIGHT_SAMPLES, NO_DEPTHS, SCHEMA, CaptureSource, QueueDepth, Step, StreamCount, StreamKey,
                    WorkloadCapture)

CANDIDATE_ENDS = 1024       # per direction; see the module's text
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


class StreamHeads:
    """One direction's open sequential streams, by the offset where each is expected to continue."""

    def __init__(self):
        self.candidates: OrderedDict = OrderedDict()    # ends of recent I/Os nobody continued yet, oldest first
        self.streams: OrderedDict = OrderedDict()       # heads of open streams, least recently continued first

    def access(self, offset: int, size: int) -> str:
        """'sequential' when the I/O continues an open stream or a recent I/O (then its stream opens)."""
        end = offset + size
        if offset in self.streams:
            del self.streams[offset]
        elif offset in self.candidates:
            del self.candidates[offset]
            if len(self.streams) >= OPEN_STREAMS:
                self.streams.popitem(last=False)
        else:
            self.candidates.pop(end, None)
            self.candidates[end] = None
            if len(self.candidates) > CANDIDATE_ENDS:
                self.candidates.popitem(last=False)
            return "random"
        self.streams.pop(end, None)
        self.streams[end] = None
        return "sequential"


def _new_heads() -> dict[str, StreamHeads]:
    return {rw: StreamHeads() for rw in ("read", "write")}


class Reducer:
    """Feed `IoEvent`s in time order; `capture()` returns the workload file's record.

    `start` is the capture's start on the events' clock; steps are `step_s` long from there."""

    def __init__(self, start: float, step_s: float, with_queue_depth: bool = True):
        self.start, self.step_s, self.with_queue_depth = start, step_s, with_queue_depth
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

    def feed_application(self, t: float, op: str, offset: int, size: int) -> None:
        """A bio as the application queued it (before splits and merges)."""
        if t < self.start or op not in ("read", "write") or size <= 0:
            return
        stream = self._key(size, op, self._app_heads[op].access(offset, size))
        self.app_ios[stream] += 1
        self.app_bytes[stream] += size

    def sample_in_flight(self, t: float, depth: int) -> None:
        """The kernel's count of requests in flight at time `t` (used when trace events were lost)."""
        if depth > 0 and t >= self.start:
            self.steps.setdefault(int((t - self.start) // self.step_s), _StepCounts()).in_flight[depth] += 1

    def feed_request(self, t: float, completed: bool, op: str, offset: int, size: int) -> None:
        """A request issued to the device (completed False) or completed by it."""
        if t > self.last_t:
            self.last_t = t
        # A flush has no sector: issued at 0, it completes at (sector_t)-1, so flushes are matched by op alone.
        key = (op, None if op == "flush" else offset)
        if completed:
            if self._in_flight[key] > 0:
                self._in_flight[key] -= 1
                self.depth_now -= 1
            return
        if t < self.start:
            return
        self._in_flight[key] += 1
        self.depth_now += 1
        if op not in ("read", "write") or size <= 0:
            kind = op if size > 0 or op not in ("read", "write") else f"zero-length {op}"
            self.kept_out[kind] += 1
            self.kept_out_bytes[kind] += size
            return
        stream = self._key(size, op, self._heads[op].access(offset, size))
        counts = self.steps.get(step := int((t - self.start) // self.step_s))
        if counts is None:
            counts = self.steps[step] = _StepCounts()
        counts.ios[stream] += 1
        counts.bytes[stream] += size
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
        n_steps = max(1, -int(-round(source.duration_s, 6) // self.step_s)) if source.duration_s > 0 else 1
        n_steps = max(n_steps, max(self.steps, default=-1) + 1)
        steps, total_ios, total_bytes, total_depth = [], Counter(), Counter(), Counter()
        sampled = self.lost_events > 0
        for i in range(n_steps):
            c = self.steps.get(i, _StepCounts())
            depth = c.in_flight if sampled else c.depth
            begin = i * self.step_s
            length = min(self.step_s, max(source.duration_s - begin, 0.0)) if source.duration_s > 0 else 0.0
            steps.append(Step(start_s=round(begin, 6), duration_s=round(length, 6), streams=_streams(c.ios, c.bytes),
                              queue_depth=QueueDepth(dict(sorted(depth.items())))))
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
                               application_streams=_streams(self.app_ios, self.app_bytes))


def _streams(ios: Counter, nbytes: Counter) -> list[StreamCount]:
    """Most I/Os first (ties: more bytes, then the label)."""
    counts = [StreamCount(stream=k, ios=n, bytes=nbytes[k]) for k, n in ios.items()]
    return sorted(counts, key=lambda s: (-s.ios, -s.bytes, s.stream.label))
