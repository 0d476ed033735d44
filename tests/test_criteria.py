"""Acceptance criteria (`ssdpts check RUN --criteria`): rules judged against one real run of the simulated
drive (iops, latency, throughput, wsat; ~10 s, shared by the module), the values checked against the typed
summaries the store decodes; bad rules files refused in one line; JUnit XML that parses with the right counts."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import HERE, run_completed, ssdpts
from ssdpts import cli
from ssdpts.criteria import FIGURES, load_criteria
from ssdpts.criteria.units import convert, unit
from ssdpts.errors import SsdptsError
from ssdpts.runresult.model import load_run

pytestmark = pytest.mark.no_end_report    # writes the report it checks (tests/conftest.py)

EXAMPLE = Path(cli.__file__).parent / "criteria" / "examples" / "datacenter.toml"
SIM_SMALL = f"sim:{HERE / 'profiles' / 'sim-small.toml'}"
QUICKEST = str(HERE / "profiles" / "criteria-sim.toml")     # sim-registry's, WSAT to 4 fills (saturated)


@pytest.fixture(scope="module")
def sim_run(tmp_path_factory):
    """(results dir, run id, the run as the store decodes it)."""
    results = tmp_path_factory.mktemp("criteria") / "results"
    rid, store = run_completed(SIM_SMALL, results, QUICKEST, "iops,latency,throughput,wsat")
    return results, rid, load_run(store, rid)


def _rule(name: str, figure: str, op: str, threshold, unit: str | None = None, optional: bool = False) -> str:
    lines = ["[[rule]]", f"name = {json.dumps(name)}", f"figure = {json.dumps(figure)}", f"op = {json.dumps(op)}",
             f"threshold = {json.dumps(threshold)}", 'source = "test"']
    if unit is not None:
        lines.append(f"unit = {json.dumps(unit)}")
    if optional:
        lines.append("optional = true")
    return "\n".join(lines) + "\n"


def _check(results: Path, rid: str, rules: Path, *extra: str):
    return CliRunner().invoke(cli.main, ["check", rid, "--results", str(results), "--criteria", str(rules), *extra])


def _judged(tmp_path, sim_run, *rules: str, extra: tuple[str, ...] = ()) -> tuple[int, dict]:
    results, rid, _ = sim_run
    f = tmp_path / "rules.toml"
    f.write_text("".join(rules))
    r = _check(results, rid, f, "--json", *extra)
    assert r.exit_code in (0, 1), r.output
    return r.exit_code, {j["name"]: j for j in json.loads(r.stdout)["rules"]}


def test_rules_pass_and_fail_with_the_summaries_values_as_evidence(tmp_path, sim_run):
    _, _, run = sim_run
    iops = run.test("iops").summary.cell(4096, 0).iops
    p9999 = run.test("latency").summary.latency(4096, 100, "read").p("99.99")
    assert iops > 0 and p9999 > 0
    code, out = _judged(tmp_path, sim_run,
                        _rule("iops floor", "iops.cell[4k,0].iops", ">=", iops * 0.99, "IOPS"),
                        _rule("p99.99 bound", "latency.cell[4k,100].read.p99.99", "<=", p9999 * 1.01, "µs"))
    assert code == 0
    assert out["iops floor"]["status"] == "pass" and out["iops floor"]["evidence"]["value"] == iops
    ev = out["p99.99 bound"]["evidence"]
    assert (ev["value"], ev["unit"], ev["test"]) == (p9999, "µs", "latency")
    assert "rnd_4K_100-0" in ev["where"] and "QD1" in ev["where"] and ev["rounds"].startswith("window rounds")

    code, out = _judged(tmp_path, sim_run, _rule("iops floor", "iops.cell[4k,0].iops", ">=", iops * 1.01, "IOPS"),
                        _rule("steady as stored", "iops.steady", "==", run.test("iops").summary.steady.reached))
    assert code == 1
    assert out["iops floor"]["status"] == "fail" and out["steady as stored"]["status"] == "pass"


def test_units_convert_within_a_dimension(tmp_path, sim_run):
    _, _, run = sim_run
    p9999_us = run.test("latency").summary.latency(4096, 100, "read").p("99.99")
    write_mib_s = run.test("throughput").summary.block_sizes[0].write_mib_s
    wsat = run.test("wsat").summary.workloads["rnd4k-write"]
    code, out = _judged(
        tmp_path, sim_run,
        _rule("ms above", "latency.cell[4k,100].read.p99.99", "<=", p9999_us / 1000 * 1.001, "ms"),
        _rule("ns below", "latency.cell[4k,100].read.p99.99", "<=", p9999_us * 1000 * 0.999, "ns"),
        _rule("MB/s above", "throughput.bs[128k].write", ">=", write_mib_s * 1.048576 * 0.999, "MB/s"),
        _rule("MB/s below", "throughput.bs[128k].write", ">=", write_mib_s * 1.048576 * 1.001, "MB/s"),
        _rule("share", "wsat.workload[rnd4k-write].final_over_fresh", ">=",
              round(wsat.final_iops / wsat.fresh_iops, 6) - 1e-6, "ratio"))
    assert code == 1
    assert [out[n]["status"] for n in ("ms above", "ns below", "MB/s above", "MB/s below", "share")] == \
        ["pass", "fail", "pass", "fail", "pass"]
    assert out["MB/s above"]["evidence"]["unit"] == "MiB/s"
    assert out["share"]["evidence"]["value"] == pytest.approx(100 * wsat.final_iops / wsat.fresh_iops)
    assert convert(8, unit("s", "t"), unit("us", "t"), "t") == 8e6


def test_a_missing_figure_fails_unless_optional(tmp_path, sim_run):
    code, out = _judged(tmp_path, sim_run,
                        _rule("waf", "endurance.waf", "<=", 2.0),
                        _rule("no such cell", "iops.cell[512,50].iops", ">=", 1, "IOPS"))
    assert code == 1
    assert out["waf"]["status"] == "not available" and not out["waf"]["ok"]
    assert "no endurance test" in out["waf"]["evidence"]["where"]
    assert "no cell 0.5K at 50 % read" in out["no such cell"]["evidence"]["where"]
    code, out = _judged(tmp_path, sim_run, _rule("waf", "endurance.waf", "<=", 2.0, optional=True),
                        _rule("run has iops", "iops.cell[4k,0].iops", ">", 0, "IOPS"))
    assert code == 0 and out["waf"]["ok"] and out["waf"]["status"] == "not available"


def test_junit_parses_with_the_counts_ci_reads(tmp_path, sim_run):
    results, rid, _ = sim_run
    rules = tmp_path / "rules.toml"
    rules.write_text(_rule("holds", "iops.cell[4k,0].iops", ">", 0, "IOPS")
                     + _rule("fails", "iops.cell[4k,0].iops", "<", 0, "IOPS")
                     + _rule("missing", "endurance.waf", "<=", 2.0)
                     + _rule("optional", "endurance.days_to_eol", ">=", 1, "days", optional=True))
    out = tmp_path / "junit.xml"
    r = _check(results, rid, rules, "--junit", str(out))
    assert r.exit_code == 1 and "FAIL" in r.stdout
    root = ET.parse(out).getroot()
    assert root.tag == "testsuites" and (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "2", "0")
    (suite,) = root.findall("testsuite")
    assert rid in suite.get("name") and (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("4", "2", "1")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert set(cases) == {"holds", "fails", "missing", "optional"}
    assert cases["holds"].find("failure") is None and cases["optional"].find("skipped") is not None
    failure = cases["fails"].find("failure")
    assert failure.get("type") == "fail" and "iops.cell[4k,0].iops = " in failure.get("message")
    assert cases["missing"].find("failure").get("type") == "not available"


def test_the_shipped_example_cites_every_number_and_judges_a_run(sim_run):
    criteria = load_criteria(EXAMPLE)
    assert len(criteria.rules) >= 8
    for r in criteria.rules:
        assert "OCP 2.7 §" in r.source or "lab's own choice" in r.source or "SNIA SSS PTS" in r.source, r.source
    results, rid, _ = sim_run
    r = _check(results, rid, EXAMPLE)
    assert r.exit_code == 1      # the quick profile measures no 1024K throughput and is not conformant
    assert "no block size 1024K was measured" in r.stdout and "N/A      WAF at most 1.4" in r.stdout


@pytest.mark.parametrize("content, message", [
    (None, "does not exist"),
    ("[[rule]\n", "is not valid TOML"),
    ("[criteria]\nname = 'x'\n", "has no rules"),
    (_rule("a", "iops.cell[4k,0].iops", ">=", 1, "IOPS") + "colour = 'red'\n", "unknown key 'colour'"),
    (_rule("a", "iopz.cell[4k,0].iops", ">=", 1, "IOPS"), "names no test with figures"),
    (_rule("a", "iops.cell[4k].iops", ">=", 1, "IOPS"), "is not a figure of iops"),
    (_rule("a", "iops.cell[4k,0].iops", ">=", 1, "MB/s"), "the threshold is in MB/s (bandwidth) but the figure is in IOPS"),
    (_rule("a", "iops.cell[4k,0].iops", ">=", 1, "furlongs"), "unknown unit 'furlongs'"),
    (_rule("a", "iops.cell[4k,0].iops", ">=", 1), "'unit' is missing"),
    (_rule("a", "iops.cell[4k,0].iops", "=>", 1, "IOPS"), "unknown op '=>'"),
    (_rule("a", "iops.steady", ">=", 1), "is yes/no"),
    (_rule("a", "iops.cell[4k,0].iops", ">=", "many", "IOPS"), "threshold must be a number"),
    ("[[rule]]\nname='a'\nfigure='iops.cell[4k,0].iops'\nop='>='\nthreshold=nan\nunit='IOPS'\nsource='x'\n",
     "not a finite number"),
    (_rule("a", "iops.cell[4k,0].iops", ">=", 1, "IOPS") * 2, "two rules are named 'a'"),
])
def test_a_bad_rules_file_is_one_line_exit_2_and_nothing_written(tmp_path, sim_run, content, message):
    results, rid, _ = sim_run
    rules = tmp_path / "rules.toml"
    if content is not None:
        rules.write_text(content)
    out = tmp_path / "junit.xml"
    r = _check(results, rid, rules, "--junit", str(out))
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2 and len(lines) == 1 and lines[0].startswith("ssdpts: error:"), r.output
    assert message in lines[0], lines[0]
    assert not out.exists() and r.stdout == ""


def test_junit_needs_criteria_and_the_cli_is_one_line(tmp_path, sim_run):
    results, rid, _ = sim_run
    p = ssdpts("check", rid, "--results", str(results), "--junit", str(tmp_path / "j.xml"), check=False)
    assert p.returncode == 2 and "--junit needs --criteria" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "j.xml").exists()
    rules = tmp_path / "rules.toml"
    rules.write_text(_rule("holds", "iops.cell[4k,0].iops", ">", 0, "IOPS"))
    r = _check(results, rid, rules, "--junit", str(tmp_path))
    assert r.exit_code == 2 and "is a directory" in r.stderr and list(tmp_path.iterdir()) == [rules]


def test_every_figure_resolves_from_its_own_path():
    from ssdpts.criteria.figures import resolve
    samples = {"bs": "4k", "read": "0", "dir": "read", "q": "99.99", "workload": "rnd4k-write", "key": "waf"}
    for f in FIGURES:
        path = f.path
        for k, v in samples.items():
            path = path.replace("{" + k + "}", v)
        assert resolve(path, "t")[0] is f, path
    assert resolve("latency.cell[4K,100].read.p99.990", "t")[1] == {"bs": 4096, "read": 100, "dir": "read",
                                                                   "q": "99.99"}     # as fio's keys are stored
    with pytest.raises(SsdptsError, match="not a figure of run"):
        resolve("run.nothing", "t")
