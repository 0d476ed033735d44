"""Distribution of the device idle measured at transitions (block layer), per test, from stored rounds, and
the one list of transitions that `show`, the report and `check` judge (`judged_transitions`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Callable, Sequence

from .db import RoundRecord

if TYPE_CHECKING:
    from ..engines.results import DeviceIdle

GAP_LIMIT_MS = 10.0   # SNIA: no idle between preconditioning and the test, nor between rounds; ssdpts's bound
RESUME_CAUSE = "resume"   # DeviceIdle.cause of the pause across a stop, and the kind of a round re-run after it
JUDGED_KINDS = ("precondition", "round", RESUME_CAUSE)   # stored round kinds whose transitions are judged
CELL_KINDS = ("precondition", "round")       # stored round kinds whose cells are judged one by one (a re-run: not)


@dataclass(frozen=True)
class Transition:
    """One transition between two cells: before a round's first cell (`index` -1) or between its cells
    `index` and `index + 1`; its idle judged against the idle the next cell asked for (HIR's wait states)."""

    round: RoundRecord
    index: int
    device: DeviceIdle | None        # the block layer's figure (None or ms None: not measured)
    gate_ms: float | None            # the engine's gate-side figure, a lower bound of the device's idle
    asked_ms: float                  # idle the next cell asked for (0 unless the idle is long enough to matter)

    @property
    def measured_ms(self) -> float | None:
        """The device's idle where measured, else the gate-side figure."""
        return self.device.ms if self.device is not None and self.device.ms is not None else self.gate_ms

    @property
    def source(self) -> str:
        return "device" if self.device is not None and self.device.ms is not None else "gate"

    @property
    def excess_ms(self) -> float:
        """Idle beyond what the next cell asked for."""
        return (self.measured_ms or 0.0) - self.asked_ms

    @property
    def over_limit(self) -> bool:
        return self.excess_ms > GAP_LIMIT_MS

    @property
    def across_resume(self) -> bool:
        return self.device is not None and self.device.cause == RESUME_CAUSE

    @property
    def where(self) -> str:
        name = f"{self.round.phase + ' ' if self.round.phase else ''}{_kind_name(self.round.kind)} {self.round.round}"
        return f"before {name}" if self.index < 0 else f"inside {name} (after cell {self.index + 1})"


def _kind_name(kind: str) -> str:
    return {"round": "round", "precondition": "preconditioning", RESUME_CAUSE: "re-run round"}.get(kind, kind)


def judged_transitions(rounds: Sequence[RoundRecord],
                       workloads_of: Callable[[int], list[dict]] | None = None) -> list[Transition]:
    """Every transition stored with these rounds: the one before each round and those between its cells.
    `workloads_of(round id)` gives a round's stored cells, read only where an idle is over the limit (did the
    next cell ask for it?); without it, no idle counts as asked for."""
    out = []
    for r in rounds:
        inside_gates = list(r.gaps_inside_ms or [])
        spots = [(-1, r.device_idle_before, r.gap_before_ms)]
        n = max(len(r.device_idle_inside), len(inside_gates))
        spots += [(i, r.device_idle_inside[i] if i < len(r.device_idle_inside) else None,
                   inside_gates[i] if i < len(inside_gates) else None) for i in range(n)]
        cells: list[dict] | None = None
        for index, device, gate in spots:
            t = Transition(r, index, device, gate, 0.0)
            if t.over_limit and workloads_of is not None and not t.across_resume:
                if cells is None:
                    cells = r.workloads or workloads_of(r.id)
                nxt = cells[index + 1] if index + 1 < len(cells) else {}
                t = Transition(r, index, device, gate, 1000.0 * float(nxt.get("idle_before_s") or 0.0))
            out.append(t)
    return out


@dataclass
class DeviceIdleSummary:
    transitions: int                 # transitions with a measured figure
    unmeasured: int                  # transitions without one (see note)
    max_ms: float | None
    p99_ms: float | None
    median_ms: float | None
    over_limit: int                  # transitions idling more than GAP_LIMIT_MS beyond any requested idle
    limit_ms: float = GAP_LIMIT_MS
    note: str = ""                   # why some or all are not measured
    across_resume: int = 0           # of those over the limit: pauses across a stop and its resume
    # transitions at which the device held requests it had been given (engines/blockidle.py: latency, not idle,
    # so not in the figures above) and the longest such hold
    held: int = 0
    held_max_ms: float | None = None

    def to_dict(self) -> dict:
        return asdict(self)

    def text(self) -> str:
        resumed = f" ({self.across_resume} across a resume)" if self.across_resume else ""
        if not self.transitions:
            over = f"; {self.over_limit} over {self.limit_ms:g} ms{resumed}" if self.over_limit else ""
            return f"device idle at transitions: {self.note or 'no transitions'}{over}{self._held_text()}"
        s = (f"device idle at transitions (block layer): {self.transitions} transitions, max {self.max_ms:.1f} ms, "
             f"p99 {self.p99_ms:.1f} ms, median {self.median_ms:.1f} ms, {self.over_limit} over {self.limit_ms:g} ms "
             f"beyond any requested idle{resumed}")
        s += f" ({self.unmeasured} not measured: {self.note})" if self.unmeasured else ""
        return s + self._held_text()

    def _held_text(self) -> str:
        if not self.held:
            return ""
        return (f"; the device held requests at {self.held} transition{'s' if self.held > 1 else ''} "
                f"(longest {self.held_max_ms:.1f} ms: latency, not idle)")


def nearest_rank(sorted_values: Sequence[float], pct: float) -> float:
    n = len(sorted_values)
    return sorted_values[min(n - 1, max(0, -(-n * pct // 100) - 1))]


def device_idle_summary(rounds: Sequence[RoundRecord],
                        workloads_of: Callable[[int], list[dict]] | None = None) -> DeviceIdleSummary:
    """Every transition stored with these rounds (a round's 'before' one and those between its cells), with
    the count over the limit that `check` judges (the same `judged_transitions`).
    Rounds timed by the test itself (HIR's requested idle) count too: read them with their request."""
    values, unmeasured, notes = [], 0, []
    found = judged_transitions(rounds, workloads_of)
    for t in found:
        if t.device is None:
            continue        # nothing stored there (a session's first round; a simulated drive's cells)
        if t.device.ms is None:
            unmeasured += 1
        else:
            values.append(t.device.ms)
    for r in rounds:
        if r.device_idle_note:
            notes.append(r.device_idle_note)
    values.sort()
    note = "; ".join(dict.fromkeys(notes))
    over = [t for t in found if t.over_limit]
    resumed = sum(1 for t in over if t.across_resume)
    holds = [t.device.held_ms for t in found if t.device is not None and t.device.held_ms > 0]
    held = dict(across_resume=resumed, held=len(holds), held_max_ms=max(holds, default=None))
    if not values:
        return DeviceIdleSummary(0, unmeasured, None, None, None, len(over), note=note, **held)
    return DeviceIdleSummary(len(values), unmeasured, values[-1], nearest_rank(values, 99), nearest_rank(values, 50),
                             len(over), note=note, **held)
