"""A claim is judged only when its basis was reached (issue 39, item 1; docs/report.md "Claims by basis"), and the
verdict names a WSAT stopped short of the spec's stop whatever the profile.

Two runs through the CLI: seed 003's method (`review-dc`, IOPS and WSAT scaled down) on sim:enterprise with WSAT cut
by its round limit far before 4 drive fills, and WSAT to its stop on a 1 GiB simulated enterprise drive. The truths
are not ssdpts's figures: the simulator's own counter of bytes the host wrote (read by the health snapshots before
and after the WSAT test), the preset's capacity, and the spec's rule (PTS-E 1.1 WSAT: until 4x the user capacity is
written or 24 h)."""

from __future__ import annotations

import csv
import json
import re
import tomllib
from pathlib import Path

import pytest

from conftest import HERE, run_completed, ssdpts
from ssdpts import cli
from ssdpts.pts import registry
from ssdpts.pts.wsat.summary import WsatWorkload
from ssdpts.report.claimed import claim_rows, load_claims
from ssdpts.report.headline import claim_lines
from ssdpts.steady import evaluate
from ssdpts.targets.record import PurgeRecord

pytestmark = pytest.mark.no_end_report    # writes the reports it reads (tests/conftest.py)

SPEC_FILLS = 4                 # PTS-E 1.1 WSAT: "4x User Capacity or 24h" (shared/reference/snia-pts.md §3.4)
PRESETS = Path(cli.__file__).parent / "simdrive" / "presets"
SMALL = HERE / "profiles" / "sim-small-enterprise.toml"
CLAIMS = ('[[random]]\nblock_size = "4k"\nwrite_iops = 150000\nbasis = "saturated"\n\n'
          '[[random]]\nblock_size = "8k"\nwrite_iops = 1\nbasis = "saturated"\n')     # no 8K WSAT: not measured
EXAMPLE_CRITERIA = Path(cli.__file__).parent / "criteria" / "examples" / "datacenter.toml"
WROTE = re.compile(r"WSAT wrote (\d+\.\d\d) of (\d+) fills")
WROTE_VERDICT = re.compile(r"it wrote (\d+\.\d\d) of (\d+) drive fills")


def preset_capacity(scale: float = 1.0) -> int:
    """The enterprise preset's user capacity in bytes (its own file), times a test drive's scale."""
    gib = tomllib.loads((PRESETS / "enterprise.toml").read_text())["capacity"]["user_gib"]
    return int(gib * scale * 2**30)


def host_fills(store, rid: str, capacity: int) -> float:
    """The drive fills the simulator counted during the WSAT test: host bytes written between its health snapshots
    (the simulator's counters) over the capacity."""
    before, after = (store.step(rid, "wsat", f"health:{when}") for when in ("before", "after"))
    assert before.source == after.source == "sim" and before.sources["host_written_bytes"] == "simulator counters"
    return (after.host_written_bytes - before.host_written_bytes) / capacity


def stated(text: str, pattern: re.Pattern = WROTE) -> tuple[float, int]:
    m = pattern.search(text)
    assert m, text
    return float(m.group(1)), int(m.group(2))


@pytest.fixture(scope="module")
def short(tmp_path_factory):
    """(results, run id, store, the fills the simulator counted): WSAT stopped by its round limit."""
    results = tmp_path_factory.mktemp("short") / "results"
    rid, store = run_completed("sim:enterprise", results, str(HERE / "profiles" / "wsat-short.toml"), "iops,wsat")
    fills = host_fills(store, rid, preset_capacity())
    assert 0.05 < fills < 1, fills         # the scenario: WSAT far short of the spec's 4 fills
    return results, rid, store, fills


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    """(results, run id, store, fills): WSAT to its stop (4x capacity) on a 1 GiB drive."""
    results = tmp_path_factory.mktemp("full") / "results"
    rid, store = run_completed(f"sim:{SMALL}", results, "quick", "wsat")
    scale = tomllib.loads(SMALL.read_text())["scale"]
    return results, rid, store, host_fills(store, rid, preset_capacity(scale))


def claims_file(tmp_path: Path) -> Path:
    """The claims as a user gives them to `report --claimed`."""
    f = tmp_path / "claims.toml"
    f.write_text(CLAIMS)
    return f


def saturated_row(store, rid: str, tmp_path: Path) -> dict:
    """The claim rows' saturated 4K write claim, as the report's table and headline are made of it."""
    return next(r for r in claim_rows(store, store.run(rid), load_claims(claims_file(tmp_path)))
                if r["what"] == "RND 4K 0/100")


def _report(tmp_path, results, rid) -> tuple[dict, dict]:
    """`report --claimed`: the claimed-vs-measured CSV rows by claim, and results.json."""
    out = tmp_path / "report"
    ssdpts("report", rid, "--results", str(results), "--claimed", str(claims_file(tmp_path)), "--out", str(out))
    with open(out / "tables" / "claimed-vs-measured.csv", newline="", encoding="utf-8") as f:
        rows = {r["claim"]: r for r in csv.DictReader(f)}
    return rows, json.loads((out / "results.json").read_text())


def test_a_saturated_claim_short_of_the_spec_stop_is_not_judged(short, tmp_path):
    results, rid, store, fills = short
    rows, doc = _report(tmp_path, results, rid)
    row = rows["RND 4K 0/100"]
    wrote, of = stated(row["reason"])
    assert row["reason"].startswith("not reached: ") and of == SPEC_FILLS
    assert abs(wrote - fills) <= 0.005 + 1e-9            # the simulator's count, to the two decimals written
    assert row["meets_claim"] == "not judged" and row["ratio"] == ""     # neither "meets" nor "misses", no ratio
    assert float(row["measured"]) > 0                     # the figure is still shown, with its state
    # the headline's claims: meets null and the same reason
    line = next(c for c in doc["headline_page"]["claims"] if c["what"] == "RND 4K 0/100")
    assert line["meets"] is None and line["reason"] == row["reason"]
    assert rows["RND 8K 0/100"]["meets_claim"] == "not measured"


def test_steady_reached_is_the_basis_tests_own(short, tmp_path):
    """The saturated row's "steady state reached" is WSAT's (its last window), the steady figure's is the IOPS
    test's."""
    _, rid, store, _ = short
    tests = {t["name"]: registry.decode_stored(t["name"], t["summary"]) for t in store.tests(rid)}
    wsat, iops = tests["wsat"].workloads["rnd4k-write"], tests["iops"]
    row = saturated_row(store, rid, tmp_path)
    assert row["steady_reached"] is wsat.steady_state_of_last_window.reached
    assert row["steady_figure_reached"] is iops.steady.reached
    assert (row["reached"], row["meets"]) == (False, None)


def test_the_verdict_names_wsat_stopped_short_with_the_fraction_written(short):
    results, rid, _, fills = short
    doc = json.loads(ssdpts("check", rid, "--results", str(results), "--json", check=False).stdout)
    assert doc["conformant"] is False
    found = [d for d in doc["deviations"] if d["test"] == "wsat" and d["rule"] == "duration"]
    assert len(found) == 1, doc["deviations"]
    wrote, of = stated(found[0]["evidence"], WROTE_VERDICT)
    assert of == SPEC_FILLS and abs(wrote - fills) <= 0.005 + 1e-9
    assert "24 h" in found[0]["evidence"] and "4×" in found[0]["source"]


def test_criteria_on_wsat_final_are_not_judged_before_saturation(short, tmp_path):
    """The example datacenter criteria's "WSAT final at least 20 % of fresh": not judged, never a pass."""
    results, rid, _, fills = short
    rules = tmp_path / "wsat.toml"
    text = EXAMPLE_CRITERIA.read_text()
    rule = next(block for block in text.split("[[rule]]") if "final_over_fresh" in block)
    rules.write_text('[criteria]\nname = "wsat final"\nsource = "test"\n\n[[rule]]' + rule)
    p = ssdpts("check", rid, "--results", str(results), "--criteria", str(rules), "--json", check=False)
    assert p.returncode == 1, p.stdout + p.stderr
    (judged,) = json.loads(p.stdout)["rules"]
    assert judged["status"] == "not reached" and judged["ok"] is False
    wrote, of = stated(judged["evidence"]["where"])
    assert of == SPEC_FILLS and abs(wrote - fills) <= 0.005 + 1e-9


def test_wsat_to_its_stop_is_judged_and_conformant_there(full, tmp_path):
    results, rid, store, fills = full
    assert fills >= SPEC_FILLS * (1 - 1e-3), fills         # the simulator counted 4 fills
    # the rows the report's table and headline are made of (the short run reads them from the files)
    row = saturated_row(store, rid, tmp_path)
    wrote, of = stated(row["reason"])
    assert row["reason"].startswith("reached: ") and of == SPEC_FILLS and abs(wrote - fills) <= 0.005 + 1e-9
    assert row["reached"] is True and row["meets"] is (row["measured"] >= 150000)
    (line,) = [c for c in claim_lines([row])]
    assert line.meets is row["meets"] and line.reason == row["reason"]
    verdict = json.loads(ssdpts("check", rid, "--results", str(results), "--json", check=False).stdout)
    assert not [d for d in verdict["deviations"] if d["test"] == "wsat" and d["rule"] == "duration"]


def _workload(iops: list[float], fills: float, elapsed_s: float = 600.0) -> WsatWorkload:
    """A WSAT workload of one-minute intervals, judged as run.py judges it (the profile's rule, SNIA's here)."""
    tail = iops[-5:]
    return WsatWorkload(purge=PurgeRecord("sim-purge", True, "", 0.0), rounds=len(iops), stop_reason="round limit",
                        tgbw_gb=0.0, fills=fills, elapsed_s=elapsed_s, fresh_iops=iops[0],
                        final_iops=sum(tail) / len(tail), steady_state_of_last_window=evaluate(iops), series=[])


@pytest.mark.parametrize("iops, fills, elapsed_s, reached", [
    ([500.0] * 3 + [150.0] * 6, 1.5, 600.0, True),      # left the fresh level, levelled off, after a whole fill
    ([500.0] * 3 + [150.0] * 6, 0.5, 600.0, False),     # the same before a whole fill: never-written space is spare
    ([500.0] * 9, 2.0, 600.0, False),                   # flat at the fresh level: never left it
    ([500.0] * 3 + [400.0, 300.0, 200.0, 150.0, 100.0], 2.0, 600.0, False),   # still falling
    ([500.0] * 9, 4.0, 600.0, True),                    # the spec's stop by volume, whatever the shape
    ([500.0] * 9, 2.0, 86400.0, True),                  # the spec's stop by time
])
def test_saturation_is_the_spec_stop_or_levelling_off_after_leaving_fresh(iops, fills, elapsed_s, reached):
    w = _workload(iops, fills, elapsed_s)
    assert w.saturation.reached is reached, w.saturation.how
    assert w.saturation.how.startswith("reached: " if reached else "not reached: ")
    # the verdict names any stop before the spec's, levelled off or not
    assert w.stopped_short is (fills < SPEC_FILLS and elapsed_s < 86400)
