"""The LBA coverage of a test's cells (engines/coverage.py), as `show` (export/text.py writes its lines),
`show --json`, the report and the tidy table read it, and the `coverage` rule of `ssdpts check`
(docs/conformance.md): the rule's deviation names its evidence, as every rule's does."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from ..deviations import COVERAGE_SOURCE, Deviation
from ..engines.coverage import Coverage
from ..store import Store

# A cell falls short when it touched less than this share of what its I/O should touch (expected_pct). A uniform
# random cell's distinct count spreads by well under 1 % of the range once the range holds thousands of blocks,
# and a SEQ cell touches exactly min(transferred, range): 10 % below either is a cell that missed part of its range.
SHORT_FRACTION = 0.9


@dataclass
class CellCoverage:
    phase: str
    kind: str
    round: int
    cell: str
    coverage: Coverage
    expected_pct: float | None      # what the cell's I/O should touch (Coverage.expected_pct)

    @property
    def short(self) -> bool:
        return self.expected_pct is not None and self.coverage.touched_pct < SHORT_FRACTION * self.expected_pct

    @property
    def ratio(self) -> float:
        """Touched over expected (1.0: as expected; a skewed cell, with no expectation, counts as 1.0)."""
        return self.coverage.touched_pct / self.expected_pct if self.expected_pct else 1.0

    def where(self) -> str:
        return f"{self.cell} ({' '.join(str(x) for x in (self.phase, self.kind, self.round) if x != '')})"


def cell_coverages(rounds) -> list[CellCoverage]:
    """Every cell of these stored rounds (with their cells) that has a coverage record, in their order."""
    return [CellCoverage(r.phase, r.kind, r.round, c.name, c.coverage, c.coverage.expected_pct())
            for r in rounds for c in r.cells if c.coverage is not None]


def coverage_metrics(cov: Coverage | None) -> Iterator[tuple[str, float, str]]:
    """Tidy-table rows of one cell's coverage (none when it has no record)."""
    if cov is None:
        return
    yield "coverage_touched", cov.touched_pct, "%"
    expected = cov.expected_pct()
    if expected is not None:
        yield "coverage_expected", expected, "%"
    yield "coverage_passes", cov.passes, "passes"
    yield "coverage_touched_bytes", cov.touched_bytes, "B"
    yield "coverage_range_bytes", cov.range_bytes, "B"
    if cov.seen_pct is not None:
        yield "coverage_events_seen", cov.seen_pct, "%"


def coverage_deviations(cells: list[CellCoverage]) -> list[Deviation]:
    short = [c for c in cells if c.short]
    if not short:
        return []
    worst = min(short, key=lambda c: c.ratio)
    return [Deviation("coverage", f"{len(short)} cells touched less of their active range than their I/O should, "
                      f"e.g. {worst.where()}: {worst.coverage.line()}; expected {worst.expected_pct:.1f} % "
                      f"(short below {SHORT_FRACTION:.0%} of that)", COVERAGE_SOURCE)]


def coverage_rule(run, t, store: Store) -> list[Deviation]:
    """`ssdpts check`'s rule over a loaded test (runresult/model.py `TestResult.coverage`)."""
    return coverage_deviations(t.coverage)
