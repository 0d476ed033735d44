"""The report's LBA coverage block (docs/coverage.md): per test, each cell's least covered round against what its
I/O should touch, from the simulator or from `run --trace-stimulus`'s block completions."""

from __future__ import annotations

import logging

from markupsafe import Markup, escape

from ..runresult.coverage import SHORT_FRACTION, CellCoverage, cell_coverages
from ..store.idle import CELL_KINDS

log = logging.getLogger("ssdpts")
MIB = 2**20


def least_covered(cells: list[CellCoverage]) -> list[tuple[CellCoverage, int, int]]:
    """Per cell name, in first-run order: (its least covered record for its I/O, rounds, rounds short)."""
    by_name: dict[str, list[CellCoverage]] = {}
    for c in cells:
        by_name.setdefault(c.cell, []).append(c)
    return [(min(group, key=lambda c: c.ratio), len(group), sum(c.short for c in group))
            for group in by_name.values()]


def coverage_block(ctx) -> Markup:
    """The test's coverage table, or a note saying why there is none. Never raises."""
    try:
        cells = cell_coverages([r for kind in CELL_KINDS for r in ctx.rounds(kind=kind)])
        if not cells:
            if ctx.run.get("engine") == "sim":
                return Markup("")
            return Markup('<p class="note">LBA coverage: not recorded (fio cells are traced with '
                          '<code>ssdpts run --trace-stimulus</code>; docs/coverage.md).</p>')
        rows = []
        for c, rounds, short in least_covered(cells):
            cov = c.coverage
            rows.append([c.cell, rounds, short, cov.touched_pct, c.expected_pct, cov.passes,
                         cov.range_bytes / MIB, f"{cov.lowest / MIB:,.1f}–{cov.highest_end / MIB:,.1f}",
                         cov.seen_pct, cov.events_lost])
        source = cells[0].coverage.source
        return ctx.table("coverage", ["Cell", "Rounds", "Short", "Touched (%)", "Expected (%)", "Passes",
                                      "Range (MiB)", "Offsets (MiB)", "Events seen (%)", "Events lost"], rows,
                         caption=f"LBA coverage per cell ({source}): its least covered round for its I/O. Expected: "
                                 f"a SEQ cell min(moved, range), a uniform random cell 1 − e^−passes; short below "
                                 f"{SHORT_FRACTION:.0%} of that (the coverage deviation). Events: block completions "
                                 f"read (tracefs only).")
    except Exception as e:   # never lose a report for coverage data
        log.warning("coverage block for %s failed: %s", getattr(ctx, "name", "?"), e)
        return Markup(f'<p class="warn">Coverage block failed: {escape(str(e))}</p>')
