"""`ssdpts export --format tidy-csv`: the long table of every round and cell as one CSV file. (`--format csv`,
every table of the report, is the HTML report's own tables: report/tables.py.)"""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path

from ..conformance import Verdict
from ..runresult.model import RunResult
from .exporter import out_file
from .tidy import FIELDS, tidy_records


class TidyCsv:
    """The tidy table (export/tidy.py) with a header row; a missing serial is an empty field."""

    def write(self, run: RunResult, verdict: Verdict, out_dir: Path) -> list[Path]:
        records = tidy_records(run)
        path = out_file(out_dir, f"{run.id}.tidy.csv")
        with open(path, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(FIELDS)
            writer.writerows(["" if v is None else v for v in dataclasses.astuple(r)] for r in records)
        return [path]
