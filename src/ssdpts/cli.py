"""The `ssdpts` command line."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

# This module is the wiring only: the group, its error and exit handling, and the table of commands. Every
# command lives in a module of its own (ssdpts/commands), imported only when it runs or shows its own help:
# `ssdpts --help` starts without the engines, the test registry and the report, and each command imports only
# what it uses (bench/startup.py measures it).
from . import __version__, interrupts
from .commands.common import RESULTS_META, LazyCommand
from .errors import SsdptsError

EX_SOFTWARE = 70        # sysexits.h: an internal software error
INTERRUPTED = 130       # what a shell reports for Ctrl-C; SIGTERM and SIGHUP exit with it too
READER_GONE = 141       # what a shell reports for a writer whose reader left (`yes | head -1`: 128 + SIGPIPE)
DEBUG_ENV = "SSDPTS_DEBUG"


def _stdout_reader_gone() -> bool:
    """Whether stdout is a pipe (or socket) whose reader has closed it: poll reports an error on it. Tells a
    reader that stopped early (`| head`) from a broken pipe elsewhere (a remote engine's socket), still a crash."""
    import select

    try:
        fd = sys.__stdout__.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))


def _end_if_reader_gone(e: BaseException) -> None:
    """A reader that stops early (`ssdpts show RUN --json | head`) chose to: end quietly as Unix tools do, no
    message, no log, exit 141 as a writer killed by SIGPIPE. Not by SIGPIPE itself: a run's clean-ups must run.
    stdout then points at /dev/null, so the interpreter's last flush has somewhere to go (Python's recipe)."""
    if isinstance(e, BrokenPipeError) and _stdout_reader_gone():
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.__stdout__.fileno())
        sys.exit(READER_GONE)


def _crash(e: Exception, results: Path | None) -> None:
    """Last resort: an unexpected exception is one line plus the file holding its traceback, exit 70.
    The traceback goes to RESULTS/logs/ when that directory exists (never creating it), else a temp file."""
    _end_if_reader_gone(e)
    if os.environ.get(DEBUG_ENV):
        raise e
    import tempfile     # here, as the others: every command starts without them
    import time
    import traceback

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


LAZY_COMMANDS = {
    "analyze": LazyCommand("ssdpts.commands.analyze", "analyze",
                           "Offline analyses of saved data (fio logs, SMART snapshots); nothing is run on a device."),
    "capture": LazyCommand("ssdpts.commands.capture", "capture",
                           "Record the block-layer I/O of DEVICES and reduce it to a workload file: IO streams (size, "
                           "read/write,"),
    "check": LazyCommand("ssdpts.commands.results", "check_run",
                         "The run's conformance verdict: every deviation from the spec its profile claims (non-SNIA"),
    "compare": LazyCommand("ssdpts.commands.report", "compare",
                           "Overlay the tests shared by RUN_IDS (several drives or runs): plots per run, tables "
                           "with %"),
    "delete": LazyCommand("ssdpts.commands.results", "delete",
                          "Remove RUN_IDS (and with --failed every failed run): their rows in the results database"),
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
    "info": LazyCommand("ssdpts.commands.info", "info",
                        "What ssdpts knows about TARGET before touching it (read-only)."),
    "list": LazyCommand("ssdpts.commands.results", "list_runs",
                        "List the runs in the results database, optionally filtered."),
    "plan": LazyCommand("ssdpts.commands.plan", "plan",
                        "Dry run: what 'ssdpts run' would do on TARGET — purge method, preconditioning bytes, rounds"),
    "profiles": LazyCommand("ssdpts.commands.catalog", "profiles", "List the shipped profiles."),
    "push": LazyCommand("ssdpts.commands.push", "push",
                        "Copy RUN_IDS from this bench's results to a PostgreSQL store: what it lacks, once"),
    "report": LazyCommand("ssdpts.commands.report", "report",
                          "Write the HTML report of RUN_ID with PNG/SVG plots and CSV tables (works offline)."),
    "resume": LazyCommand("ssdpts.commands.run", "resume",
                          "Continue an interrupted or failed run from its last committed round."),
    "run": LazyCommand("ssdpts.commands.run", "run",
                       "Run the test suite on TARGETS: block devices, files, or sim:PRESET."),
    "serve-fio": LazyCommand("ssdpts.commands.remote", "serve_fio",
                             "Run fio's server for remote ssdpts runs (on the machine that holds the drives)."),
    "show": LazyCommand("ssdpts.commands.results", "show", "Show a run's results (steady state, tables, units)."),
    "sim": LazyCommand("ssdpts.commands.sim", "sim", "The simulated SSD outside a run."),
    "site": LazyCommand("ssdpts.commands.site", "site",
                        "Write a static results site: every drive and run, filterable; each run's report; comparisons."),
    "steady-state": LazyCommand("ssdpts.commands.steady", "steady_state",
                                "Judge steady state for per-round VALUES (last WINDOW of them), the SNIA way."),
    "tests": LazyCommand("ssdpts.commands.catalog", "list_tests",
                         "List the tests (PTS tests, reviewer studies, endurance) with what each needs."),
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
        try:
            try:
                return self._main(*args, **kwargs)
            finally:
                sys.stdout.flush()      # here, not at the interpreter's exit, where a closed pipe is a warning
        except BrokenPipeError as e:    # writing the help or an error line
            _end_if_reader_gone(e)
            raise

    def _main(self, *args, **kwargs):
        """Bad command-line input is one line naming the problem and where the help is, exit 2."""
        interrupts.install()     # SIGTERM and SIGHUP act as Ctrl-C
        try:
            done = super().main(*args, standalone_mode=False, **kwargs)
            interrupts.acknowledge()     # a command that took the interrupt as its end (sim serve): no repeat
            return done
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

    def make_context(self, *args, **kwargs):
        """`ssdpts --help` and `--version` print here, inside click's own EPIPE handling (exit 1)."""
        try:
            return super().make_context(*args, **kwargs)
        except BrokenPipeError as e:
            _end_if_reader_gone(e)
            raise

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
      141  stdout's reader left early ('ssdpts show RUN --json | head'): no message, nothing written
    """
