"""Every registered test, end to end on the simulated SSD: run, show, show --json, export, report, compare.

It iterates over the registry, so a test added later is covered without writing a new test here. The runs are
real processes; the commands that read them run in this process (click's CliRunner): what is tested is each
test's renderers, decoders and exporters, and a process of its own per command cost most of the file's time
(Python and ssdpts started 120 times, matplotlib imported 60 times: 1.4 s each here). The commands as processes
(exit codes, stderr, start-up, imports) are tested in tests/test_cli_errors.py, tests/test_startup.py and
tests/report/test_report_cli.py.
"""

from __future__ import annotations

import json

import pytest

from conftest import HERE, ssdpts, ssdpts_here
from ssdpts.capabilities import missing
from ssdpts.engines.sim import SimEngine
from ssdpts.pts import registry
from ssdpts.pts.spec import Summary
from ssdpts.targets import open_target

pytestmark = pytest.mark.no_end_report    # reads no end-of-run report (tests/conftest.py)

QUICKEST = HERE / "profiles" / "sim-registry.toml"
RESULTS_SCHEMA = HERE.parent / "docs" / "results.schema.json"


def assert_follows_the_published_schema(doc: dict) -> None:
    """The JSON document against docs/results.schema.json, the schema users read (jsonschema: the docs extra)."""
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(json.loads(RESULTS_SCHEMA.read_text()))
    errors = [f"{e.json_path}: {e.message}" for e in validator.iter_errors(doc)]
    assert not errors, "\n".join(errors[:10])
SIM = f"sim:{HERE / 'profiles' / 'sim-small.toml'}"


def on_the_simulated_ssd() -> list[str]:
    """The tests the simulated SSD can run (a file-system study needs a real device: tests/test_fs_studies.py)."""
    offered = SimEngine.capabilities & open_target(SIM).capabilities
    return [name for name, spec in registry.tests().items() if not missing(spec.needs, offered)]


def test_the_registry_finds_tests_with_complete_declarations():
    tests = registry.tests()
    assert {"iops", "throughput", "latency"} <= set(tests)
    for name, spec in tests.items():
        assert spec.name == name and spec.title and spec.kind in ("pts", "study", "endurance")
        assert issubclass(spec.summary, Summary)
        assert spec.html is not None and spec.text is not None, name


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    results = tmp_path_factory.mktemp("registry") / "results"
    ids = {}
    for name in on_the_simulated_ssd():
        pair = []
        for _ in range(2):
            p = ssdpts("run", SIM, "--profile", str(QUICKEST), "--tests", name, "--results", str(results),
                       "-q", check=False)
            assert p.returncode == 0 and "Traceback" not in p.stderr, f"{name}: {p.stderr}"
            pair.append(p.stdout.strip().splitlines()[-1])
        ids[name] = pair
    return results, ids


@pytest.mark.slow
@pytest.mark.parametrize("name", on_the_simulated_ssd())
def test_every_command_path_of_every_test(two_runs, tmp_path, name):
    results, ids = two_runs
    a, b = ids[name]
    r = ["--results", str(results)]

    def ok(*args):
        p = ssdpts_here(*args, *r, check=False)
        assert p.exit_code == 0 and p.exception is None and "Traceback" not in p.stderr, (
            f"{name} {args}: {p.stderr} {p.exception!r}")
        return p

    text = ok("show", a).stdout
    assert registry.get(name).title in text and "[completed]" in text
    doc = json.loads(ok("show", a, "--json").stdout)
    (test,) = doc["tests"]
    assert test["summary"]["schema"] == registry.get(name).schema
    assert registry.get(name).decode(test["summary"]) is not None     # the JSON reads back as the typed record
    assert_follows_the_published_schema(doc)
    csv_files = ok("export", a, "--format", "csv", "--out", str(tmp_path / "csv")).stdout.split()
    assert csv_files and all(f.endswith(".csv") for f in csv_files)
    (json_file,) = ok("export", a, "--format", "json", "--out", str(tmp_path / "json")).stdout.split()
    exported = json.loads(open(json_file).read())
    assert exported["schema"] == "ssdpts.results/3"
    assert_follows_the_published_schema(exported)
    html = open(ok("report", a).stdout.strip()).read()
    assert "report section failed" not in html
    cmp = open(ok("compare", a, b, "--out", str(tmp_path / "cmp")).stdout.strip()).read()
    assert "report section failed" not in cmp and registry.get(name).title in cmp
