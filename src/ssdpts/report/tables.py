"""`ssdpts export --format csv`: every table of the report as a CSV file (the same rows, no plots).

The tables are the report's own: each test's renderer and the report's blocks (health, bench, stimulus,
coverage) write them while they lay out a section, so they are collected by laying the sections out without
plots. That is why this exporter sits with the HTML report, on the floor above the other exporters, and reads
the run's sections from the store it was loaded from."""

from __future__ import annotations

from pathlib import Path

from ..conformance import Verdict
from ..render.toolkit import Artifacts
from ..runresult.model import RunResult
from ..store import Store
from .core import render_sections


class CsvTables:
    """OUT_DIR/RUN_ID/tables/*.csv (the Exporter of export/exporter.py)."""

    def __init__(self, store: Store):
        self.store = store

    def write(self, run: RunResult, verdict: Verdict, out_dir: Path) -> list[Path]:
        art = Artifacts(out_dir / run.id, plots=False)
        render_sections(self.store, self.store.run(run.id), art, strict=True)
        return [p for p in art.written if p.suffix == ".csv"]
