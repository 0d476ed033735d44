"""Steady-state determination (SNIA PTS 2.0.2 §2.1.24) over one value per round.

`evaluate(values)` judges the measurement window formed by the last `window` values:

* SNIA rule (default): range  max(y) - min(y)          <= max_range * avg(y)  (20 %)
                       slope  |m| * (window - 1)       <= max_slope * avg(y)  (10 %)
  where m is the least-squares slope of y over the round numbers, so |m|*(n-1) is the
  max-min excursion of the fitted line across the window.
* reviewers' rule ("fit-band"): every point of the least-squares line over the window lies
  within avg(y) +- max_slope * avg(y); the range test still applies.

Bounds are inclusive by default (cloudharmony and TKperf accept equality); `inclusive=False`
makes them strict, as py-sss-pts reads the text. The window statistics are computed exactly
(`fractions.Fraction`, closed-form least squares): the verdict never depends on BLAS or on the order
of floating-point operations. One symmetric relative tolerance (TOLERANCE) decides "at the bound".
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Sequence

from ..settings import STEADY_RULES as RULES, SteadySettings

# the declared defaults ([steady_state] of a profile, `ssdpts steady-state`): declared once, in SteadySettings
DEFAULT = SteadySettings()
# One symmetric tolerance, relative to the allowed excursion: a measured value within it of the bound is
# "at the bound" - accepted by inclusive (<=) bounds, rejected by strict (<) ones. The arithmetic below is
# exact (rationals), so the tolerance only absorbs the decimal-to-binary rounding of the inputs themselves.
TOLERANCE = Fraction(1, 10**9)


def exact(value: float | int | str) -> Fraction:
    """A number as the decimal it was written as: 97.5 -> 195/2, 0.2 -> 1/5 (not the nearest binary double)."""
    if isinstance(value, int):
        return Fraction(value)
    return Fraction(repr(float(value)))


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


def within(measured: Fraction, allowed: Fraction, inclusive: bool) -> bool:
    """measured <= allowed (inclusive) or measured < allowed (strict), with the same tolerance band either way."""
    band = TOLERANCE * abs(allowed)
    return measured <= allowed + band if inclusive else measured < allowed - band


def least_squares(x: Sequence[Fraction], y: Sequence[Fraction]) -> tuple[Fraction, Fraction]:
    """Closed-form least-squares line y = m*x + b, exactly (no BLAS, no rounding)."""
    n = len(x)
    mx, my = sum(x, Fraction(0)) / n, sum(y, Fraction(0)) / n
    sxx = sum(((xi - mx) ** 2 for xi in x), Fraction(0))
    m = sum(((xi - mx) * (yi - my) for xi, yi in zip(x, y)), Fraction(0)) / sxx
    return m, my - m * mx


def evaluate(
    values: Sequence[float],
    window: int = DEFAULT.window,
    max_range: float = DEFAULT.max_range,
    max_slope: float = DEFAULT.max_slope,
    *,
    rounds: Sequence[int] | None = None,
    rule: str = DEFAULT.rule,
    inclusive: bool = DEFAULT.inclusive,
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
    # exact rationals: equality at a bound is decided exactly, whatever the BLAS or the summation order
    y = [exact(v) for v in values[-window:]]
    x = [Fraction(int(r)) for r in rounds[-window:]]
    avg = sum(y, Fraction(0)) / window
    slope, intercept = least_squares(x, y)
    rng = max(y) - min(y)
    excursion = abs(slope) * (x[-1] - x[0])
    range_allowed = exact(max_range) * avg
    common = dict(
        rule=rule, window=window, window_rounds=[int(r) for r in x], average=float(avg),
        range_measured=float(rng), range_allowed=float(range_allowed), slope=float(slope),
        intercept=float(intercept),
    )
    if avg <= 0:
        return SteadyState(False, slope_excursion_measured=float(excursion), slope_excursion_allowed=0.0,
                           reason="average is not positive", **common)
    slope_allowed = exact(max_slope) * avg
    if rule == "snia":
        slope_measured = excursion
    else:  # fit-band: the farthest fitted point from the average, against the band half-width
        slope_measured = max(abs(slope * xi + intercept - avg) for xi in x)
    range_ok = within(rng, range_allowed, inclusive)
    slope_ok = within(slope_measured, slope_allowed, inclusive)
    reason = "" if range_ok and slope_ok else " and ".join(
        r for r, bad in (("range exceeds allowed excursion", not range_ok),
                         ("slope exceeds allowed excursion", not slope_ok)) if bad)
    return SteadyState(range_ok and slope_ok, slope_excursion_measured=float(slope_measured),
                       slope_excursion_allowed=float(slope_allowed), reason=reason, **common)


def first_steady_round(values: Sequence[float], window: int = DEFAULT.window, **kw) -> int | None:
    """The first round x (1-based) whose window x-window+1..x is steady, as the PTS loop finds it."""
    for end in range(window, len(values) + 1):
        if evaluate(values[:end], window, **kw).reached:
            return end
    return None
