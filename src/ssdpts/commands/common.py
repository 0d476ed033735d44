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


def metrics_options(command):
    """--metrics-port, --metrics-address, --metrics-textfile and --metrics-linger (docs/metrics.md), shared by
    the commands that run tests."""
    from ..units import parse_duration

    def linger(ctx, param, value):
        return parse_duration(value, "--metrics-linger") if value is not None else 0.0

    for option in reversed((
            click.option("--metrics-port", type=click.IntRange(1, 65535), default=None, metavar="PORT",
                         help="Serve live OpenMetrics of the run on http://ADDRESS:PORT/metrics (docs/metrics.md)."),
            click.option("--metrics-address", default="127.0.0.1", show_default=True, metavar="ADDRESS",
                         help="The address --metrics-port binds (0.0.0.0: every interface)."),
            click.option("--metrics-textfile", default=None, metavar="PATH.prom",
                         help="Write the live metrics to this file for node_exporter's textfile collector "
                              "(rewritten atomically, at most once a second)."),
            click.option("--metrics-linger", default=None, callback=linger, metavar="DURATION",
                         help="Keep serving the final metrics this long after the run ends, e.g. 30s (at least "
                              "one scrape interval, so Prometheus sees how the run ended) [default: 0]."))):
        command = option(command)
    return command


def live_metrics(port: int | None, address: str, textfile: str | None):
    """The run's live metrics, bound before anything runs (a port in use is one line, exit 2); None when not
    asked for."""
    if port is None and textfile is None:
        return None
    from ..livemetrics import LiveMetrics

    return LiveMetrics(port=port, address=address, textfile=Path(textfile).absolute() if textfile else None)
