"""Block-layer I/O events reduced to a workload file: IO streams, queue depths, steps, LBA range.

Every source (tracefs, blktrace, fio's iolog) turns its records into `IoEvent`s; `Reducer` counts them.

Random or sequential: an I/O is sequential when its start equals the end of one of the `RECENT_ENDS` most
recent I/Os of the same direction, else random. RWSW's reference capture tool (hIOmon) calls an I/O
sequential when it starts where the previous I/O to the same file ended; at the block layer there are no
files, and several sequential streams (threads, or a queue depth above 1) interleave on one device, so a
single "previous I/O" would call most of them random. A small table of recent ends keeps interleaved
streams sequential while a random I/O rarely lands on one of so few ends (32 ends of a 1 TB device's
4 KiB blocks: ~1 in 8 million).

Queue depth: the requests in flight on the device when one is issued, the issued one included. An issue
is in flight until a completion with the same device, direction and start sector; completions of requests
issued before the capture began are not counted (the capture starts with the depth it sees, a little low).
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from dataclasses import dataclass, field

from .model import SCHEMA, CaptureSource, QueueDepth, Step, StreamCount, StreamKey, WorkloadCapture

RECENT_ENDS = 32            # per direction; see the module's text
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


class Reducer:
    """Feed `IoEvent`s in time order; `capture()` returns the workload file's record.

    `start` is the capture's start on the events' clock; steps are `step_s` long from there."""

    def __init__(self, start: float, step_s: float, with_queue_depth: bool = True):
        self.start, self.step_s, self.with_queue_depth = start, step_s, with_queue_depth
        self.steps: dict[int, _StepCounts] = {}
        self._ends = {rw: OrderedDict() for rw in ("read", "write")}     # end offset -> None, oldest first
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

    def feed(self, ev: IoEvent) -> None:
        self.last_t = max(self.last_t, ev.t)
        key = (ev.op, ev.offset)
        if ev.completed:
            if self._in_flight[key] > 0:
                self._in_flight[key] -= 1
                self.depth_now -= 1
            return
        if ev.t < self.start:
            return
        self._in_flight[key] += 1
        self.depth_now += 1
        if ev.op not in ("read", "write") or ev.size <= 0:
            kind = ev.op if ev.size > 0 or ev.op not in ("read", "write") else f"zero-length {ev.op}"
            self.kept_out[kind] += 1
            self.kept_out_bytes[kind] += ev.size
            return
        stream = StreamKey(ev.size, ev.op, self._access(ev))
        counts = self.steps.setdefault(int((ev.t - self.start) // self.step_s), _StepCounts())
        counts.ios[stream] += 1
        counts.bytes[stream] += ev.size
        if self.with_queue_depth:
            counts.depth[self.depth_now] += 1
        self.lba_min = ev.offset if self.lba_min is None else min(self.lba_min, ev.offset)
        self.lba_max = max(self.lba_max, ev.offset + ev.size)

    def _access(self, ev: IoEvent) -> str:
        ends = self._ends[ev.op]
        sequential = ends.pop(ev.offset, False) is None
        ends[ev.offset + ev.size] = None
        ends.move_to_end(ev.offset + ev.size)
        if len(ends) > RECENT_ENDS:
            ends.popitem(last=False)
        return "sequential" if sequential else "random"

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
        for i in range(n_steps):
            c = self.steps.get(i, _StepCounts())
            begin = i * self.step_s
            length = min(self.step_s, max(source.duration_s - begin, 0.0)) if source.duration_s > 0 else 0.0
            steps.append(Step(start_s=round(begin, 6), duration_s=round(length, 6), streams=_streams(c.ios, c.bytes),
                              queue_depth=QueueDepth(dict(sorted(c.depth.items())))))
            total_ios.update(c.ios)
            total_bytes.update(c.bytes)
            total_depth.update(c.depth)
        return WorkloadCapture(schema=SCHEMA, source=source, device_size_bytes=device_size_bytes,
                               lba_min_bytes=self.lba_min or 0, lba_max_bytes=self.lba_max,
                               streams=_streams(total_ios, total_bytes),
                               queue_depth=QueueDepth(dict(sorted(total_depth.items()))), steps=steps)


def _streams(ios: Counter, nbytes: Counter) -> list[StreamCount]:
    """Most I/Os first (ties: more bytes, then the label)."""
    counts = [StreamCount(stream=k, ios=n, bytes=nbytes[k]) for k, n in ios.items()]
    return sorted(counts, key=lambda s: (-s.ios, -s.bytes, s.stream.label))
