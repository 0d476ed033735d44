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


def held_text(held: int, total: int, tolerance: float, drives: int) -> str:
    """How many review figures a preset holds, as every output says it. A review figure is one drive's (the
    enterprise preset's is the whole P3608 card, both halves summed): a run of several simulated drives sums
    them, so only each drive alone holds it, never the run's figures (two copies of one preset are two whole
    cards, not the card's two halves)."""
    text = f"{held} of {total} review figures held to ±{tolerance:.0%}"
    if drives == 1:
        return text
    return (f"{text} by each drive alone; this run's IOPS and MiB/s sum its {drives} drives, so they are not the "
            f"review's figures (two copies of one preset are two whole drives, not halves of one)")


@dataclass(frozen=True)
class SimulatedReview:
    presets: list[str]
    imitates: str                # "" for a user preset file (no review)
    tolerance: float
    figures: list[ReviewFigure]
    drives: int                  # simulated drives in the run: several are summed, each holds the figures alone

    @property
    def held(self) -> list[ReviewFigure]:
        return [f for f in self.figures if f.held]

    def lines(self) -> list[str]:
        """The review figures as `show` prints them, one per line, held first."""
        name = " + ".join(self.presets)
        if not self.figures:
            return [f"  review  preset {name}: no review figures (not a shipped preset)"]
        out = [f"  review  preset {name} imitates {self.imitates}: "
               f"{held_text(len(self.held), len(self.figures), self.tolerance, self.drives)}"]
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
    return SimulatedReview(presets, imitated(presets), TOLERANCE, figures, len(target.drives()))
