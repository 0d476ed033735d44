"""What every command shares: where the results live and opening their database."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import SsdptsError
from ..store import Store, default_results_dir

RESULTS_HELP = "Results directory holding ssdpts.db, logs and reports [default: ./results or $SSDPTS_RESULTS]."


RESULTS_META = "ssdpts.results_dir"   # where the CLI's last-resort handler writes a traceback


def results_dir(value: str | None) -> Path:
    d = Path(value) if value else default_results_dir()
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta[RESULTS_META] = d
    return d


def open_store(results: str | None, must_exist: bool = True) -> Store:
    d = results_dir(results)
    if d.exists() and not d.is_dir():
        raise SsdptsError(f"--results {d} is a file; give the directory that holds ssdpts.db")
    if must_exist and not (d / "ssdpts.db").exists():
        raise SsdptsError(f"no results database in {d}/; run 'ssdpts run' first or pass --results DIR")
    return Store.in_dir(d)
