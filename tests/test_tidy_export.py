"""Outputs for tools: the tidy (long) export loaded back against the stored rounds, units in the results
document and in `show`, `list` filters. One simulated run (~3 s) serves the module; the rest is store-only."""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import HERE, TINY, run_completed, ssdpts
from ssdpts import cli
from ssdpts.engines.results import CellResult, DirStats, RoundOutput, aggregate
from ssdpts.export.tidy import FIELDS, cell_metrics, tidy_records
from ssdpts.metrics import metric_of
from ssdpts.progress import _fmt
from ssdpts.results import TrackerResult
from ssdpts.records import from_data, to_data
from ssdpts.runresult.model import load_run
from ssdpts.store import RunFilter, Store

pytestmark = pytest.mark.no_end_report    # writes the report it checks (tests/conftest.py)

SIM_SMALL = f"sim:{HERE / 'profiles' / 'sim-small.toml'}"


@pytest.fixture(scope="module")
def sim_run(tmp_path_factory):
    """(run id, store, results dir) of a completed simulated run of iops and throughput (tiny profile)."""
    results = tmp_path_factory.mktemp("tidy") / "results"
    rid, store = run_completed(SIM_SMALL, results, str(TINY), "iops,throughput")
    return rid, store, results


def cli_run(*args: str, code: int = 0):
    """The CLI in this process (a subprocess costs ~2 s of imports each); `ssdpts()` where the exit path matters."""
    result = CliRunner().invoke(cli.main, list(args))
    assert result.exit_code == code, result.output
    return result


def _export(rid: str, results: Path, fmt: str, out: Path) -> Path:
    return Path(cli_run("export", rid, "--format", fmt, "--out", str(out), "--results", str(results)).stdout.strip())


def _stored(store: Store, rid: str) -> dict[tuple, float]:
    """(test, phase, kind, round, cell, metric) -> value, from the stored rounds and cells."""
    out = {}
    for test in store.tests(rid):
        for kind in ("precondition", "round"):
            for r in store.rounds(rid, test["name"], kind=kind):
                for c in r.cells:
                    for metric, value, _unit in cell_metrics(c):
                        out[(test["name"], r.phase, kind, r.round, c.name, metric)] = float(value)
    return out


def test_tidy_csv_loads_back_to_the_stored_rounds(sim_run, tmp_path):
    rid, store, results = sim_run
    path = _export(rid, results, "tidy-csv", tmp_path / "out")
    assert path.name == f"{rid}.tidy.csv"
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        assert reader.fieldnames == FIELDS
        rows = list(reader)
    got = {(r["test"], r["phase"], r["kind"], int(r["round"]), r["cell"], r["metric"]): float(r["value"]) for r in rows}
    assert len(got) == len(rows)   # one row per (round, cell, metric)
    stored = _stored(store, rid)
    assert got == stored           # every figure, exactly (floats written in full)
    assert {r["test"] for r in rows} == {"iops", "throughput"} and {r["kind"] for r in rows} == {"precondition", "round"}
    assert {r["run"] for r in rows} == {rid} and {r["drive_serial"] for r in rows} == {""}   # the simulator has none

    # spot values against the cells themselves: mixed IOPS is read + write; percentiles are metrics in ns
    r1 = store.rounds(rid, "iops")[0]
    cell = r1.cell("rnd_4K_0-100")
    key = ("iops", r1.phase, "round", r1.round, "rnd_4K_0-100")
    assert got[key + ("iops",)] == cell.read.iops + cell.write.iops == cell.write.iops
    assert got[key + ("write_lat_p99.9",)] == cell.write.percentiles["99.9"] > got[key + ("write_lat_p99",)]
    assert key + ("read_iops",) not in got   # a write-only cell has no read figures (not zeros)
    units = {r["metric"]: r["unit"] for r in rows}
    assert units["iops"] == units["write_iops"] == "IOPS" and units["read_bw"] == "B/s"
    assert all(units[m] == "ns" for m in units if "_lat_" in m or m.startswith("lat_"))
    assert units["runtime"] == "ms" and units["write_ios"] == "I/Os" and units["usr_cpu"] == "%"
    stamp = next(r["timestamp"] for r in rows if r["kind"] == "round")
    assert time.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ")

    try:
        import pandas as pd
    except ImportError:   # pandas is not a dependency; the csv module above is the check that always runs
        return
    df = pd.read_csv(path)
    tp = df[(df.test == "throughput") & (df.kind == "round") & (df.metric == "read_bw")]
    assert len(tp) == len(store.rounds(rid, "throughput")) and (tp.unit == "B/s").all()


def test_tidy_json_lines_are_the_same_records(sim_run, tmp_path):
    rid, store, results = sim_run
    path = _export(rid, results, "tidy-json", tmp_path / "out")
    assert path.name == f"{rid}.tidy.jsonl"
    lines = path.read_text().splitlines()
    records = [json.loads(line) for line in lines]   # JSON Lines: one object per line
    assert len(records) == len(_stored(store, rid))
    assert list(records[0]) == FIELDS and records[0]["drive_serial"] is None
    expected = [r.__dict__ for r in tidy_records(load_run(store, rid))]
    assert records == expected


def test_results_document_names_every_unit(sim_run):
    rid, store, results = sim_run
    doc = json.loads(cli_run("show", rid, "--json", "--results", str(results)).stdout)
    assert doc["schema"] == "ssdpts.results/3"
    iops = next(t for t in doc["tests"] if t["name"] == "iops")
    assert {t["unit"] for t in iops["summary"]["steady"]["trackers"]} == {"IOPS"}
    tp = next(t for t in doc["tests"] if t["name"] == "throughput")
    trackers = [t for b in tp["summary"]["block_sizes"] for t in b["steady"]["trackers"]]
    assert trackers and {t["unit"] for t in trackers} == {"B/s"}
    tracked = [r for r in tp["rounds"] if r["kind"] == "round"]
    assert tracked and all(set(r["tracking_units"]) == set(r["tracking"]) and set(r["tracking_units"].values())
                           == {"B/s"} for r in tracked)


def test_show_prints_display_units(sim_run):
    rid, store, results = sim_run
    text = cli_run("show", rid, "--results", str(results)).stdout
    lines = [line for line in text.splitlines() if ": avg " in line]
    assert lines and not any("e+" in line for line in lines)   # no raw bytes/s in scientific notation
    doc = json.loads(cli_run("show", rid, "--json", "--results", str(results)).stdout)
    tp = next(t for t in doc["tests"] if t["name"] == "throughput")
    tracker = tp["summary"]["block_sizes"][0]["steady"]["trackers"][0]
    label = f"{tracker['key']['cell']} {tracker['key']['metric']}"
    line = next(line for line in lines if line.strip().startswith(label + ":"))
    assert f"avg {tracker['state']['average'] / 2**20:,.1f} MiB/s," in line
    iops_line = next(line for line in lines if " iops: avg " in line)
    assert " IOPS, range " in iops_line


def test_console_shows_each_drives_metric_in_its_own_unit():
    """A remote drive's label has ':' and '@' in it; its latency is µs, not IOPS."""
    assert metric_of("rnd_4K_0-100 lat_mean @127.0.0.1:8765:/dev/loop0") == "lat_mean"
    assert _fmt(93276.0, "rnd_4K_0-100 lat_mean @127.0.0.1:8765:/dev/loop0") == "93.3 µs"
    assert _fmt(886307000.0, "seq_128K_100-0 read_bw @/dev/nvme1n1") == "845.2 MiB/s"
    assert _fmt(51234.4, "rnd_4K_0-100 iops") == "51,234 IOPS"


def _cell(name: str, iops: float, lat_ns: float) -> CellResult:
    read = DirStats(ios=int(iops), bytes=int(iops) * 4096, iops=iops, bw_bytes=iops * 4096, lat_mean_ns=lat_ns,
                    lat_max_ns=2 * lat_ns, percentiles={"99.9": 1.5 * lat_ns})
    return CellResult(name=name, read=read, write=DirStats(), runtime_ms=1000.0)


def _member(path: str, serial: str, host: str = "") -> dict:
    return {"kind": "block", "path": path, "host": host, "info": {"model": "Lab NVMe 3.84TB", "serial": serial}}


def _create(store: Store, *, model: str | None, serial: str | None, profile: str, members=(), status="completed"):
    info = {"model": model, "serial": serial} | ({"members": list(members)} if members else {})
    rid = store.create_run(target_spec="x", target={"kind": "set" if members else "block", "info": info}, host={},
                           profile_name=profile, profile={}, tests=["iops"], options={}, engine="fio")
    store.set_run_status(rid, status)
    return rid


def test_tidy_records_of_a_parallel_run_carry_each_drives_serial(tmp_path):
    store = Store.in_dir(tmp_path)
    rid = _create(store, model="Lab NVMe 3.84TB + Lab NVMe 3.84TB", serial=None, profile="p",
                  members=[_member("/dev/nvme0n1", "S1"), _member("/dev/nvme0n1", "S2", host="10.0.0.2:8765")])
    parts = {"/dev/nvme0n1": _cell("rnd_4K_100-0", 1000.0, 80_000.0),
             "10.0.0.2:8765:/dev/nvme0n1": _cell("rnd_4K_100-0", 3000.0, 40_000.0)}
    store.save_round(rid, "iops", "", "round", 1, RoundOutput(cells=[aggregate(parts, "rnd_4K_100-0")], engine="fio",
                                                              started_at=1.0e9, ended_at=1.0e9 + 1.25), [{}])
    recs = {(r.drive, r.metric): r for r in tidy_records(load_run(store, rid))}
    assert recs[("", "iops")].value == 4000.0 and recs[("", "iops")].drive_serial is None
    assert recs[("/dev/nvme0n1", "iops")].value == 1000.0 and recs[("/dev/nvme0n1", "iops")].drive_serial == "S1"
    remote = recs[("10.0.0.2:8765:/dev/nvme0n1", "read_lat_p99.9")]
    assert remote.value == 60_000.0 and remote.unit == "ns" and remote.drive_serial == "S2"
    assert recs[("", "iops")].timestamp == "2001-09-09T01:46:41.250Z"


def test_list_filters(tmp_path):
    results = tmp_path / "results"
    store = Store.in_dir(results)
    a = _create(store, model="Samsung SSD 980 PRO 1TB", serial="S5GX", profile="pts-enterprise")
    b = _create(store, model="KIOXIA KCD8 100%", serial="Y2R0", profile="quick", status="failed")
    c = _create(store, model=None, serial=None, profile="quick", members=[_member("/dev/nvme1n1", "Z9")])

    def ids(**kw) -> list[str]:
        return [r["id"] for r in store.runs(RunFilter(**kw))]

    assert ids() == [a, b, c]
    assert ids(status="failed") == [b] and ids(status="running") == []
    assert ids(model="samsung") == [a] and ids(model="%") == [b]   # any case; '%' is a character, not a wildcard
    assert ids(serial="S5GX") == [a] and ids(serial="Z9") == [c] and ids(serial="S5G") == []
    assert ids(profile="quick") == [b, c] and ids(profile="quick", status="completed") == [c]
    assert ids(since=time.time() + 3600) == [] and ids(since=0.0) == [a, b, c]

    listed = json.loads(cli_run("list", "--results", str(results), "--model", "kioxia", "--json").stdout)
    assert [(r["id"], r["model"], r["serial"]) for r in listed] == [(b, "KIOXIA KCD8 100%", "Y2R0")]
    today = time.strftime("%Y-%m-%d")
    out = cli_run("list", "--results", str(results), "--since", today, "--profile", "quick").stdout
    assert b in out and c in out and a not in out
    assert cli_run("list", "--results", str(results), "--serial", "nope").stdout.strip() == "no runs match"
    bad = cli_run("list", "--results", str(results), "--since", "last week", code=2)
    assert "--since" in bad.stderr and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def test_export_of_an_unknown_run_writes_nothing(tmp_path):
    results = tmp_path / "results"
    Store.in_dir(results)
    out = tmp_path / "out"
    p = ssdpts("export", "nope", "--format", "tidy-json", "--out", str(out), "--results", str(results), check=False)
    assert p.returncode != 0 and "no run 'nope'" in p.stderr and "Traceback" not in p.stderr
    assert not out.exists()


def test_a_tracker_stored_without_unit_gets_it_from_its_metric():
    """Summaries stored before schema 3 of the results document read back with the unit of their metric."""
    old = {"key": {"cell": "seq_128K_0-100", "metric": "write_bw", "part": "/dev/nvme1n1"},
           "state": {"reached": True, "rule": "snia", "window": 5, "average": 6.7e8}}
    tracker = from_data(TrackerResult, old)
    assert tracker.unit == "B/s" and to_data(tracker)["unit"] == "B/s"
    assert from_data(TrackerResult, {**old, "key": {"cell": "rnd_4K_0-100", "metric": "lat_mean"}}).unit == "ns"
