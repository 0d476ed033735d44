"""`ssdpts site`: a static results site (docs/site.md)."""

from __future__ import annotations

from pathlib import Path

import click

from .common import RESULTS_HELP, open_store


@click.command()
@click.option("--results", default=None, help=RESULTS_HELP)
@click.option("--out", "out_dir", required=True, metavar="DIR",
              help="The site's folder: new, empty, or a site 'ssdpts site' wrote before (replaced as a whole).")
@click.option("--compare", "compare_sets", multiple=True, metavar="RUN,RUN[,...]",
              help="Also pre-generate the comparison of these runs (two to eight; repeatable). Pairs of runs of "
                   "one drive model are always compared.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the index page's path.")
def site(results, out_dir, compare_sets, quiet):
    """Write a static results site: every drive and run, filterable; each run's report; comparisons."""
    from ..report.site import check_out, write_site

    out = Path(out_dir)
    check_out(out)                 # a non-empty foreign or read-only folder: one line, before anything is read
    asked = [[i.strip() for i in s.split(",") if i.strip()] for s in compare_sets]
    store = open_store(results)
    index = write_site(store, out, asked, log=(lambda line: None) if quiet else
                       (lambda line: click.echo(line, err=True)))
    click.echo(str(index))
