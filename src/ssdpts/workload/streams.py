"""Sequential streams that continue across cells and rounds (SNIA Throughput: the SEQ stream does not
restart at the start of the active range every round; ljishen/SSSPT carries the offset the same way).

Engines keep one `StreamPositions` per session: `place` gives a cell of a named stream its start, and
`advance` moves the stream by the bytes the cell really transferred, wrapping as fio does.
"""

from __future__ import annotations

from .spec import Workload


class StreamPositions:
    def __init__(self) -> None:
        self._pos: dict[tuple[str, int], int] = {}

    def place(self, w: Workload, target_index: int = 0) -> Workload:
        """The cell starting where its stream stands on that target (unchanged if it names no stream)."""
        if not w.stream or w.random:
            return w
        return w.with_(stream_offset=self._pos.get((w.stream, target_index), w.stream_offset))

    def advance(self, placed: Workload, target_index: int, bytes_done: int, capacity: int, align: int) -> int:
        """Record that `placed` moved `bytes_done` bytes (all clones); returns the stream's new position.

        fio streams over [start, slice end) and wraps back to `start`, so the end is
        start + bytes mod (slice - start); the next cell continues there (or at 0 at the slice's end)."""
        if not placed.stream or placed.random:
            return 0
        _, per_clone, _ = placed.clone_slices(capacity, align)
        start = placed.stream_offset
        span = per_clone - start
        done = bytes_done // max(placed.threads, 1)
        end = start + done % span if span > 0 else 0
        step = max(placed.max_bs, 1)
        end = end // step * step % per_clone if per_clone else 0
        self._pos[(placed.stream, target_index)] = end
        return end

    def position(self, stream: str, target_index: int = 0) -> int:
        return self._pos.get((stream, target_index), 0)
