"""What IOPS and Latency share: a random block size × R/W mix matrix, purged, preconditioned (WIPC) and
run in rounds until the tracked cells are steady; one summary shape; the head of their report section.

The two tests differ in the load (profile: threads, iodepth), the tracking metric and their renderers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, TypeVar

from ..targets.record import PurgeRecord
from ..results import CellWindow, SteadyResult
from ..errors import SsdptsError
from ..settings import BLOCK_SIZES, PCTS, TRACK, TestSettings, declarations, declared_default, key
from ..units import bs_label
from .spec import Summary
from ..workload import Workload

if TYPE_CHECKING:     # running and drawing import theirs where they run: reading a stored summary needs neither
    from markupsafe import Markup

    from ..render.context import SectionContext
    from .context import TestContext
    from .rounds import SteadyOutcome


_DEFAULT_TRACKING = [["4k", 0]]


@dataclass(frozen=True)
class MatrixSettings(TestSettings):
    """The profile keys of a block size × R/W mix matrix test (IOPS, Latency)."""

    mixes: tuple[int, ...] = key(PCTS, [100, 95, 65, 50, 35, 5, 0], "read percentages, the outer loop")
    block_sizes: tuple[int, ...] = key(BLOCK_SIZES, ["1024k", "128k", "64k", "32k", "16k", "8k", "4k", "0.5k"],
                                       "block sizes, the inner loop (below the logical block size: skipped)")
    tracking: tuple[tuple[int, int], ...] = key(TRACK, _DEFAULT_TRACKING, "the cells whose steady state ends the rounds "
                                                "([block size, read %], cells of the matrix; unset and the matrix "
                                                "has no RND 4K write: its last cell)")

    def check(self, test: str, logical_block_size: int) -> None:
        """Tracking pairs the profile names are cells of the matrix (else another cell would be judged)."""
        super().check(test, logical_block_size)
        if self.tracking == declarations(MatrixSettings)["tracking"].value(_DEFAULT_TRACKING):
            return
        missing = [(bs, mix) for bs, mix in self.tracking if bs not in self.block_sizes or mix not in self.mixes]
        if missing:
            named = ", ".join(f'["{bs_label(bs)}", {mix}]' for bs, mix in missing)
            raise SsdptsError(f"{test}.tracking: {named} is not a cell of the matrix (block sizes "
                              f"{', '.join(map(bs_label, self.block_sizes))} × read % "
                              f"{', '.join(map(str, self.mixes))}); track cells of the matrix, e.g. "
                              f'[["{bs_label(self.block_sizes[-1])}", {self.mixes[-1]}]]')


@dataclass(frozen=True)
class LatencySettings(MatrixSettings):
    """Latency's matrix (PTS 2.0.2 Latency test: three mixes, three block sizes)."""

    mixes: tuple[int, ...] = declared_default(MatrixSettings, "mixes", [100, 65, 0])
    block_sizes: tuple[int, ...] = declared_default(MatrixSettings, "block_sizes", ["8k", "4k", "0.5k"])


@dataclass
class MatrixSummary(Summary):
    purge: PurgeRecord
    steady: SteadyResult
    cells: dict[str, CellWindow]                 # every cell's measurement-window averages
    block_sizes: list[int]                       # bytes, matrix order (inner loop)
    mixes: list[int]                             # read %, matrix order (outer loop)
    notes: list[str] = field(default_factory=list)

    def cell(self, bs: int, read_pct: int) -> CellWindow | None:
        """One matrix cell by block size and read %, None when the matrix lacks it."""
        for c in self.cells.values():
            rp = c.workload.read_pct if c.workload.read_pct is not None else (
                100 if c.workload.rw in ("read", "randread") else 0)
            if c.workload.bs == bs and rp == read_pct:
                return c
        return None


S = TypeVar("S", bound=MatrixSummary)


def run_matrix(ctx: TestContext, metric: str, summary: type[S],
               prepare: Callable[[list[Workload]], list[Workload]] | None = None,
               extra: Callable[[SteadyOutcome], dict] | None = None) -> S:
    """Purge -> WIPC -> rounds of the whole matrix until the tracked cells' `metric` is steady. `prepare` may
    adjust the cells (IOPS asks some for interval logs); `extra` adds summary fields from the outcome."""
    from .cells import rnd_matrix, tracked_cells
    from .windows import window_summary

    cells, sizes, mixes, notes = rnd_matrix(ctx)
    if prepare is not None:
        cells = prepare(cells)
    for n in notes:
        ctx.note(n)
    purge = ctx.purger.purge()
    outcome = ctx.rounds.run_to_steady_state("", cells, tracked_cells(ctx, cells, metric), precondition=ctx.cells.wipc())
    return summary(purge=purge, steady=outcome.record(), cells=window_summary(outcome.rounds, outcome.window_rounds),
                   block_sizes=sizes, mixes=mixes, notes=notes, **(extra(outcome) if extra else {}))


def section_head(ctx: SectionContext, s: MatrixSummary) -> tuple[list[Markup], list[int], list[int], dict]:
    """Notes, then the steady-state block: how a matrix test's report section begins; with the matrix
    (block sizes, mixes, (bs, read %) -> (name, cell)) its tables are drawn from (empty: nothing stored)."""
    from markupsafe import Markup

    from ..render.toolkit import bs_mix_matrix, notes_html

    out = notes_html(s.notes)
    out.append(Markup("<h3>Steady state</h3>"))
    out.append(ctx.steady_block("", s.steady))
    return (out, *bs_mix_matrix(s.cells))


def drive_labels(ctx: SectionContext, s: MatrixSummary) -> list[str]:
    """The drives of a parallel run found in the matrix's cells, in the run's order (empty: one drive)."""
    from ..render.drives import ordered_part_labels

    return ordered_part_labels(ctx.run, {p for c in s.cells.values() for p in c.parts})
