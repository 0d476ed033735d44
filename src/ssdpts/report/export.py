"""`ssdpts export`: the documented JSON results document, or every report table as CSV (no plots)."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import SsdptsError
from ..store import Store

FORMATS = ("json", "csv")


def export(store: Store, run_id: str, fmt: str, out_dir: str | Path) -> list[Path]:
    from ..results_doc import results_document
    from .core import render_sections
    from .toolkit import Artifacts

    if fmt not in FORMATS:
        raise SsdptsError(f"unknown export format {fmt!r}; use json or csv")
    run = store.run(run_id)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if fmt == "json":
        path = out / f"{run['id']}.json"
        path.write_text(json.dumps(results_document(store, run["id"]), indent=1, default=str))
        return [path]
    art = Artifacts(out / run["id"], plots=False)
    sections = render_sections(store, run, art, strict=True)
    del sections
    return [p for p in art.written if p.suffix == ".csv"]
