"""A simulated run says it is simulated in every output, and names no fio where none ran (issue 39, item 2).

One `ssdpts endurance` on `sim:client` (10 simulated minutes, a few seconds of wall time) serves the module.
The truths are outside the code that labels: the engine stored with the run (`sim`: no fio process ran), the
profile's duration (10 minutes, reached on the simulated clock while the wall clock ran seconds), and the
review figures the run's own HTML report lists (its `simulated-calibration` table)."""

from __future__ import annotations

import csv
import json
import re
import time
import tomllib

import pytest
from click.testing import CliRunner

from conftest import ssdpts
from ssdpts import cli
from ssdpts._sim import SimDrive
from ssdpts.simdrive import PRESET_DIR, load_params
from ssdpts.store import Store


@pytest.fixture(scope="module")
def endurance_run(tmp_path_factory):
    """(run id, results dir, console output, wall seconds) of a 10-minute simulated endurance run."""
    results = tmp_path_factory.mktemp("simlabels") / "results"
    started = time.monotonic()
    p = ssdpts("endurance", "sim:client", "--duration", "10m", "--poll", "1m", "--rated-tbw", "300",
               "--results", str(results))
    wall = time.monotonic() - started
    rid = p.stdout.strip().splitlines()[-1]
    return rid, results, p.stdout, wall


def _endurance_lines(text: str) -> list[str]:
    """The endurance test's own lines (from its workload line on) as `show` or the console print them."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "workload rnd4k-write:" in line)
    return [line for line in lines[start:] if line.startswith("  ") or "workload" in line]


def test_show_and_console_label_simulated_time_and_name_no_fio(endurance_run):
    rid, results, console, wall = endurance_run
    assert Store.in_dir(results).run(rid)["engine"] == "sim"        # the engine record: no fio ran
    assert wall < 600                                                # 10 minutes were not wall time
    shown = ssdpts("show", rid, "--results", str(results)).stdout
    for text in (shown, console):
        lines = _endurance_lines(text)
        assert not [line for line in lines if "fio" in line], lines
        timed = [line for line in lines if re.search(r"\d[\d,.]* (s|min|minutes|hours|days)\b|/day|simulated", line)]
        # every span and rate of the test is simulated time, said on the line itself
        assert timed and all("simulated" in line for line in timed), [line for line in timed if "simulated" not in line]
        observed = next(line for line in lines if line.strip().startswith("observed"))
        assert "10.0 simulated minutes" in observed                   # the profile's 10m, on the simulated clock
        assert re.search(r"wear per day +[\d.]+ %/simulated day", "\n".join(lines))
    assert "clock   simulated" in shown


def test_show_json_and_tidy_export_carry_the_clock(endurance_run, tmp_path):
    rid, results, _, _ = endurance_run
    doc = json.loads(ssdpts("show", rid, "--json", "--results", str(results)).stdout)
    assert doc["run"]["engine"] == "sim" and doc["run"]["clock"]["simulated"] is True
    assert doc["run"]["clock"]["name"] == "simulated"
    out = tmp_path / "out"
    path = ssdpts("export", rid, "--format", "tidy-csv", "--out", str(out), "--results", str(results)).stdout.strip()
    with open(path) as f:
        assert {r["clock"] for r in csv.DictReader(f)} == {"simulated"}


def test_show_lists_the_review_figures_the_report_lists(endurance_run):
    """`show` and `show --json` list each review figure of the preset, held or not, as the HTML report's
    'Simulated drive' table does."""
    rid, results, _, _ = endurance_run
    with open(results / "reports" / rid / "tables" / "simulated-calibration.csv") as f:
        report = [(r["Review figure"], r["Preset"] == "True") for r in csv.DictReader(f)]
    assert report
    shown = ssdpts("show", rid, "--results", str(results)).stdout
    listed = [(m.group(2).split(" — ")[0], m.group(1) == "held")
              for m in re.finditer(r"^    (held|not held) +(.+?)(?:; .*)?$", shown, re.M)]
    assert sorted(listed) == sorted(report)
    held = sum(h for _, h in report)
    assert f"{held} of {len(report)} review figures held" in shown
    doc = json.loads(ssdpts("show", rid, "--json", "--results", str(results)).stdout)
    assert sorted((f["where"], f["held"]) for f in doc["simulated_review"]["figures"]) == sorted(report)


PRESETS = ("client", "enterprise", "sata-mlc", "sata-tlc")


@pytest.mark.parametrize("preset", PRESETS)
def test_info_reports_what_the_preset_models(preset):
    """`info sim:PRESET` reports the spare, TRIM, link and controller the preset's own file sets, not "none
    implied" / "not applicable"; the description's OP figure is the parameter's."""
    raw = tomllib.loads((PRESET_DIR / f"{preset}.toml").read_text())     # the preset file itself
    out = CliRunner().invoke(cli.main, ["info", f"sim:{preset}", "--json"])
    assert out.exit_code == 0, out.output
    facts = json.loads(out.stdout)["info"]["facts"]
    op = raw["capacity"]["op_percent"]
    assert facts["implied_spare"].startswith(f"{op:g} % of the user capacity")
    assert f"{raw['timing']['link_mb_s']:,.0f} MB/s" in facts["modelled_link"]
    assert f"{int(raw['timing']['ctrl_cmd_ns']):,} ns per command" in facts["modelled_controller"]
    assert facts["trim"].startswith("supported")
    # the description's OP is the parameter (client said 10 %, enterprise 22 %, against 8.5 and 24)
    assert float(re.search(r"([\d.]+) ?% OP", raw["description"]).group(1)) == op
    text = CliRunner().invoke(cli.main, ["info", f"sim:{preset}"]).stdout
    assert "not applicable" not in text and "no controller, link" not in text and "none implied" not in text


def test_the_model_takes_trim():
    """What `info` says of TRIM, from the simulator's own state: a trimmed range is no longer live."""
    d = SimDrive(load_params("client"))
    d.run_job(dict(rw="write", bs=1 << 20, iodepth=4, io_size=1 << 28))
    assert d.counters()["live_bytes"] == 1 << 28
    d.trim(0, 1 << 27)
    assert d.counters()["live_bytes"] == 1 << 27
