"""`ssdpts report`, `compare`, `export`: outputs of stored runs (nothing is re-run)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..conformance import check
from ..export.csv import export_csv
from ..export.json import document
from ..export.model import load_run
from ..report.compare import write_compare
from ..report.core import section_errors, write_report
from .common import RESULTS_HELP, open_store


@click.command()
@click.argument("run_id")
@click.option("--out", "out_dir", default=None, type=click.Path(file_okay=False),
              help="Output directory [default: RESULTS/reports/RUN_ID].")
@click.option("--claimed", default=None, type=click.Path(dir_okay=False),
              help="TOML file of vendor claims (MB/s decimal, IOPS, µs) to set against the results.")
@click.option("--results", default=None, help=RESULTS_HELP)
def report(run_id, out_dir, claimed, results):
    """Write the HTML report of RUN_ID with PNG/SVG plots and CSV tables (works offline)."""
    path = write_report(open_store(results), run_id, out_dir, claimed=claimed)
    if section_errors(path):
        click.echo(f"ssdpts: warning: a report section failed to render (see {path})", err=True)
    click.echo(str(path))


@click.command()
@click.argument("run_ids", nargs=-1, required=True)
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Output directory.")
@click.option("--results", default=None, help=RESULTS_HELP)
def compare(run_ids, out_dir, results):
    """Overlay the tests shared by RUN_IDS (several drives or runs): plots per run, tables with % deltas."""
    click.echo(str(write_compare(open_store(results), list(run_ids), out_dir)))


@click.command()
@click.argument("run_id")
@click.option("--format", "fmt", type=click.Choice(["csv", "json"]), required=True,
              help="json: the documented results document (docs/results.md); csv: one file per report table.")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Output directory.")
@click.option("--results", default=None, help=RESULTS_HELP)
def export(run_id, fmt, out_dir, results):
    """Export RUN_ID's results as JSON or as CSV tables."""
    store = open_store(results)
    if fmt == "json":
        run = load_run(store, run_id)
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"{run.id}.json"
        path.write_text(json.dumps(document(run, check(run, store)), indent=1, default=str))
        paths = [path]
    else:
        paths = export_csv(store, run_id, out_dir)
    for p in paths:
        click.echo(str(p))
