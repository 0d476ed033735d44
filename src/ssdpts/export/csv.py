"""`ssdpts export --format tidy-csv`: the long table of every round and cell. (`--format csv`, every table of
the report, is the HTML report's own tables: report/tables.py.)"""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path

from .tidy import FIELDS, TidyRecord


def export_tidy_csv(records: list[TidyRecord], path: Path) -> Path:
    """The tidy table (export/tidy.py) as one CSV file with a header row; a missing serial is an empty field."""
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(FIELDS)
        writer.writerows(["" if v is None else v for v in dataclasses.astuple(r)] for r in records)
    return path
