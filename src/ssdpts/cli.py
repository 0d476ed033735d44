"""The `ssdpts` command line."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import click

# Commands import what they use inside their bodies, and the commands of other modules are imported only
# when they run or show their own help: `ssdpts --help`, list, show and check start without the engines,
# the test registry and the report (bench/startup.py measures it).
from . import __version__, interrupts
from .commands.common import RESULTS_HELP, RESULTS_META, open_store, results_dir
from .errors import SsdptsError
from .inputs import FINITE
from .store import RUN_STATUSES
from .settings import STEADY_RULES, SteadySettings
from .targets.purge import METHODS as PURGE_METHODS

STEADY = SteadySettings()   # the steady-state command's defaults are the run's (declared once)

STRICT_HELP = ("Exit 1 when a test of the run is not conformant (steady state not reached, deviations: the "
               "verdict of 'ssdpts check'). Without it a completed run exits 0 whatever its verdict.")
EX_SOFTWARE = 70        # sysexits.h: an internal software error
INTERRUPTED = 130       # what a shell reports for Ctrl-C; SIGTERM and SIGHUP exit with it too
DEBUG_ENV = "SSDPTS_DEBUG"


def _crash(e: Exception, results: Path | None) -> None:
    """Last resort: an unexpected exception is one line plus the file holding its traceback, exit 70.
    The traceback goes to RESULTS/logs/ when that directory exists (never creating it), else a temp file."""
    if os.environ.get(DEBUG_ENV):
        raise e
    text = "".join(traceback.format_exception(e))
    try:
        if results is not None and results.is_dir():
            (results / "logs").mkdir(exist_ok=True)
            fd, path = tempfile.mkstemp(prefix=f"error-{time.strftime('%Y%m%d-%H%M%S')}-", suffix=".log",
                                        dir=results / "logs")
        else:
            fd, path = tempfile.mkstemp(prefix="ssdpts-error-", suffix=".log")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        where = f"traceback in {path}"
    except OSError as log_error:
        where = f"the traceback could not be saved: {log_error}"
    message = " ".join(str(e).split()) or "(no message)"
    click.echo(f"ssdpts: internal error: {type(e).__name__}: {message} ({where}; please report it; "
               f"{DEBUG_ENV}=1 shows it here)", err=True)
    sys.exit(EX_SOFTWARE)


@dataclass(frozen=True)
class LazyCommand:
    """A command imported only when it runs or shows its own help. `summary` is its help's opening words,
    enough for the command listing at any width (tests/test_startup.py holds it to the command's help)."""
    module: str
    attribute: str
    summary: str

    def load(self) -> click.Command:
        return getattr(importlib.import_module(self.module), self.attribute)


LAZY_COMMANDS = {
    "analyze": LazyCommand("ssdpts.analyze", "analyze",
                           "Offline analyses of saved data (fio logs, SMART snapshots); nothing is run on a device."),
    "capture": LazyCommand("ssdpts.commands.capture", "capture",
                           "Record DEVICE's block-layer I/O and reduce it to a workload file: IO streams (size, "
                           "read/write,"),
    "compare": LazyCommand("ssdpts.commands.report", "compare",
                           "Overlay the tests shared by RUN_IDS (several drives or runs): plots per run, tables "
                           "with %"),
    "doctor": LazyCommand("ssdpts.commands.doctor", "doctor",
                          "Check the bench before measuring: fio, smartctl/nvme-cli, privileges, CPU governor and "
                          "boost,"),
    "endurance": LazyCommand("ssdpts.commands.endurance", "endurance",
                             "Write to TARGET for a long time and watch it wear: wear per TB and per day, projected "
                             "days"),
    "export": LazyCommand("ssdpts.commands.report", "export",
                          "Export RUN_ID's results as JSON, as CSV tables, or as one long (tidy) table."),
    "format": LazyCommand("ssdpts.commands.format", "format_command",
                          "Format an NVMe namespace into another LBA format with user-data erase (nvme format "
                          "--lbaf=N"),
    "plan": LazyCommand("ssdpts.commands.plan", "plan",
                        "Dry run: what 'ssdpts run' would do on TARGET — purge method, preconditioning bytes, rounds"),
    "report": LazyCommand("ssdpts.commands.report", "report",
                          "Write the HTML report of RUN_ID with PNG/SVG plots and CSV tables (works offline)."),
}


class _Group(click.Group):
    def list_commands(self, ctx):
        return sorted({*self.commands, *LAZY_COMMANDS})

    def get_command(self, ctx, name):
        if name not in self.commands and name in LAZY_COMMANDS:
            self.add_command(LAZY_COMMANDS[name].load(), name)
        return self.commands.get(name)

    def format_commands(self, ctx, formatter):
        """The listing shows a lazy command's declared summary: it imports no command's module."""
        listed = {name: self.commands.get(name) or click.Command(name, help=LAZY_COMMANDS[name].summary)
                  for name in self.list_commands(ctx)}
        click.Group(commands=listed).format_commands(ctx, formatter)

    def main(self, *args, **kwargs):
        """Bad command-line input is one line naming the problem and where the help is, exit 2."""
        interrupts.install()     # SIGTERM and SIGHUP act as Ctrl-C
        try:
            return super().main(*args, standalone_mode=False, **kwargs)
        except click.exceptions.NoArgsIsHelpError as e:
            click.echo(e.ctx.get_help() if e.ctx else str(e))
            sys.exit(0)
        except click.UsageError as e:
            names, c = [], e.ctx
            while c is not None and c.parent is not None:
                names.insert(0, c.info_name)
                c = c.parent
            where = " ".join(["ssdpts", *names])
            # one line: click lists a choice's values one per line
            click.echo(f"ssdpts: error: {' '.join(e.format_message().split())} (see '{where} --help')", err=True)
            sys.exit(2)
        except click.ClickException as e:
            click.echo(f"ssdpts: error: {' '.join(e.format_message().split())}", err=True)
            sys.exit(e.exit_code)
        except click.exceptions.Abort:
            interrupts.acknowledge()
            click.echo("ssdpts: interrupted", err=True)
            sys.exit(INTERRUPTED)
        except click.exceptions.Exit as e:
            sys.exit(e.exit_code)
        except SsdptsError as e:       # raised while click parsed (a parameter type's check)
            click.echo(f"ssdpts: error: {e}", err=True)
            sys.exit(e.exit_code)
        except Exception as e:
            _crash(e, None)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except SsdptsError as e:
            click.echo(f"ssdpts: error: {e}", err=True)
            sys.exit(e.exit_code)
        except KeyboardInterrupt:
            interrupts.acknowledge()
            click.echo("ssdpts: interrupted", err=True)
            sys.exit(INTERRUPTED)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except Exception as e:
            _crash(e, ctx.meta.get(RESULTS_META))


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="ssdpts")
def main():
    """SSD performance tests the SNIA PTS way: purge, precondition, rounds until steady state, report.

    \b
    Quick start:
      ssdpts run                                   # quick suite on the embedded default target
      ssdpts run /dev/nvme0n1 --destroy-data       # PTS-E on a real drive (destroys its data!)
      ssdpts run ./scratch.img --size 8G --tests iops,latency
      ssdpts list; ssdpts show RUN_ID; ssdpts resume RUN_ID

    Units: IOPS are read + write I/Os per second; bandwidth is MiB/s (2^20 bytes/s) unless a column
    says MB/s (10^6); latency is total latency (submission to completion) in µs.

    \b
    Exit codes:
      0    done (a run that completed, conformant or not: its verdict is printed; see --strict)
      1    run/resume --strict: a test is not conformant ('ssdpts check RUN_ID' lists why); check: not conformant
           run/resume/check: a drive failed I/O: the run is drive-failed, its evidence in 'ssdpts show RUN_ID'
      2    bad input: one line naming the problem and the fix, nothing created or changed
      70   internal error (the traceback's file is named)
      74   the results file system failed a write (full, read-only): the run is interrupted, resumable
      75   the results database is locked by another program (named)
      130  interrupted (Ctrl-C, SIGTERM, SIGHUP): 'ssdpts resume RUN_ID' continues the run
    """


@main.command()
@click.argument("targets", nargs=-1)
@click.option("--parallel/--sequential", default=True, show_default=True,
              help="With several targets: test them all at once in lock-step (one fio process, results per "
                   "target and summed), or one run after another.")
@click.option("--host", "hosts", multiple=True, metavar="HOST[:PORT]",
              help="Run on a remote 'fio --server' (repeatable); TARGETS are device paths on every host; "
                   "--size gives their size. See docs/scale.md for the secure (SSH tunnel) set-up.")
@click.option("--hosts", "hosts_file", default=None, metavar="FILE",
              help="hosts.toml: [[host]] tables with address, port, targets, size.")
@click.option("--profile", "profile", default=None,
              help="Shipped profile (quick, pts-enterprise, pts-client, pts-e11, review, review-sata, review-dc, "
                   "review-consumer, review-endurance) or a .toml "
                   "file. [default: pts-enterprise; quick for the embedded target]")
@click.option("--tests", default=None, help="Comma-separated tests to run (see 'ssdpts tests') "
                                           "[default: the profile's list, else iops,throughput,latency].")
@click.option("--size", default=None, help="Size of a file target, created if missing (e.g. 8G).")
@click.option("--destroy-data", is_flag=True, help="Consent to overwrite the whole target device.")
@click.option("--purge", "purge_method", default="auto", show_default=True,
              type=click.Choice(PURGE_METHODS),
              help="How to return the device to fresh-out-of-box before each test; 'auto' picks the strongest "
                   "supported, falling back to TRIM (recorded as not a SNIA purge).")
@click.option("--seed", type=click.IntRange(0, 2**32 - 1), default=None,
              help="Seed of the random LBA streams (fio randseed): the same seed repeats the same I/O pattern. "
                   "[default: the profile's seed, else one drawn and stored with the run]")
@click.option("--set-write-cache", is_flag=True,
              help="Consent to set the drive's volatile write cache as the profile's spec requires (PTS-E: "
                   "disabled, PTS-C: enabled) and restore it at the end; without it a mismatch is a recorded "
                   "deviation.")
@click.option("--ignore-doctor", "ignore_doctor", default=None, metavar="CHECK[,CHECK]",
              help="Run although these bench checks fail ('all': every one); the checks still run and are "
                   "recorded with the run. See 'ssdpts doctor TARGET'.")
@click.option("--results", default=None, help=RESULTS_HELP)
@click.option("--quiet", "-q", is_flag=True, help="No live progress; the run log is still written.")
@click.option("--strict", is_flag=True, help=STRICT_HELP)
@click.option("--note", "notes", multiple=True, metavar="TEXT",
              help="A set-up fact kept with the run and shown in its report (adapter, cooling); repeatable.")
@click.option("--trace-stimulus", is_flag=True,
              help="Read the device's block completions (tracefs, root) while each cell runs and store the LBAs "
                   "it touched (docs/coverage.md); a local block device only. Kept for 'resume'.")
def run(targets, parallel, hosts, hosts_file, profile, tests, size, destroy_data, purge_method, seed, set_write_cache,
        ignore_doctor, results, quiet, strict, notes, trace_stimulus):
    """Run the test suite on TARGETS: block devices, files, or sim:PRESET.

    Writing to a block device requires --destroy-data; mounted, swap, RAID/LVM member or otherwise
    busy devices are always refused. The bench checks of 'ssdpts doctor' run first and are recorded with
    the run; a failed one refuses the run (--ignore-doctor CHECK runs past it). Every round is committed to the results database as it ends;
    an interrupted run continues with 'ssdpts resume RUN_ID'. Several targets run in parallel
    (lock-step, one fio process; IOPS and MiB/s summed, latency kept per target) or --sequential.
    """
    from . import runner
    from .doctor import parse_ignored
    from .pts import registry
    from .units import target_size

    results = results_dir(results, writing=True)
    size_bytes = target_size(size)
    ignored = parse_ignored(ignore_doctor)
    notes = runner.checked_notes(notes)
    targets = list(targets)
    if hosts or hosts_file:
        targets = _remote_specs(targets, hosts, hosts_file, size_bytes)
    if not targets:
        targets = ["sim:client"]     # the embedded simulated SSD: it belongs to ssdpts
        profile = profile or "quick"
        destroy_data = True
    names = registry.from_option(tests)   # an unknown, repeated or empty name fails before anything is created
    groups = [targets] if parallel else [[t] for t in targets]
    run_ids = []
    for group in groups:
        run_ids.append(runner.start(group, results_dir=results, profile_name=profile or "pts-enterprise",
                                    tests=names, size=size_bytes, destroy_data=destroy_data,
                                    purge_method=purge_method, quiet=quiet, seed=seed,
                                    set_write_cache=set_write_cache, ignore_doctor=ignored, notes=notes,
                                    trace_stimulus=trace_stimulus))
        click.echo(run_ids[-1])
    if strict:
        exit_if_not_conformant(results, run_ids)


def exit_if_not_conformant(results: str | None, run_ids: list[str]) -> None:
    """--strict: exit 1 when a run is not conformant (its run id is still the last line on stdout)."""
    from .conformance import check
    from .export.model import load_run

    store = open_store(results)
    failing = [r for r in run_ids if not check(load_run(store, r), store).conformant]
    if failing:
        click.echo(f"ssdpts: not conformant: {', '.join(failing)} ('ssdpts check RUN_ID' lists why); "
                   "exit 1 (--strict)", err=True)
        sys.exit(1)


def _remote_specs(paths: list[str], hosts: tuple[str, ...], hosts_file: str | None, size: int | None) -> list[str]:
    from .targets.remote import from_hosts_file, remote_target, split_host
    from .targets.resolve import remote_spec

    remote = from_hosts_file(hosts_file, size) if hosts_file else []
    if hosts and not paths:
        raise SsdptsError("--host needs the target device path(s) on those hosts, e.g. --host h1 /dev/nvme0n1")
    for h in hosts:
        host, port = split_host(h)
        remote += [remote_target(host, port, p, size) for p in paths]
    return [remote_spec(t) for t in remote]


@main.command()
@click.argument("run_id")
@click.option("--results", default=None, help=RESULTS_HELP)
@click.option("--quiet", "-q", is_flag=True, help="No live progress.")
@click.option("--strict", is_flag=True, help=STRICT_HELP)
def resume(run_id, results, quiet, strict):
    """Continue an interrupted or failed run from its last committed round."""
    from . import runner

    open_store(results).close()
    run_id = runner.resume(run_id, results_dir=results_dir(results, writing=True), quiet=quiet)
    click.echo(run_id)
    if strict:
        exit_if_not_conformant(results, [run_id])


def _confirmed(question: str) -> bool:
    try:
        return click.confirm(question, err=True)
    except click.exceptions.Abort:     # no answer (end of input): no consent
        return False


@main.command()
@click.argument("run_ids", nargs=-1)
@click.option("--failed", is_flag=True, help="Every run whose status is failed.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.option("--results", default=None, help=RESULTS_HELP)
def delete(run_ids, failed, yes, results):
    """Remove RUN_IDS (and with --failed every failed run): their rows in the results database and their
    files under the results directory (log, report, simulated-drive checkpoints). A run still running
    is refused."""
    from . import runner

    if not run_ids and not failed:
        raise click.UsageError("name the runs to delete, or give --failed")
    store = open_store(results)
    runs = [runner.settled(store, r) for r in run_ids]
    if failed:
        runs += [r for r in store.runs() if r["status"] == "failed"]
    chosen = list({r["id"]: r for r in runs}.values())
    for r in chosen:
        runner.refuse_if_live(r, f"'ssdpts delete {r['id']}'")
    if not chosen:
        click.echo("no failed runs")
        return
    listing = ", ".join(f"{r['id']} ({r['status']})" for r in chosen)
    if not yes and not _confirmed(f"delete {len(chosen)} run(s): {listing}, with their files?"):
        raise SsdptsError("nothing deleted (answer y, or add --yes)", exit_code=1)
    for r in chosen:
        removed = runner.delete(store, results_dir(results), r["id"])
        click.echo(f"deleted {r['id']}" + (f" and {len(removed)} file(s)" if removed else ""))


@main.command("list")
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
    from .runstatus import settled
    from .store import RunFilter

    store = open_store(results)
    for r in store.runs(RunFilter(status="running")):   # a dead run's status is settled before it is filtered
        settled(store, r["id"])
    runs = store.runs(RunFilter(status, model, serial, profile, since.timestamp() if since else None))
    if as_json:
        fields = ("id", "status", "target_spec", "profile_name", "tests", "created")
        click.echo(json.dumps([{**{k: r[k] for k in fields}, "model": r["target"].get("info", {}).get("model"),
                                "serial": r["target"].get("info", {}).get("serial")} for r in runs], indent=2))
        return
    if not runs:
        filtered = any(v is not None for v in (status, model, serial, profile, since))
        click.echo("no runs match" if filtered else "no runs yet")
        return
    click.echo(f"{'RUN':22} {'STATUS':11} {'STARTED':16} {'PROFILE':15} {'TESTS':28} TARGET")
    for r in runs:
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(r["created"]))
        model = r["target"].get("info", {}).get("model") or ""
        click.echo(f"{r['id']:22} {r['status']:11} {started:16} {r['profile_name']:15} "
                   f"{','.join(r['tests']):28} {r['target_spec']}{' (' + model + ')' if model else ''}")


@main.command()
@click.argument("run_id")
@click.option("--results", default=None, help=RESULTS_HELP)
@click.option("--json", "as_json", is_flag=True, help="The documented results document (docs/results.md).")
def show(run_id, results, as_json):
    """Show a run's results (steady state, tables, units)."""
    from .conformance import check
    from .export.json import document
    from .export.model import load_run
    from .export.text import render_text
    from .runstatus import settled

    store = open_store(results)
    run = load_run(store, settled(store, run_id)["id"])
    verdict = check(run, store)
    click.echo(json.dumps(document(run, verdict), indent=2) if as_json else render_text(run, verdict))


@main.command("check")
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
    from .inputs import output_file

    if junit_file and not criteria_file:
        raise click.UsageError("--junit needs --criteria RULES.toml (the rules the JUnit file reports)")
    if junit_file:
        output_file(junit_file, "--junit")
    if criteria_file:
        from .commands.criteria import check_criteria
        sys.exit(check_criteria(lambda: open_store(results), run_id, criteria_file, as_json, junit_file))
    from .conformance import check
    from .export.model import load_run

    store = open_store(results)
    verdict = check(load_run(store, run_id), store)
    if as_json:
        click.echo(json.dumps({"run": verdict.run_id, "conformant": verdict.conformant, "spec": verdict.spec,
                               "deviations": [{"test": f.test, **f.deviation.to_dict()} for f in verdict.findings],
                               "notes": verdict.notes}, indent=2))
    else:
        click.echo("\n".join(verdict.lines()))
    sys.exit(0 if verdict.conformant else 1)


@main.command()
@click.argument("target")
@click.option("--profile", "profile", default="pts-enterprise", show_default=True,
              help="Whether TARGET is large enough is judged for this profile's tests.")
@click.option("--results", default=None, help=RESULTS_HELP)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def info(target, profile, results, as_json):
    """What ssdpts knows about TARGET before touching it (read-only)."""
    from .targets import open_target
    from .targets.facts import DeviceFacts
    from .targets.purge import supported_methods

    t = open_target(target)
    doc = t.to_dict()
    doc.pop("drive", None)
    if t.kind == "block":
        doc["purge_methods"] = supported_methods(t)
    if t.kind in ("block", "file"):
        doc["safe_to_test"] = safe_to_test(t, profile, results_dir(results))
    if as_json:
        click.echo(json.dumps(doc, indent=2, default=str))
        return
    click.echo(f"target      {t.path} ({t.kind}{f', tested through {t.passthrough}' if t.passthrough else ''})")
    click.echo(f"capacity    {t.size_bytes} bytes ({t.size_bytes / 1e9:.1f} GB, {t.size_bytes / 2**30:.2f} GiB)")
    click.echo(f"blocks      logical {t.logical_block_size} B, physical {t.physical_block_size} B")
    for k, v in t.info.items():
        if v not in (None, "", {}) and not isinstance(v, dict):
            click.echo(f"{k:11} {v}")
    facts = DeviceFacts.from_dict(t.info.get("facts"))
    for k, v in facts.rows() if facts else []:
        click.echo(f"{k.lower():11} {v}")
    if "purge_methods" in doc:
        click.echo(f"purge       {', '.join(doc['purge_methods']) or 'none supported (results start from current state)'}")
    if "safe_to_test" in doc:
        click.echo(f"safe        {doc['safe_to_test']}")


def safe_to_test(target, profile_name: str, results: Path) -> str:
    """'yes, ...' or 'no: ' and the refusal a run would give (read-only, too small, busy, ...)."""
    from .profiles import load_profile, profile_tests
    from .runner import check_room_for
    from .targets.safety import check_target

    try:
        check_target(target, destroy_data=True, results_dir=results)
        prof = load_profile(profile_name)
        check_room_for(target, prof, profile_tests(prof))
    except SsdptsError as e:
        return f"no: {e}"
    return "yes, with --destroy-data" if target.kind == "block" else "yes"


@main.command("steady-state")
@click.argument("values", nargs=-1, required=True)
@click.option("--window", default=STEADY.window, show_default=True, help="Rounds in the measurement window.")
@click.option("--max-range", type=FINITE, default=STEADY.max_range * 100, show_default=True,
              help="Allowed data excursion, % of the window average.")
@click.option("--max-slope", type=FINITE, default=STEADY.max_slope * 100, show_default=True,
              help="Allowed slope excursion, % of the window average.")
@click.option("--rule", type=click.Choice(STEADY_RULES), default=STEADY.rule, show_default=True,
              help="snia: PTS 2.0.2 §2.1.24; fit-band: the reviewers' fitted line within ±max-slope of the mean.")
@click.option("--strict", is_flag=True, default=not STEADY.inclusive,
              help="Require < instead of <= at the bounds.")
@click.option("--json", "as_json", is_flag=True)
def steady_state(values, window, max_range, max_slope, rule, strict, as_json):
    """Judge steady state for per-round VALUES (last WINDOW of them), the SNIA way.

    Example: ssdpts steady-state 11746 11690 11802 11650 11720
    """
    from .inputs import finite
    from .steady import evaluate

    numbers = []
    for v in values:
        try:
            numbers.append(finite(float(v), "each round's value"))
        except ValueError:
            raise SsdptsError(f"{v!r} is not a number; give one value per round, e.g. 11746 11690 11802") from None
    if window < 2:
        raise SsdptsError("--window must be at least 2")
    for name, pct in (("--max-range", max_range), ("--max-slope", max_slope)):
        if not 0 < pct < 100:
            raise SsdptsError(f"{name} is a percentage between 0 and 100, not {pct:g}")
    s = evaluate(numbers, window, max_range / 100, max_slope / 100, rule=rule, inclusive=not strict)
    if as_json:
        click.echo(json.dumps(s.to_dict(), indent=2))
    else:
        click.echo(f"steady state: {'REACHED' if s.reached else 'NOT REACHED'}" + (f" ({s.reason})" if s.reason else ""))
        if s.average is not None:
            click.echo(f"window rounds            {s.window_rounds[0]}..{s.window_rounds[-1]}")
            click.echo(f"average                  {s.average:.6g}")
            click.echo(f"range excursion          {s.range_measured:.6g} (allowed {s.range_allowed:.6g})")
            click.echo(f"slope excursion          {s.slope_excursion_measured:.6g} (allowed {s.slope_excursion_allowed:.6g})")
            click.echo(f"least-squares fit        y = {s.fit_formula}")
    sys.exit(0 if s.reached else 1)


@main.group()
def sim():
    """The simulated SSD outside a run."""


@sim.command("serve")
@click.argument("drive", default="sim:client")
@click.option("--socket", "socket_path", required=True, help="Unix socket to serve NBD on.")
def sim_serve(drive, socket_path):
    """Serve DRIVE (sim:client, sim:enterprise, sim:sata-mlc or sim:FILE.toml) over NBD in real time.

    Each request completes when the model says (data is not stored: reads return zeros). Test it with
    fio's nbd engine: fio --ioengine=nbd --uri='nbd+unix:///?socket=PATH' --rw=randwrite --bs=4k ...
    """
    from .simdrive import load_params
    from .simdrive.nbd import serve, socket_file

    socket_file(socket_path)
    name = drive[len("sim:"):] if drive.startswith("sim:") else drive
    try:
        params = load_params(name)
    except (ValueError, FileNotFoundError) as e:
        raise SsdptsError(str(e)) from None
    click.echo(f"serving {drive} on {socket_path} (Ctrl-C to stop)", err=True)
    serve(params, socket_path)


@main.command("serve-fio")
@click.option("--bind", default="127.0.0.1", show_default=True,
              help="Address to listen on. fio's server has no authentication and its jobs can run commands: "
                   "keep it on 127.0.0.1 behind an SSH tunnel, or on an isolated management network.")
@click.option("--port", default=8765, show_default=True)
def serve_fio(bind, port):
    """Run fio's server for remote ssdpts runs (on the machine that holds the drives)."""
    from .engines.fio_versions import fio_binary, fio_version

    if bind in ("0.0.0.0", "::", ""):
        click.echo("ssdpts: warning: listening on all interfaces; anyone who can reach this port can run "
                   "commands as this user", err=True)
    fio_version()                              # installed, a fio, new enough ($SSDPTS_FIO or the PATH's)
    fio = shutil.which(fio_binary())
    family = "ip6" if ":" in bind else "ip"
    os.execv(fio, [fio, f"--server={family}:{bind},{port}"])


@main.command()
@click.option("--explain", is_flag=True, help="Every key a profile may set: unit, default, what it sets, allowed values.")
def profiles(explain):
    """List the shipped profiles."""
    from .profiles import explained, load_profile, shipped

    if explain:
        click.echo(explained())
        return
    for name in shipped():
        p = load_profile(name)
        click.echo(f"{name:16} {p['profile'].get('description', '')}")


@main.command("tests")
def list_tests():
    """List the tests (PTS tests, reviewer studies, endurance) with what each needs."""
    from .pts import registry

    for spec in registry.tests().values():
        needs = f"  [needs: {', '.join(c.name.lower() for c in sorted(spec.needs, key=lambda c: c.name))}]" \
            if spec.needs else ""
        click.echo(f"{spec.name:14} {spec.kind:9} {spec.title}{needs}")

