"""What every command shares: where the results live and opening their database."""

from __future__ import annotations

import importlib
import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

import click

from ..errors import SsdptsError

if TYPE_CHECKING:
    from ..store import Store

RESULTS_HELP = ("Results directory holding ssdpts.db, logs and reports, or a shared PostgreSQL store "
                "postgresql://USER@HOST[:PORT]/DB (docs/shared-store.md) [default: ./results or $SSDPTS_RESULTS].")


RESULTS_META = "ssdpts.results_dir"   # where the CLI's last-resort handler writes a traceback


def results_dir(value: str | None, writing: bool = False) -> Path:
    """--results (or $SSDPTS_RESULTS, or ./results): refused at once when it names a file, and when `writing`
    (a run) when it could not be made or written. Nothing is created here. With a PostgreSQL store: the bench's
    own results directory beside it ($SSDPTS_LOCAL_RESULTS or ./results)."""
    from ..store.location import LOCAL_RESULTS_ENV, local_results_dir, results_location

    d = results_location(value)
    what = "--results" if value else "SSDPTS_RESULTS" if os.environ.get("SSDPTS_RESULTS") else "results directory"
    if not isinstance(d, Path):
        d, what = local_results_dir(), LOCAL_RESULTS_ENV if os.environ.get(LOCAL_RESULTS_ENV) else "results directory"
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
    """The results to read: a directory's SQLite, or a PostgreSQL store (read as one, store/pg.py)."""
    from ..store import Store
    from ..store.location import results_location

    location = results_location(results)
    if not isinstance(location, Path):
        from ..store.pg import PgStore

        return PgStore(location)
    d = results_dir(results)          # refuses a file
    if must_exist and not (d / "ssdpts.db").exists():
        raise SsdptsError(f"no results database in {d}/; run 'ssdpts run' first or pass --results DIR")
    return Store.in_dir(d)


@contextmanager
def run_results(results: str | None) -> Iterator[Path]:
    """The results directory a run writes (made if missing); with a PostgreSQL store, the bench's own one, whose
    runs a copier process copies to the store while they run and after (store/copier.py)."""
    from ..store.location import results_location

    location = results_location(results)
    local = results_dir(results, writing=True)
    if isinstance(location, Path):
        yield local
        return
    from ..store.copier import Copier

    copier = Copier.start(local / "ssdpts.db", location)
    try:
        yield local
    finally:
        copier.finish()


@dataclass(frozen=True)
class LazyCommand:
    """A command imported only when it runs or shows its own help. `summary` is its help's opening words,
    enough for the command listing at any width (tests/test_startup.py holds it to the command's help)."""
    module: str
    attribute: str
    summary: str

    def load(self) -> click.Command:
        return getattr(importlib.import_module(self.module), self.attribute)
