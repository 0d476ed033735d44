"""`ssdpts report`, `compare`, `export`: outputs of stored runs (nothing is re-run)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..errors import SsdptsError
from ..inputs import output_dir
from .common import RESULTS_HELP, open_store

if TYPE_CHECKING:
    from ..export.exporter import Exporter

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
    from ..conformance import check
    from ..report.claimed import load_claims
    from ..report.core import default_out_dir, section_errors
    from ..report.html import HtmlReport
    from ..runresult.model import load_run

    if out_dir:
        output_dir(out_dir, "--out")
    claims = load_claims(claimed) if claimed else None    # a bad claims file: one line, nothing written
    rules = None
    if criteria_file:
        from ..criteria import load_criteria
        rules = load_criteria(criteria_file)          # a bad rules file: one line, nothing written
    store = open_store(results)
    if out_dir is None and store.read_only:
        raise SsdptsError(f"{store.path} can only be read here ({store.read_only_because}), and the report goes "
                          "beside it by default; pass --out DIR on writable storage")
    run = load_run(store, run_id)
    verdict = check(run, store)
    criteria = None if rules is None else criteria_verdict(run, verdict, rules)
    path = HtmlReport(store, claims=claims, criteria=criteria).write(
        run, verdict, Path(out_dir) if out_dir else default_out_dir(store, run.id))[0]
    if section_errors(path):
        click.echo(f"ssdpts: warning: a report section failed to render (see {path})", err=True)
    click.echo(str(path))


def criteria_verdict(run, verdict, rules):
    """The rules judged as `ssdpts check --criteria` judges them, in the record the headline page shows."""
    from ..criteria import judge
    from ..report.headline import CriteriaVerdict

    outcome = judge(run, rules, verdict)
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


@dataclass(frozen=True)
class ExportFormat:
    """One format of `ssdpts export`: its exporter class (export/exporter.py's `Exporter`), imported when asked for."""

    module: str          # under ssdpts
    exporter: str        # the class in `module`
    help: str
    reads_store: bool = False     # made with the store: it lays out the report's sections from it (html, csv)

    def make(self, store) -> Exporter:
        cls = getattr(importlib.import_module(f"ssdpts.{self.module}"), self.exporter)
        return cls(store) if self.reads_store else cls()


# Every format of `ssdpts export`, once: the --format choices, their help and their exporters.
EXPORT_FORMATS: dict[str, ExportFormat] = {
    "json": ExportFormat("export.json", "JsonDocument", "the documented results document (docs/results.md)"),
    "csv": ExportFormat("report.tables", "CsvTables", "one file per report table", reads_store=True),
    "tidy-csv": ExportFormat("export.csv", "TidyCsv", "one row per round, cell, metric with its unit"),
    "tidy-json": ExportFormat("export.json", "TidyJsonLines", "the tidy rows as JSON Lines"),
    "html": ExportFormat("report.html", "HtmlReport", "the HTML report, as 'ssdpts report --out'", reads_store=True),
    "text": ExportFormat("export.text", "TextSummary", "what 'ssdpts show' prints"),
}


@click.command()
@click.argument("run_id")
@click.option("--format", "fmt", type=click.Choice(list(EXPORT_FORMATS)), required=True,
              help="; ".join(f"{name}: {f.help}" for name, f in EXPORT_FORMATS.items()) + ".")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Output directory.")
@click.option("--results", default=None, help=RESULTS_HELP)
def export(run_id, fmt, out_dir, results):
    """Export RUN_ID's results as JSON, as CSV tables, or as one long (tidy) table."""
    from ..conformance import check
    from ..runresult.model import load_run

    output_dir(out_dir, "--out")
    store = open_store(results)
    exporter = EXPORT_FORMATS[fmt].make(store)
    run = load_run(store, run_id)
    for p in exporter.write(run, check(run, store), Path(out_dir)):
        click.echo(str(p))
