"""CLI commands of the report stage, registered on the main group by `register`."""

from __future__ import annotations

import click

RESULTS_HELP = "Results directory holding ssdpts.db [default: ./results or $SSDPTS_RESULTS]."


def _store(results):
    from ..cli import _store as store_of

    return store_of(results)


def register(main) -> None:
    """Add the report-stage commands (report, compare, export) to the `ssdpts` group."""

    @main.command()
    @click.argument("run_id")
    @click.option("--out", "out_dir", default=None, type=click.Path(file_okay=False),
                  help="Output directory [default: RESULTS/reports/RUN_ID].")
    @click.option("--claimed", default=None, type=click.Path(dir_okay=False),
                  help="TOML file of vendor claims (MB/s decimal, IOPS, µs) to set against the results.")
    @click.option("--results", default=None, help=RESULTS_HELP)
    def report(run_id, out_dir, claimed, results):
        """Write the HTML report of RUN_ID with PNG/SVG plots and CSV tables (works offline)."""
        from . import write_report
        from .core import section_errors

        path = write_report(_store(results), run_id, out_dir, claimed=claimed)
        for e in section_errors(path):
            click.echo(f"ssdpts: warning: a report section failed to render (see {path})", err=True)
            break
        click.echo(str(path))

    @main.command()
    @click.argument("run_ids", nargs=-1, required=True)
    @click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Output directory.")
    @click.option("--results", default=None, help=RESULTS_HELP)
    def compare(run_ids, out_dir, results):
        """Overlay the tests shared by RUN_IDS (several drives or runs): plots per run, tables with % deltas."""
        from . import write_compare

        click.echo(str(write_compare(_store(results), list(run_ids), out_dir)))

    @main.command()
    @click.argument("run_id")
    @click.option("--format", "fmt", type=click.Choice(["csv", "json"]), required=True,
                  help="json: the documented results document (docs/results.md); csv: one file per report table.")
    @click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Output directory.")
    @click.option("--results", default=None, help=RESULTS_HELP)
    def export(run_id, fmt, out_dir, results):
        """Export RUN_ID's results as JSON or as CSV tables."""
        from . import export as do_export

        for p in do_export(_store(results), run_id, fmt, out_dir):
            click.echo(str(p))
