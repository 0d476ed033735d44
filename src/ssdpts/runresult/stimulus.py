"""Each test's stimulus records (engines/stimulus.py) read back from the store, judged against the cells'
workloads: the `stimulus` deviations, `show --json`'s per-cell rows and the tidy metrics (export/text.py writes
the `show` lines from `StimulusSummary`)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterator, Sequence

from ..clock import Clock
from ..deviations import STIMULUS_SOURCE, Deviation
from ..engines.stimulus import Mismatch, Stimulus, judge, size_label
from ..store.db import RoundRecord
from ..workload import Workload


@dataclass
class CellStimulus:
    """One cell's record with what it asked for and how it differs."""

    phase: str
    kind: str
    round: int
    cell: str
    asked: str                    # "4 KiB, 70 % reads, 2 × 4 outstanding"
    stimulus: Stimulus
    mismatches: list[Mismatch] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.phase + ' ' if self.phase else ''}{self.kind} {self.round} {self.cell}"


@dataclass
class StimulusSummary:
    """A test's cells as the device saw them."""

    cells: list[CellStimulus] = field(default_factory=list)
    unrecorded: int = 0           # cells stored without a record or a note of why (every engine gives one now)

    @property
    def measured(self) -> list[CellStimulus]:
        return [c for c in self.cells if c.stimulus.measured]

    @property
    def mismatched(self) -> list[CellStimulus]:
        return [c for c in self.cells if c.mismatches]

    def notes(self) -> list[str]:
        return list(dict.fromkeys(c.stimulus.note for c in self.cells if not c.stimulus.measured))

    def why_unmeasured(self) -> str:
        """Why no cell has a record: the engines' notes (every engine stores a record or says why not); cells
        stored with neither are said to be, not guessed at."""
        unrecorded = (f"not recorded: {self.unrecorded} cell(s) stored without a record or a reason"
                      if self.unrecorded else "")
        return "; ".join([*self.notes(), *([unrecorded] if unrecorded else [])]) or "no cells"

    def deviations(self) -> list[Deviation]:
        """One `stimulus` deviation per finding (the same words in every cell), its first cell as the example."""
        by_finding: dict[str, list[tuple[CellStimulus, Mismatch]]] = defaultdict(list)
        for c in self.cells:
            for m in c.mismatches:
                by_finding[m.what].append((c, m))
        return [Deviation("stimulus", f"{what}: {len(found)} of {len(self.measured)} cells, e.g. {found[0][0].where}"
                          + (f" ({found[0][1].detail})" if found[0][1].detail else ""), STIMULUS_SOURCE)
                for what, found in by_finding.items()]

    def to_data(self) -> dict:
        return {"cells": [{"phase": c.phase, "kind": c.kind, "round": c.round, "cell": c.cell, "asked": c.asked,
                           **c.stimulus.to_dict(), **figures(c.stimulus),
                           "mismatches": [{"kind": m.kind, "evidence": m.evidence} for m in c.mismatches]}
                          for c in self.cells],
                "unrecorded": self.unrecorded, "mismatched": len(self.mismatched)}


def asked_words(w: Workload) -> str:
    size = size_label(w.bs) if not w.bssplit else "split " + "/".join(size_label(b) for b, _ in w.bssplit)
    return f"{size}, {w.reads} % reads, {w.threads} × {w.iodepth} outstanding"


def figures(s: Stimulus) -> dict[str, float | None]:
    """The derived figures of a record (what show --json and tidy exports add to its counts)."""
    return {"read_request_bytes": s.request_bytes("read"), "write_request_bytes": s.request_bytes("write"),
            "read_share": s.read_share, "queue_depth": s.queue_depth, "utilisation": s.utilisation}


def summarise(rounds: Sequence[RoundRecord]) -> StimulusSummary:
    """Every cell of `rounds` (stored with cells and workloads) judged against its workload."""
    out = StimulusSummary()
    for r in rounds:
        for cell, wd in zip(r.cells, r.workloads):
            if cell.stimulus is None:
                out.unrecorded += 1
                continue
            w = Workload.from_dict(wd)
            out.cells.append(CellStimulus(r.phase, r.kind, r.round, cell.name, asked_words(w), cell.stimulus,
                                          judge(w, cell, cell.stimulus, Clock.of_engine(r.engine).writer)))
    return out


STIMULUS_UNITS = {"read_request_bytes": "B", "write_request_bytes": "B", "read_share": "%", "queue_depth": "requests",
                  "utilisation": "%"}


def tidy_metrics(s: Stimulus | None) -> Iterator[tuple[str, float, str]]:
    """(metric, value, unit) of a cell's record for the tidy table: counts, then the derived figures."""
    if s is None or not s.measured:
        return
    for k in ("read_ios", "read_bytes", "write_ios", "write_bytes", "discard_ios", "discard_bytes"):
        yield f"device_{k}", getattr(s, k), "I/Os" if k.endswith("ios") else "B"
    for k, v in figures(s).items():
        if v is not None:
            yield f"device_{k}", 100 * v if STIMULUS_UNITS[k] == "%" else v, STIMULUS_UNITS[k]
