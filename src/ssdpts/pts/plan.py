"""What a test will do, before it does it (`ssdpts plan`): phases in order with their fio parameters,
the minimum and maximum duration, and the bytes written.

A test's `plan` builds its phases from the same matrix functions its `run` uses, so the plan and the
run cannot drift apart. Durations are exact where the spec fixes them (cell runtimes, idle periods,
rounds); a steady-state loop ends between `window` rounds (steady at the first chance) and its round
limit. Bytes written are exact for size-bound writes (WIPC) and "depends on the drive" for time-bound
writes (their amount is the drive's write speed × time).

A size-bound write takes as long as the drive needs: `TestPlan.estimate(write speed)` times it at a given
(claimed) sequential write speed, and says which bytes stay untimed when no speed is known.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

from ..targets.purge import PurgeRecord, planned_purge
from ..units import bs_label
from ..workload import Workload
from .cells import rnd_matrix, tracked_cells

if TYPE_CHECKING:     # annotations only: reading a stored run's settings imports no round loop
    from .context import TestContext


@dataclass
class PlannedCell:
    name: str
    rw: str
    block_size: str
    read_pct: int | None
    threads: int                 # TC (fio numjobs)
    iodepth: int                 # QD per thread
    runtime_s: float | None      # time-bound cell
    io_bytes: int | None         # size-bound cell: bytes in total (all threads)
    idle_before_s: float = 0.0
    reads_pct: int = 0           # share of the I/O that is reads (io_bytes counts both directions)
    ramp_s: float = 0.0          # fio ramp_time: runs before the measured runtime
    # the cell itself, for checks before a run (is the target large enough for it?); not part of the plan's data
    workload: Workload | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def of(cls, w: Workload) -> "PlannedCell":
        cell = cls(w.name, w.rw, w.bs_label, w.read_pct, w.threads, w.iodepth, w.runtime_s,
                   w.io_size * w.threads if w.io_size else None, w.idle_before_s, w.reads, w.ramp_s)
        cell.workload = w
        return cell


@dataclass
class Phase:
    name: str                    # purge | precondition | rounds | sequence | stream
    what: str                    # in words, with the source of the rule where it matters
    cells: list[PlannedCell] = field(default_factory=list)
    rounds_min: int = 1
    rounds_max: int = 1
    seconds_min: float | None = 0.0    # None: bound by bytes, depends on the drive's speed
    seconds_max: float | None = 0.0
    bytes_written: int | None = 0      # None: time-bound writes, depends on the drive
    purge: PurgeRecord | None = None

    def seconds_at(self, write_bps: float | None) -> tuple[float | None, float | None]:
        """(least, most) seconds with size-bound writes timed at `write_bps` (None: unknown). The cells of a
        "stream" run once (its rounds are intervals cut from them); other phases run them once per round."""
        if not self.cells:
            return self.seconds_min, self.seconds_max
        spans = [cell_seconds(c, write_bps) for c in self.cells]
        passes_min, passes_max = (1, 1) if self.name == "stream" else (self.rounds_min, self.rounds_max)
        lo = None if any(a is None for a, _ in spans) else passes_min * sum(a for a, _ in spans)
        hi = None if any(b is None for _, b in spans) else passes_max * sum(b for _, b in spans)
        if self.seconds_max is not None:         # a limit of the phase itself (WSAT: time limit, round limit)
            hi = self.seconds_max if hi is None else min(hi, self.seconds_max)
        if lo is not None and hi is not None:
            lo = min(lo, hi)
        return lo, hi


def cell_seconds(c: PlannedCell, write_bps: float | None) -> tuple[float | None, float | None]:
    """(least, most) seconds of one pass of a cell, idle included. A time-bound cell: its runtime. A size-bound
    write: its bytes at the write speed. Bound by both: from the bytes at the write speed (the drive writes no
    faster than its claimed speed) to the runtime (a slower drive). A size-bound cell with reads and no
    runtime: unknown (there is no read speed to time it by)."""
    if c.io_bytes is None:
        lo = hi = c.runtime_s or 0.0
    else:
        at_speed = c.io_bytes * (100 - c.reads_pct) / 100 / write_bps if write_bps else None
        if c.runtime_s is None:
            lo = hi = at_speed if c.reads_pct == 0 else None
        else:
            lo, hi = (None if at_speed is None else min(at_speed, c.runtime_s)), c.runtime_s
    idle = c.idle_before_s + c.ramp_s
    return (None if lo is None else lo + idle), (None if hi is None else hi + idle)


@dataclass
class Estimate:
    """A test's (or a plan's) duration with size-bound writes timed at a write speed."""
    write_bps: float | None
    seconds_min: float           # of the phases whose least time is known
    seconds_max: float           # of the phases whose most time is known
    untimed_bytes: int           # bytes of phases whose time is not known: not in seconds_min (nor seconds_max)

    def __add__(self, other: "Estimate") -> "Estimate":
        return Estimate(self.write_bps, self.seconds_min + other.seconds_min, self.seconds_max + other.seconds_max,
                        self.untimed_bytes + other.untimed_bytes)


@dataclass
class TestPlan:
    test: str
    phases: list[Phase]
    notes: list[str] = field(default_factory=list)

    @property
    def seconds_min(self) -> float:
        """Time of the time-bound phases at the least (size-bound phases add `size_bound_bytes` at drive speed)."""
        return sum(p.seconds_min for p in self.phases if p.seconds_min is not None)

    @property
    def seconds_max(self) -> float:
        return sum(p.seconds_max for p in self.phases if p.seconds_max is not None)

    @property
    def size_bound_bytes(self) -> int:
        """Bytes of phases that end when written (their time is these bytes at the drive's speed)."""
        return sum(p.bytes_written or 0 for p in self.phases if p.seconds_max is None)

    @property
    def bytes_written_known(self) -> int:
        return sum(p.bytes_written for p in self.phases if p.bytes_written is not None)

    @property
    def bytes_exact(self) -> bool:
        """False when time-bound writes add an amount that depends on the drive's speed."""
        return all(p.bytes_written is not None for p in self.phases)

    def estimate(self, write_bps: float | None) -> Estimate:
        spans = [(p, *p.seconds_at(write_bps)) for p in self.phases]
        return Estimate(write_bps, sum(lo for _, lo, _ in spans if lo is not None),
                        sum(hi for _, _, hi in spans if hi is not None),
                        sum(p.bytes_written or 0 for p, lo, hi in spans if lo is None or hi is None))


def plans_write(plans: Sequence[TestPlan], tests_without_plan: int = 0) -> bool:
    """Whether the tests write to the target (a purge, or any cell not all reads): read-only tests need no
    --destroy-data. A test without a plan is taken to write."""
    return tests_without_plan > 0 or any(
        phase.name == "purge" or any(c.workload is None or c.reads_pct < 100 for c in phase.cells)
        for plan in plans for phase in plan.phases)


def planned_workloads(plans: Sequence[TestPlan]) -> list[tuple[str, Workload]]:
    """(test, cell) for every cell the plans will run."""
    return [(plan.test, c.workload) for plan in plans for phase in plan.phases for c in phase.cells
            if c.workload is not None]


def _round_seconds(cells: Sequence[Workload]) -> float | None:
    if any(c.runtime_s is None for c in cells):
        return None
    return sum((c.runtime_s or 0.0) + c.idle_before_s + c.ramp_s for c in cells)


def _written(cells: Sequence[Workload]) -> int | None:
    """Bytes one pass of `cells` writes: exact for size-bound cells without reads, else unknown."""
    total = 0
    for c in cells:
        if c.rw in ("read", "randread") or c.read_pct == 100:
            continue
        if c.io_size is None or c.rw in ("randrw", "rw"):
            return None
        total += c.io_size * c.threads
    return total


def purge_phase(ctx: TestContext, what: str = "") -> Phase:
    rec = planned_purge(ctx.target, ctx.purge_method)
    label = rec.method + ("" if rec.snia_purge else " — NOT a SNIA purge")
    return Phase("purge", what or f"purge: {label}" + (f" ({rec.note})" if rec.note else "")
                 + "; its own duration (seconds to hours on real drives) is not included", purge=rec)


def wipc_phase(ctx: TestContext, block_size: int | None = None, multiple: float | None = None) -> Phase:
    w = ctx.cells.wipc(block_size, multiple)
    return once("precondition", f"workload-independent preconditioning (WIPC): SEQ {bs_label(w.bs)} writes, "
                f"{(w.io_size or 0) * w.threads / ctx.target.size_bytes:.2g}× the user capacity over the active range, "
                f"TC{w.threads}/QD{w.iodepth}", [w])


def once(name: str, what: str, cells: Sequence[Workload]) -> Phase:
    """Cells run once, back to back (a preconditioning pass, a sequence of bursts and idle periods)."""
    secs = _round_seconds(cells)
    return Phase(name, what, [PlannedCell.of(c) for c in cells], 1, 1, secs, secs, _written(cells))


def fixed_rounds(cells: Sequence[Workload], what: str, rounds: int) -> Phase:
    """Exactly `rounds` rounds of `cells` (no steady-state judgement ends them early)."""
    secs = _round_seconds(cells)
    written = _written(cells)
    return Phase("rounds", what, [PlannedCell.of(c) for c in cells], rounds, rounds,
                 None if secs is None else secs * rounds, None if secs is None else secs * rounds,
                 None if written is None else written * rounds)


def steady_loop(ctx: TestContext, cells: Sequence[Workload], what: str, min_rounds: int | None = None) -> Phase:
    """Rounds of `cells` until steady state: at least the window, at most the round limit."""
    steady = ctx.settings.steady
    window = steady.window
    hi = steady.max_rounds
    lo = min(min_rounds or window, hi)   # a round limit below the window ends the loop first (not steady)
    secs = _round_seconds(cells)
    return Phase("rounds", f"{what}; steady state by {steady.rule} rule over a {window}-round window, "
                           f"{lo} to {hi} rounds", [PlannedCell.of(c) for c in cells], lo, hi,
                 None if secs is None else secs * lo, None if secs is None else secs * hi,
                 None if _written(cells) is None else _written(cells) * hi)


def rnd_matrix_plan(ctx: TestContext, test: str, metric: str) -> TestPlan:
    """Purge, WIPC, then rounds of the random block size × R/W mix matrix (IOPS, Latency)."""
    cells, sizes, mixes, notes = rnd_matrix(ctx)
    tracked = ", ".join(t.label for t in tracked_cells(ctx, cells, metric))
    return TestPlan(test, [purge_phase(ctx), wipc_phase(ctx),
                           steady_loop(ctx, cells, f"rounds of {len(mixes)} R/W mixes (outer loop) × {len(sizes)} "
                                                   f"block sizes (inner loop), tracking {tracked}")], notes)
