"""The results database's runs: `list`, `show`, `check` and `delete`."""

from __future__ import annotations

import json
import sys
import time

import click

from ..errors import SsdptsError
from ..store import RUN_STATUSES
from .common import RESULTS_HELP, open_store, results_dir


def _confirmed(question: str) -> bool:
    try:
        return click.confirm(question, err=True)
    except click.exceptions.Abort:     # no answer (end of input): no consent
        return False


@click.command()
@click.argument("run_ids", nargs=-1)
@click.option("--failed", is_flag=True, help="Every run whose status is failed.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.option("--results", default=None, help=RESULTS_HELP)
def delete(run_ids, failed, yes, results):
    """Remove RUN_IDS (and with --failed every failed run): their rows in the results database and their
    files under the results directory (log, report, simulated-drive checkpoints). A run still running
    is refused."""
    from ..runner.files import delete as delete_run, refuse_if_live
    from ..runstatus import settled

    if not run_ids and not failed:
        raise click.UsageError("name the runs to delete, or give --failed")
    store = open_store(results)
    runs = [settled(store, r) for r in run_ids]
    if failed:
        runs += [r for r in store.runs() if r["status"] == "failed"]
    chosen = list({r["id"]: r for r in runs}.values())
    for r in chosen:
        refuse_if_live(r, f"'ssdpts delete {r['id']}'")
    if not chosen:
        click.echo("no failed runs")
        return
    listing = ", ".join(f"{r['id']} ({r['status']})" for r in chosen)
    if not yes and not _confirmed(f"delete {len(chosen)} run(s): {listing}, with their files?"):
        raise SsdptsError("nothing deleted (answer y, or add --yes)", exit_code=1)
    for r in chosen:
        removed = delete_run(store, results_dir(results) if store.keeps_files else None, r["id"])
        click.echo(f"deleted {r['id']}" + (f" and {len(removed)} file(s)" if removed else ""))


@click.command("list")
@click.option("--results", default=None, help=RESULTS_HELP)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--status", type=click.Choice(RUN_STATUSES), default=None, help="Only runs with this status.")
@click.option("--model", default=None, help="Only runs on a drive whose model contains this text (any case).")
@click.option("--serial", default=None, help="Only runs on the drive with this serial number.")
@click.option("--profile", default=None, help="Only runs of the profile with this name.")
@click.option("--since", type=click.DateTime(["%Y-%m-%d", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M"]), default=None,
              help="Only runs started at or after this local date (YYYY-MM-DD [HH:MM]).")
def list_runs(results, as_json, status, model, serial, profile, since):
    """List the runs in the results database, optionally filtered."""
    from ..runstatus import settled
    from ..store import RunFilter

    store = open_store(results)
    for r in store.runs(RunFilter(status="running")):   # a dead run's status is settled before it is filtered
        settled(store, r["id"])
    runs = store.runs(RunFilter(status, model, serial, profile, since.timestamp() if since else None))
    if as_json:
        fields = ("id", "status", "target_spec", "profile_name", "tests", "created")
        click.echo(json.dumps([{**{k: r[k] for k in fields}, "label": r["options"].label,
                                "model": r["target"].model, "serial": r["target"].serial} for r in runs], indent=2))
        return
    if not runs:
        filtered = any(v is not None for v in (status, model, serial, profile, since))
        click.echo("no runs match" if filtered else "no runs yet")
        return
    click.echo(f"{'RUN':22} {'STATUS':11} {'STARTED':16} {'PROFILE':15} {'TESTS':28} TARGET")
    for r in runs:
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(r["created"]))
        model = r["target"].model or ""
        click.echo(f"{r['id']:22} {r['status']:11} {started:16} {r['profile_name']:15} "
                   f"{','.join(r['tests']):28} {r['target_spec']}{' (' + model + ')' if model else ''}"
                   + (f" “{r['options'].label}”" if r["options"].label else ""))


@click.command()
@click.argument("run_id")
@click.option("--results", default=None, help=RESULTS_HELP)
@click.option("--json", "as_json", is_flag=True, help="The documented results document (docs/results.md).")
def show(run_id, results, as_json):
    """Show a run's results (steady state, tables, units)."""
    from ..conformance import check
    from ..runresult.model import load_run
    from ..runstatus import settled

    store = open_store(results)
    run = load_run(store, settled(store, run_id)["id"])
    verdict = check(run, store)
    if as_json:
        from ..export.json import document     # each output imports its own exporter only

        click.echo(json.dumps(document(run, verdict), indent=2))
    else:
        from ..export.text import render_text

        click.echo(render_text(run, verdict))


@click.command("check")
@click.argument("run_id")
@click.option("--results", default=None, help=RESULTS_HELP)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable verdict.")
@click.option("--criteria", "criteria_file", default=None, metavar="RULES.toml",
              help="Judge the run against acceptance rules instead (docs/criteria.md); exit 0 when all hold.")
@click.option("--junit", "junit_file", default=None, metavar="FILE", help="With --criteria: also write JUnit XML.")
def check_run(run_id, results, as_json, criteria_file, junit_file):
    """The run's conformance verdict: every deviation from the spec its profile claims (non-SNIA purge,
    write-cache mismatch, steady state not reached, device idle over 10 ms, percentiles from too few I/Os,
    shortened durations, implausible cells, figures above the interface, host-limited cells), each with its
    evidence and source. Exit 0 when conformant, 1 when not.
    With --criteria: each acceptance rule with its evidence; exit 0 when all hold, 1 when any fails."""
    from ..inputs import output_file

    if junit_file and not criteria_file:
        raise click.UsageError("--junit needs --criteria RULES.toml (the rules the JUnit file reports)")
    if junit_file:
        output_file(junit_file, "--junit")
    if criteria_file:
        from .criteria import check_criteria
        sys.exit(check_criteria(lambda: open_store(results), run_id, criteria_file, as_json, junit_file))
    from ..conformance import check
    from ..runresult.model import load_run

    store = open_store(results)
    verdict = check(load_run(store, run_id), store)
    if as_json:
        click.echo(json.dumps({"run": verdict.run_id, "conformant": verdict.conformant, "spec": verdict.spec,
                               "deviations": [{"test": f.test, **f.deviation.to_dict()} for f in verdict.findings],
                               "notes": verdict.notes}, indent=2))
    else:
        click.echo("\n".join(verdict.lines()))
    sys.exit(0 if verdict.conformant else 1)
