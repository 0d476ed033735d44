"""A steady-state loop as text lines: `show` prints it for every test, and test renderers with several
loops (Throughput: one per block size) print theirs. Kept apart from `export.text`, which reads the
registry, so that test packages can use it without an import cycle."""

from __future__ import annotations

from ..pts.results import SteadyResult


def steady_lines(steady: SteadyResult, indent: str = "  ") -> list[str]:
    """The steady-state verdict and every tracker's determination figures (used by test renderers too)."""
    w = steady.window_rounds
    out = [f"{indent}steady state {'reached' if steady.reached else 'NOT REACHED'} after {steady.rounds} rounds"
           + (f" (window rounds {w[0]}-{w[-1]})" if w else "")]
    for t in steady.trackers:
        s = t.state
        if s.average is None:
            out.append(f"{indent}  {t.key.label}: {s.reason}")
            continue
        out.append(f"{indent}  {t.key.label}: avg {s.average:.6g}, range {s.range_measured:.4g} "
                   f"(≤ {s.range_allowed:.4g}), slope excursion {s.slope_excursion_measured:.4g} "
                   f"(≤ {s.slope_excursion_allowed:.4g}), fit y = {s.fit_formula}")
    return out
