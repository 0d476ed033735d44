"""`ssdpts report`, `compare`, `export`: outputs of stored runs (nothing is re-run)."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import SsdptsError
from ..inputs import output_dir
from .common import RESULTS_HELP, open_store

# Each command imports the output stage it uses when it runs: `ssdpts report --help` starts without it.


@click.command()
@click.argument("run_id")
@click.option("--out", "out_dir", default=None, type=click.Path(file_okay=False),
              help="Output directory [default: RESULTS/reports/RUN_ID].")
@click.option("--claimed", default=None, type=click.Path(dir_okay=False),
              help="TOML file of vendor claims (MB/s decimal, IOPS, µs) to set against the results.")
@click.option("--criteria", "criteria_file", default=None, type=click.Path(dir_okay=False), metavar="RULES.toml",
              help="The lab's acceptance rules (docs/criteria.md): their verdict joins the headline page.")
@click.option("--results", default=None, help=RESULTS_HELP)
def report(run_id, out_dir, claimed, criteria_file, results):
    """Write the HTML report of RUN_ID with PNG/SVG plots and CSV tables (works offline)."""
    from ..report.core import section_errors, write_report

    if out_dir:
        output_dir(out_dir, "--out")
    rules = None
    if criteria_file:
        from ..criteria import load_criteria
        rules = load_criteria(criteria_file)          # a bad rules file: one line, nothing written
    store = open_store(results)
    if out_dir is None and store.read_only:
        raise SsdptsError(f"{store.path} can only be read here ({store.read_only_because}), and the report goes "
                          "beside it by default; pass --out DIR on writable storage")
    path = write_report(store, run_id, out_dir, claimed=claimed,
                        criteria=None if rules is None else criteria_verdict(store, run_id, rules))
    if section_errors(path):
        click.echo(f"ssdpts: warning: a report section failed to render (see {path})", err=True)
    click.echo(str(path))


def criteria_verdict(store, run_id: str, rules):
    """The rules judged as `ssdpts check --criteria` judges them, in the record the headline page shows."""
    from ..conformance import check
    from ..criteria import judge
    from ..runresult.model import load_run
    from ..report.headline import CriteriaVerdict

    run = load_run(store, run_id)
    outcome = judge(run, rules, check(run, store))
    return CriteriaVerdict(rules.name, outcome.passed, len(outcome.judgements) - len(outcome.failures),
                           len(outcome.judgements), [f"{j.rule.name}: {j.evidence}" for j in outcome.failures],
                           outcome.lines())


@click.command()
@click.argument("run_ids", nargs=-1, required=True)
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Output directory.")
@click.option("--spec-sheet", "spec_sheets", multiple=True, type=click.Path(dir_okay=False),
              help="Claims file (the --claimed format) of a drive known from its spec sheet: joins the overlays as a "
                   "dashed series and the tables as a column. Repeatable.")
@click.option("--match-mix", multiple=True, metavar="KEPT=OTHER",
              help="Set cells at OTHER %% reads beside cells at KEPT %% reads, e.g. 65=70 (the table says so). "
                   "Repeatable.")
@click.option("--label", "labels", multiple=True, metavar="RUN=NAME",
              help="Name RUN's series in the legends and tables (e.g. 1a2b=partition); overrides the run's own "
                   "'run --label'. Repeatable.")
@click.option("--results", default=None, help=RESULTS_HELP)
def compare(run_ids, out_dir, spec_sheets, match_mix, labels, results):
    """Overlay the tests shared by RUN_IDS (several drives or runs): plots per run, tables with % deltas."""
    from ..report.compare import load_options, write_compare

    output_dir(out_dir, "--out")
    options = load_options(spec_sheets, match_mix)     # a bad claims file or pair: one line, nothing written
    click.echo(str(write_compare(open_store(results), list(run_ids), out_dir, options=options, labels=labels)))


@click.command()
@click.argument("run_id")
@click.option("--format", "fmt", type=click.Choice(["csv", "json", "tidy-csv", "tidy-json"]), required=True,
              help="json: the documented results document (docs/results.md); csv: one file per report table; "
                   "tidy-csv / tidy-json (JSON Lines): one row per round, cell, metric with its unit.")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Output directory.")
@click.option("--results", default=None, help=RESULTS_HELP)
def export(run_id, fmt, out_dir, results):
    """Export RUN_ID's results as JSON, as CSV tables, or as one long (tidy) table."""
    from ..conformance import check
    from ..export.csv import TidyCsv
    from ..export.exporter import Exporter
    from ..export.json import JsonDocument, TidyJsonLines
    from ..report.tables import CsvTables
    from ..runresult.model import load_run

    output_dir(out_dir, "--out")
    store = open_store(results)
    exporters: dict[str, Exporter] = {"json": JsonDocument(), "tidy-csv": TidyCsv(), "tidy-json": TidyJsonLines(),
                                      "csv": CsvTables(store)}
    run = load_run(store, run_id)
    for p in exporters[fmt].write(run, check(run, store), Path(out_dir)):
        click.echo(str(p))

