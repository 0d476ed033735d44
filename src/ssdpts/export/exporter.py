"""One interface for every format of `ssdpts export` (as hyperfine's src/export/*): an exporter writes the
files of one run's typed result and its verdict into an output directory and returns their paths."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from ..conformance import Verdict
from ..runresult.model import RunResult


class Exporter(Protocol):
    def write(self, run: RunResult, verdict: Verdict, out_dir: Path) -> list[Path]:
        """Write this format's files of `run` under `out_dir` (made when there is something to write)."""
        ...


def out_file(out_dir: Path, name: str) -> Path:
    """OUT_DIR/NAME, the directory made when the export has something to write."""
    out_dir.mkdir(parents=True, exist_ok=True)
    return out_dir / name
