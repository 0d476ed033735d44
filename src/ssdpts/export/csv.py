"""`ssdpts export --format csv`: every table of the report as a CSV file (the same rows, no plots);
`--format tidy-csv`: the long table of every round and cell."""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path

from ..report.core import render_sections
from ..render.toolkit import Artifacts
from ..store import Store
from .tidy import FIELDS, TidyRecord


def export_csv(store: Store, run_id: str, out_dir: str | Path) -> list[Path]:
    run = store.run(run_id)
    art = Artifacts(Path(out_dir) / run["id"], plots=False)
    render_sections(store, run, art, strict=True)
    return [p for p in art.written if p.suffix == ".csv"]


def export_tidy_csv(records: list[TidyRecord], path: Path) -> Path:
    """The tidy table (export/tidy.py) as one CSV file with a header row; a missing serial is an empty field."""
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(FIELDS)
        writer.writerows(["" if v is None else v for v in dataclasses.astuple(r)] for r in records)
    return path
