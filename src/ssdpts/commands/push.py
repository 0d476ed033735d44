"""`ssdpts push`: copy runs from this bench's results to a shared PostgreSQL store (docs/shared-store.md)."""

from __future__ import annotations

import click

from ..errors import SsdptsError
from .common import RESULTS_HELP, open_store


@click.command()
@click.argument("run_ids", nargs=-1, required=True)
@click.option("--to", "to", required=True, metavar="URL", envvar="SSDPTS_PUSH_TO",
              help="The PostgreSQL store: postgresql://USER@HOST[:PORT]/DB (a password is best kept in ~/.pgpass "
                   "or $PGPASSWORD; one in the URL is never stored or shown).")
@click.option("--results", default=None, help=RESULTS_HELP)
def push(run_ids, to, results):
    """Copy RUN_IDS from this bench's results to a PostgreSQL store: what it lacks, once (copying again, or
    from two benches at once, stores each round once). A run still running is copied as far as it got."""
    from ..store.location import is_url, pg_url
    from ..store.pg import PgDatabase

    if not is_url(to):
        raise SsdptsError(f"--to {to!r} is not a PostgreSQL URL; give postgresql://USER@HOST[:PORT]/DB")
    url = pg_url(to)
    local = open_store(results)
    if not local.keeps_files:
        raise SsdptsError("push copies from this bench's results directory: give --results DIR (or "
                          "$SSDPTS_LOCAL_RESULTS), not a PostgreSQL URL")
    ids = [local.run_id(r) for r in run_ids]        # an unknown id fails before anything is copied
    with PgDatabase(url) as db:
        db.set_up()
        for run_id in ids:
            n = db.push(local, run_id)
            click.echo(f"{run_id}: {n.copied} round(s) copied, {n.present} already in {url}"
                       + (f", {n.removed} the bench no longer has removed" if n.removed else ""))
