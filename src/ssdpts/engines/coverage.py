"""LBA coverage of one cell: which part of its active range the cell's I/O really touched.

The simulator counts it exactly (a bitmap over the job's range, sim/src/engine.rs `Coverage`); on a real device
`run --trace-stimulus` counts it from the block layer's completion events (capture/tracefs.py), of which it may
see only a share (`events_seen`, `events_lost`). docs/coverage.md explains the figures and the `coverage` rule.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

SEQUENTIAL, RANDOM, SKEWED = "sequential", "random", "skewed"   # how the cell chose its offsets


@dataclass
class Coverage:
    source: str                  # "simulator" | "tracefs"
    access: str                  # SEQUENTIAL | RANDOM (uniform) | SKEWED (zoned/zipf/pareto: no expectation)
    range_offset: int            # the cell's active range (all clones' slices), bytes
    range_bytes: int
    touched_bytes: int           # distinct bytes of the range touched at least once
    moved_bytes: int             # bytes transferred (of the events seen, for tracefs)
    lowest: int                  # lowest offset touched
    highest_end: int             # highest offset + length touched
    granule: int                 # the unit touched bytes are counted in (a partly touched granule counts whole)
    events_seen: int | None = None   # tracefs: block completions read; None for the simulator (it sees all)
    events_lost: int | None = None   # tracefs: completions the trace buffer dropped

    @property
    def touched_pct(self) -> float:
        return 100.0 * self.touched_bytes / self.range_bytes if self.range_bytes else 0.0

    @property
    def passes(self) -> float:
        """Bytes transferred over the range size: 1.0 is one full walk of the range."""
        return self.moved_bytes / self.range_bytes if self.range_bytes else 0.0

    @property
    def seen_pct(self) -> float | None:
        if self.events_seen is None:
            return None
        total = self.events_seen + (self.events_lost or 0)
        return 100.0 * self.events_seen / total if total else 100.0

    def expected_pct(self) -> float | None:
        """What the cell should touch: a sequential walk min(transferred, range); uniform random I/O
        1 - e^(-passes) of the range (n I/Os over N equal slots leave (1 - 1/N)^n ≈ e^(-n/N) untouched);
        None for skewed distributions."""
        if self.access == SEQUENTIAL:
            return 100.0 * min(1.0, self.passes)
        if self.access == RANDOM:
            return 100.0 * (1.0 - math.exp(-self.passes))
        return None

    def line(self) -> str:
        seen = f", {self.seen_pct:.1f} % of events seen" if self.seen_pct is not None else ""
        return (f"{self.touched_bytes / 2**20:,.0f} of {self.range_bytes / 2**20:,.0f} MiB touched "
                f"({self.touched_pct:.1f} %), {self.passes:.2f} passes, offsets {self.lowest / 2**20:,.1f}"
                f"–{self.highest_end / 2**20:,.1f} MiB{seen}")


def access_of(rw: str, distribution: str) -> str:
    if not rw.startswith("rand"):
        return SEQUENTIAL
    return RANDOM if distribution == "random" else SKEWED


def from_sim(d: dict | None, access: str, moved_bytes: int, active_range=None) -> Coverage | None:
    """The simulator's per-job `coverage` dict (sim/src/python.rs) as a record, against the cell's active range
    (offset, bytes) when given (the job's own range otherwise)."""
    if not d:
        return None
    offset, size = active_range or (d["range_offset"], d["range_bytes"])
    return Coverage(source="simulator", access=access, range_offset=int(offset),
                    range_bytes=int(size), touched_bytes=int(d["touched_bytes"]),
                    moved_bytes=moved_bytes, lowest=int(d["lowest"]), highest_end=int(d["highest_end"]),
                    granule=int(d["granule"]))


def from_data(d: dict | None) -> Coverage | None:
    """A stored record (CellResult JSON); None when the cell has none."""
    return Coverage(**d) if d else None
