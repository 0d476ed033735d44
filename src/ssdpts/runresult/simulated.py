"""A simulated run's review figures: which numbers of the drive its preset imitates the preset holds to the
calibration tolerance and which it does not (simdrive/calibration.py), as `show`, `show --json` and the
exports list them beside the report's 'Simulated drive' block."""

from __future__ import annotations

from dataclasses import dataclass

from ..targets.record import TargetRecord


@dataclass(frozen=True)
class ReviewFigure:
    preset: str
    where: str                   # the review's section and wording
    what: str                    # the quantity as the simulator measures it
    value: float                 # the review's number
    unit: str
    held: bool                   # held to the tolerance (tests/sim/test_presets.py), else shown only
    note: str                    # why it is not held, or how the review was read


@dataclass(frozen=True)
class SimulatedReview:
    presets: list[str]
    imitates: str                # "" for a user preset file (no review)
    tolerance: float
    figures: list[ReviewFigure]

    @property
    def held(self) -> list[ReviewFigure]:
        return [f for f in self.figures if f.held]

    def lines(self) -> list[str]:
        """The review figures as `show` prints them, one per line, held first."""
        name = " + ".join(self.presets)
        if not self.figures:
            return [f"  review  preset {name}: no review figures (not a shipped preset)"]
        out = [f"  review  preset {name} imitates {self.imitates}: {len(self.held)} of {len(self.figures)} review "
               f"figures held to ±{self.tolerance:.0%} (the rest shown only)"]
        several = len(self.presets) > 1
        for f in sorted(self.figures, key=lambda f: not f.held):
            out.append(f"    {'held' if f.held else 'not held':8} {f.preset + ': ' if several else ''}{f.where} "
                       f"— {f.what}" + ("" if f.held else f"; not held because {f.note}"))
        return out


def simulated_review(target: TargetRecord) -> SimulatedReview | None:
    """The review figures of a simulated target's presets; None for a real drive."""
    presets = target.simulated_presets
    if presets is None:
        return None
    # here: the calibration module loads the simulator, which only a simulated run needs
    from ..simdrive.calibration import FIGURES, TOLERANCE, imitated
    figures = [ReviewFigure(f.preset, f.where, f.what, f.value, f.unit, f.held, f.note)
               for p in presets for f in FIGURES if f.preset == p]
    return SimulatedReview(presets, imitated(presets), TOLERANCE, figures)
