"""Steady-state determination (SNIA PTS 2.0.2 §2.1.24) over one value per round.

`evaluate(values)` judges the measurement window formed by the last `window` values:

* SNIA rule (default): range  max(y) - min(y)          <= max_range * avg(y)  (20 %)
                       slope  |m| * (window - 1)       <= max_slope * avg(y)  (10 %)
  where m is the least-squares slope of y over the round numbers, so |m|*(n-1) is the
  max-min excursion of the fitted line across the window.
* reviewers' rule ("fit-band"): every point of the least-squares line over the window lies
  within avg(y) +- max_slope * avg(y); the range test still applies.

Bounds are inclusive by default (cloudharmony and TKperf accept equality); `inclusive=False`
makes them strict, as py-sss-pts reads the text.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Sequence

import numpy as np

RULES = ("snia", "fit-band")
_EPS = 1e-12  # relative tolerance so values exactly at a bound are judged at the bound


@dataclass(frozen=True)
class SteadyState:
    reached: bool
    rule: str
    window: int
    window_rounds: list[int] = field(default_factory=list)
    average: float | None = None
    range_measured: float | None = None
    range_allowed: float | None = None
    slope_excursion_measured: float | None = None
    slope_excursion_allowed: float | None = None
    slope: float | None = None
    intercept: float | None = None
    reason: str = ""

    @property
    def fit_formula(self) -> str:
        if self.slope is None or self.intercept is None:
            return ""
        return f"{self.slope:.4g} * R + {self.intercept:.6g}"

    def to_dict(self) -> dict:
        d = asdict(self)
        d["fit_formula"] = self.fit_formula
        return d


def _le(measured: float, allowed: float, inclusive: bool) -> bool:
    if inclusive:
        return measured <= allowed * (1 + _EPS) + _EPS
    return measured < allowed


def evaluate(
    values: Sequence[float],
    window: int = 5,
    max_range: float = 0.20,
    max_slope: float = 0.10,
    *,
    rounds: Sequence[int] | None = None,
    rule: str = "snia",
    inclusive: bool = True,
) -> SteadyState:
    """Judge the last `window` values (one per round; `rounds` are their round numbers, default 1..n)."""
    if rule not in RULES:
        raise ValueError(f"unknown steady-state rule {rule!r}; allowed: {', '.join(RULES)}")
    if window < 2:
        raise ValueError("window must be at least 2 rounds")
    values = [float(v) for v in values]
    rounds = list(rounds) if rounds is not None else list(range(1, len(values) + 1))
    if len(rounds) != len(values):
        raise ValueError("rounds and values differ in length")
    if len(values) < window:
        return SteadyState(False, rule, window, rounds, reason=f"only {len(values)} of {window} window rounds")
    y = np.array(values[-window:])
    x = np.array(rounds[-window:], dtype=float)
    avg = float(y.mean())
    slope, intercept = (float(c) for c in np.polyfit(x, y, 1))
    rng = float(y.max() - y.min())
    excursion = abs(slope) * float(x[-1] - x[0])
    common = dict(
        rule=rule, window=window, window_rounds=[int(r) for r in x], average=avg,
        range_measured=rng, range_allowed=max_range * avg, slope=slope, intercept=intercept,
    )
    if avg <= 0:
        return SteadyState(False, slope_excursion_measured=excursion, slope_excursion_allowed=0.0,
                           reason="average is not positive", **common)
    if rule == "snia":
        slope_measured, slope_allowed = excursion, max_slope * avg
    else:  # fit-band: the farthest fitted point from the average, against the band half-width
        fitted = slope * x + intercept
        slope_measured, slope_allowed = float(np.abs(fitted - avg).max()), max_slope * avg
    range_ok = _le(rng, max_range * avg, inclusive)
    slope_ok = _le(slope_measured, slope_allowed, inclusive)
    reason = "" if range_ok and slope_ok else " and ".join(
        r for r, bad in (("range exceeds allowed excursion", not range_ok),
                         ("slope exceeds allowed excursion", not slope_ok)) if bad)
    return SteadyState(range_ok and slope_ok, slope_excursion_measured=slope_measured,
                       slope_excursion_allowed=slope_allowed, reason=reason, **common)


def first_steady_round(values: Sequence[float], window: int = 5, **kw) -> int | None:
    """The first round x (1-based) whose window x-window+1..x is steady, as the PTS loop finds it."""
    for end in range(window, len(values) + 1):
        if evaluate(values[:end], window, **kw).reached:
            return end
    return None
