"""What every command shares: where the results live and opening their database."""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..errors import SsdptsError

if TYPE_CHECKING:
    from ..store import Store

RESULTS_HELP = "Results directory holding ssdpts.db, logs and reports [default: ./results or $SSDPTS_RESULTS]."


RESULTS_META = "ssdpts.results_dir"   # where the CLI's last-resort handler writes a traceback


def results_dir(value: str | None, writing: bool = False) -> Path:
    """--results (or $SSDPTS_RESULTS, or ./results): refused at once when it names a file, and when `writing`
    (a run) when it could not be made or written. Nothing is created here."""
    from ..store import default_results_dir     # here: the command line's wiring imports this module, not the store

    d = Path(value) if value else default_results_dir()
    what = "--results" if value else "SSDPTS_RESULTS" if os.environ.get("SSDPTS_RESULTS") else "results directory"
    if d.exists() and not d.is_dir():
        raise SsdptsError(f"{what} {d} is a file; give the directory that holds ssdpts.db (it is made if missing)")
    if writing:
        from ..inputs import output_dir

        output_dir(d, what)
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta[RESULTS_META] = d
    return d


def open_store(results: str | None, must_exist: bool = True) -> Store:
    from ..store import Store

    d = results_dir(results)          # refuses a file
    if must_exist and not (d / "ssdpts.db").exists():
        raise SsdptsError(f"no results database in {d}/; run 'ssdpts run' first or pass --results DIR")
    return Store.in_dir(d)


@dataclass(frozen=True)
class LazyCommand:
    """A command imported only when it runs or shows its own help. `summary` is its help's opening words,
    enough for the command listing at any width (tests/test_startup.py holds it to the command's help)."""
    module: str
    attribute: str
    summary: str

    def load(self) -> click.Command:
        return getattr(importlib.import_module(self.module), self.attribute)
