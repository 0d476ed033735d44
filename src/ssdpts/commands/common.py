"""What every command shares: where the results live and opening their database."""

from __future__ import annotations

from pathlib import Path

from ..errors import SsdptsError
from ..store import Store, default_results_dir

RESULTS_HELP = "Results directory holding ssdpts.db, logs and reports [default: ./results or $SSDPTS_RESULTS]."


def results_dir(value: str | None) -> Path:
    return Path(value) if value else default_results_dir()


def open_store(results: str | None, must_exist: bool = True) -> Store:
    d = results_dir(results)
    if d.exists() and not d.is_dir():
        raise SsdptsError(f"--results {d} is a file; give the directory that holds ssdpts.db")
    if must_exist and not (d / "ssdpts.db").exists():
        raise SsdptsError(f"no results database in {d}/; run 'ssdpts run' first or pass --results DIR")
    return Store.in_dir(d)
