"""Distribution of the device idle measured at transitions (block layer), per test, from stored rounds."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

from .db import RoundRecord

GAP_LIMIT_MS = 10.0   # SNIA: no idle between preconditioning and the test, nor between rounds; ssdpts's bound


@dataclass
class DeviceIdleSummary:
    transitions: int                 # transitions with a measured figure
    unmeasured: int                  # transitions without one (see note)
    max_ms: float | None
    p99_ms: float | None
    median_ms: float | None
    over_limit: int                  # transitions idling more than GAP_LIMIT_MS
    limit_ms: float = GAP_LIMIT_MS
    note: str = ""                   # why some or all are not measured

    def to_dict(self) -> dict:
        return asdict(self)

    def text(self) -> str:
        if not self.transitions:
            return f"device idle at transitions: {self.note or 'no transitions'}"
        s = (f"device idle at transitions (block layer): {self.transitions} transitions, max {self.max_ms:.1f} ms, "
             f"p99 {self.p99_ms:.1f} ms, median {self.median_ms:.1f} ms, {self.over_limit} over {self.limit_ms:g} ms")
        return s + (f" ({self.unmeasured} not measured: {self.note})" if self.unmeasured else "")


def nearest_rank(sorted_values: Sequence[float], pct: float) -> float:
    n = len(sorted_values)
    return sorted_values[min(n - 1, max(0, -(-n * pct // 100) - 1))]


def device_idle_summary(rounds: Sequence[RoundRecord]) -> DeviceIdleSummary:
    """Every transition stored with these rounds (a round's 'before' one and those between its cells).
    Rounds timed by the test itself (HIR's requested idle) count too: read them with their request."""
    values, unmeasured, notes = [], 0, []
    for r in rounds:
        for d in ([r.device_idle_before] if r.device_idle_before else []) + r.device_idle_inside:
            if d.ms is None:
                unmeasured += 1
            else:
                values.append(d.ms)
        if r.device_idle_note:
            notes.append(r.device_idle_note)
    values.sort()
    note = "; ".join(dict.fromkeys(notes))
    if not values:
        return DeviceIdleSummary(0, unmeasured, None, None, None, 0, note=note)
    return DeviceIdleSummary(len(values), unmeasured, values[-1], nearest_rank(values, 99), nearest_rank(values, 50),
                             sum(1 for v in values if v > GAP_LIMIT_MS), note=note)
