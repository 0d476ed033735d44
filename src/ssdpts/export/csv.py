"""`ssdpts export --format csv`: every table of the report as a CSV file (the same rows, no plots)."""

from __future__ import annotations

from pathlib import Path

from ..report.core import render_sections
from ..report.toolkit import Artifacts
from ..store import Store


def export_csv(store: Store, run_id: str, out_dir: str | Path) -> list[Path]:
    run = store.run(run_id)
    art = Artifacts(Path(out_dir) / run["id"], plots=False)
    render_sections(store, run, art, strict=True)
    return [p for p in art.written if p.suffix == ".csv"]
