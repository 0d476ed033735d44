"""`ssdpts export --format csv`: every table of the report as a CSV file (the same rows, no plots).

The tables are the report's own: each test's renderer and the report's blocks (health, bench, stimulus,
coverage) write them while they lay out a section, so they are collected by laying the sections out without
plots. That is why this exporter sits with the HTML report, on the floor above the other exporters."""

from __future__ import annotations

from pathlib import Path

from ..render.toolkit import Artifacts
from ..store import Store
from .core import render_sections


def export_csv(store: Store, run_id: str, out_dir: str | Path) -> list[Path]:
    run = store.run(run_id)
    art = Artifacts(Path(out_dir) / run["id"], plots=False)
    render_sections(store, run, art, strict=True)
    return [p for p in art.written if p.suffix == ".csv"]
