"""Commands start light: the command line lists every command without importing the modules that hold them,
and neither `import ssdpts.cli` nor `--help` imports the plotting libraries (bench/startup.py measures the
time; no timing is asserted here)."""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

import ssdpts.commands
import ssdpts.pts
from ssdpts import cli
from ssdpts.commands.analyze import ANALYSES
from ssdpts.pts.registry import tests as registered_tests
from ssdpts.pts.spec import Renderers

from conftest import TINY

# the plotting libraries, the heavy stages, and the modules of the commands the listing declares
HEAVY = ("matplotlib", "numpy", "ssdpts.runner", "ssdpts.pts.registry", "ssdpts.report.core", "ssdpts.analyze",
         *sorted({c.module for c in [*cli.LAZY_COMMANDS.values(), *ANALYSES.values()]}))

# Runs the command line in a fresh interpreter and reports, at exit, which of HEAVY it imported.
PROBE = """
import atexit, json, sys
atexit.register(lambda: print("MODULES " + json.dumps(sorted(m for m in {heavy!r} if m in sys.modules))))
from ssdpts.cli import main
if {args!r} is not None:
    sys.argv = ["ssdpts", *{args!r}]
    main()
"""


def _imported(args: list[str] | None, heavy: tuple[str, ...] = HEAVY, codes: tuple[int, ...] = (0,)
              ) -> tuple[list[str], str]:
    p = subprocess.run([sys.executable, "-c", PROBE.format(heavy=heavy, args=args)], capture_output=True, text=True)
    assert p.returncode in codes, (args, p.returncode, p.stderr[-2000:])
    listing, _, modules = p.stdout.rpartition("MODULES ")
    return json.loads(modules), listing


@pytest.mark.parametrize("args", [None, ["--help"], ["list", "--help"]], ids=["import", "--help", "list --help"])
def test_the_command_line_starts_without_plotting_or_the_test_registry(args):
    """A command's help imports its own module, and nothing else of HEAVY."""
    own = [cli.LAZY_COMMANDS[args[0]].module] if args and args[0] in cli.LAZY_COMMANDS else []
    imported, _ = _imported(args)
    assert imported == own


def _every_command() -> dict[str, click.Command]:
    """The commands as their modules define them: cli's own, and every command object of the modules under
    ssdpts/commands (imported here, whatever the listing declares), less the subcommands of their groups."""
    found = {name: cmd for name, cmd in cli.main.commands.items()}
    modules = [importlib.import_module(f"ssdpts.commands.{m.name}")
               for m in pkgutil.iter_modules(ssdpts.commands.__path__)]
    defined = [value for module in modules for value in vars(module).values()
               if isinstance(value, click.Command) and value.callback.__module__ == module.__name__]
    grouped = {id(sub) for value in defined if isinstance(value, click.Group) for sub in value.commands.values()}
    grouped |= {id(a.load()) for a in ANALYSES.values()}       # analyze's, listed by its lazy group
    for value in defined:
        if id(value) not in grouped:
            found.setdefault(value.name, value)
    return found


def test_help_lists_every_command_with_its_help():
    commands = _every_command()
    _, listing = _imported(["--help"])
    rows = dict(line.split(None, 1) for line in listing.split("Commands:")[1].splitlines() if line.strip())
    assert sorted(rows) == sorted(commands)
    for name, cmd in commands.items():
        shown = rows[name].strip()
        assert shown and " ".join((cmd.help or "").split()).startswith(shown.removesuffix("...")), name


@pytest.mark.parametrize("name", sorted(cli.LAZY_COMMANDS))
def test_a_lazy_commands_summary_is_its_help(name):
    """The declared summary gives the listing the command's own short help at every width the listing uses
    (max_content_width 100: limits 32 to 80 characters, the longest command name being 12)."""
    lazy = cli.LAZY_COMMANDS[name]
    real = lazy.load()
    assert real.name == name
    listed = click.Command(name, help=lazy.summary)     # what the listing shows for it
    for limit in range(20, 81):
        assert listed.get_short_help_str(limit) == real.get_short_help_str(limit), (name, limit)


@pytest.mark.parametrize("name", sorted(ANALYSES))
def test_an_analysis_summary_is_its_help(name):
    """`analyze --help` lists its commands from declared summaries, as the top level does."""
    real = ANALYSES[name].load()
    assert real.name == name
    listed = click.Command(name, help=ANALYSES[name].summary)
    for limit in range(20, 81):
        assert listed.get_short_help_str(limit) == real.get_short_help_str(limit), (name, limit)


def test_analyze_help_imports_no_analysis():
    imported, listing = _imported(["analyze", "--help"])
    assert all(f"  {name}  " in listing for name in ANALYSES)
    assert imported == ["ssdpts.commands.analyze"]


@pytest.mark.parametrize("name", sorted(cli.LAZY_COMMANDS))
def test_a_lazy_command_shows_its_own_help(name):
    r = CliRunner().invoke(cli.main, [name, "--help"])
    assert r.exit_code == 0 and r.output.startswith(f"Usage: main {name} ")


def test_the_command_line_starts_without_the_store():
    """The results database is opened by the commands that read it, not by the command line's wiring."""
    for args in (None, ["--help"]):
        assert _imported(args, heavy=("ssdpts.store", "sqlite3"))[0] == []


# what reading a stored run must not import: plotting, arrays, the runner, the report, target resolution
NOT_FOR_READING = ("matplotlib", "numpy", "jinja2", "ssdpts.runner", "ssdpts.report.core", "ssdpts.analyze",
                   "ssdpts.targets.resolve", "ssdpts.engines.fio", "ssdpts.engines.fioprocess", "ssdpts.engines.fiojob",
                   "ssdpts.engines.fiotree", "ssdpts.engines.sim")
TEST_PACKAGES = tuple(f"ssdpts.pts.{m.name}" for m in pkgutil.iter_modules(ssdpts.pts.__path__) if m.ispkg)
RUN_MODULES = tuple(f"{package}.run" for package in TEST_PACKAGES)     # how each test runs: its round loop


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory) -> tuple[str, str]:
    """A results directory holding one tiny IOPS run on the simulated drive (a few seconds; no end-of-run report,
    which nothing here reads), and the run's id."""
    results = str(tmp_path_factory.mktemp("startup") / "results")
    out = subprocess.run([sys.executable, "-m", "ssdpts", "run", "sim:client", "--profile", str(TINY), "--tests", "iops",
                          "--results", results, "-q"], capture_output=True, text=True, check=True, timeout=600,
                         env={**os.environ, "SSDPTS_REPORT": "0"})
    return results, out.stdout.split()[-1]


def test_listing_runs_decodes_no_cell_and_imports_no_test(stored_run):
    results, run_id = stored_run
    imported, listing = _imported(["list", "--results", results],
                                  heavy=(*NOT_FOR_READING, *TEST_PACKAGES, "ssdpts.pts.registry", "ssdpts.health",
                                         "ssdpts.engines.results", "ssdpts.workload.spec"))
    assert run_id in listing and imported == []


@pytest.mark.parametrize("args", [["show"], ["show", "--json"], ["check"], ["check", "--json"]],
                         ids=["show", "show --json", "check", "check --json"])
def test_reading_a_run_imports_only_the_tests_it_holds(stored_run, args):
    """`show` and `check` import the packages of the run's tests (iops here), no other test, and no test's run
    module (the conformance verdict reads the test's settings from its settings module); only `show`'s text
    draws (the test's text renderer), and nothing imports plotting, arrays, the runner or the report."""
    results, run_id = stored_run
    drawing = ("ssdpts.pts.iops.render", "ssdpts.render.context")
    imported, _ = _imported([args[0], run_id, *args[1:], "--results", results],
                            heavy=(*NOT_FOR_READING, *TEST_PACKAGES, *RUN_MODULES, "ssdpts.pts.context",
                                   "ssdpts.pts.rounds", *drawing), codes=(0, 1))
    draws = list(drawing) if args == ["show"] else []
    assert imported == sorted(["ssdpts.pts.iops", *draws])


def test_every_deferred_part_of_a_test_resolves():
    """A test's run, plan, settings and renderers are named by module and attribute (pts/spec.Deferred): each
    name must lead to the object, as the runner, `plan` and the report will read it."""
    for name, spec in registered_tests().items():
        assert callable(spec.run), name
        assert spec.plan is None or callable(spec.plan), name
        assert isinstance(spec.settings, type), name
        assert spec.renderers is None or isinstance(spec.renderers, Renderers), name


def test_every_tests_settings_load_without_how_it_runs():
    """Validating a profile builds every test's settings (`plan`, `check`, `run` refuse a contradictory profile
    whatever it runs): each test declares them in a light module, apart from its run module and the round loop."""
    running = (*RUN_MODULES, "ssdpts.pts.context", "ssdpts.pts.rounds", "ssdpts.runner")
    probe = ("import json, sys\n"
             "from ssdpts.pts.registry import tests\n"
             "declared = [spec.settings for spec in tests().values()]\n"
             f"print(json.dumps(sorted(m for m in {running!r} if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_plan_imports_only_the_run_modules_of_the_tests_it_plans():
    """`plan` checks every test's settings against the profile but imports how a test runs (its plan function)
    only for the tests it plans: pts-enterprise's iops, throughput and latency."""
    imported, listing = _imported(["plan"], heavy=RUN_MODULES)
    assert imported == ["ssdpts.pts.iops.run", "ssdpts.pts.latency.run", "ssdpts.pts.throughput.run"]
    assert "IOPS" in listing


def test_a_refused_profile_imports_no_run_module(tmp_path):
    """A profile with a key no test declares is refused from the settings declarations alone."""
    profile = tmp_path / "typo.toml"
    profile.write_text("[tests.iops]\nno_such_key = 3\n")
    probe = PROBE.format(heavy=RUN_MODULES, args=["plan", "--profile", str(profile)])
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert p.returncode == 2 and "no_such_key" in p.stderr
    assert json.loads(p.stdout.rpartition("MODULES ")[2]) == []
