"""Reports of runs on several drives at once: per-drive tables equal the stored parts; single-drive
reports keep their structure; a partial run (a remote drive dropped) says so and lists the retries."""

from __future__ import annotations

import dataclasses
import random
import re
import threading
from pathlib import Path

import pytest

from conftest import TINY, LoopFactory, _can_make_devices, requires_devices, ssdpts
from report_checks import check_self_contained, read_csv
from ssdpts.engines.results import RoundOutput, aggregate
from ssdpts.pts import registry
from ssdpts.pts.windows import window_summary
from ssdpts.pts.iops.summary import IopsSummary
from ssdpts.results import SteadyResult, TrackerKey, TrackerResult
from ssdpts.report.html import write_report
from synthetic import _cell, _wl
from ssdpts.steady import evaluate
from ssdpts.store import Store
from ssdpts.targets.purge import PurgeRecord

pytestmark = pytest.mark.no_end_report    # writes the report it checks (tests/conftest.py)

TESTS = "iops,throughput,latency"


def _run(targets: list[str], results: Path, out: dict, key: str) -> None:
    p = ssdpts("run", *targets, "--profile", str(TINY), "--tests", TESTS, "--destroy-data", "--results",
               str(results), "-q")
    out[key] = p.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One parallel run on two loop devices and one single-drive run, side by side (separate databases)."""
    if _can_make_devices():
        pytest.skip(_can_make_devices())
    loops = LoopFactory()
    d = tmp_path_factory.mktemp("parallel")
    try:
        a, b, c = loops(), loops(), loops()
        ids: dict = {}
        errors: list = []

        def go(*args):
            try:
                _run(*args)
            except BaseException as e:  # re-raised below
                errors.append(e)

        threads = [threading.Thread(target=go, args=([a, b], d / "set", ids, "set")),
                   threading.Thread(target=go, args=([c], d / "one", ids, "one"))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        set_store, one_store = Store.in_dir(d / "set"), Store.in_dir(d / "one")
        set_path = write_report(set_store, ids["set"], d / "set-report", strict=True)
        one_path = write_report(one_store, ids["one"], d / "one-report", strict=True)
        yield {"a": a, "b": b, "c": c, "set": (set_store, ids["set"], set_path), "one": (one_store, ids["one"], one_path)}
    finally:
        loops.cleanup()


def _summary(store, rid, test):
    """A test's stored summary as its typed record (decoded by the registered spec)."""
    return registry.get(test).decode(next(t["summary"] for t in store.tests(rid) if t["name"] == test))


def _key(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("_")


@requires_devices
def test_header_lists_every_drive(runs):
    store, rid, path = runs["set"]
    run = store.run(rid)
    assert run["target"].kind == "set" and run["status"] == "completed"
    html = path.read_text()
    check_self_contained(path)
    assert "report section failed" not in html
    for i, dev in enumerate((runs["a"], runs["b"]), start=1):
        # the run header and every section's Device Under Test block name each drive, capacity, transport
        assert html.count(f"<dt>Drive {i}</dt><dd>{dev} — model unknown, 0.07 GB (0.06 GiB), loop</dd>") == 3
        assert f"Drive {i}: {dev} — model unknown" in html
    assert "Run status" not in html      # a completed run has no failure block


@requires_devices
def test_iops_per_drive_tables_equal_stored_parts(runs):
    store, rid, path = runs["set"]
    s = _summary(store, rid, "iops")
    window = s.steady.window_rounds
    rounds = [r for r in store.rounds(rid, "iops") if r.round in window]
    tables = path.parent / "tables"
    for dev in (runs["a"], runs["b"]):
        rows = read_csv(tables / f"iops-drive-{_key(dev)}.csv")
        assert [r["Block size"] for r in rows] == ["64K", "4K"] and list(rows[0])[1:] == ["65/35", "0/100"]
        for row in rows:
            for mix, v in list(row.items())[1:]:
                name = f"rnd_{row['Block size']}_{mix.replace('/', '-')}"
                assert float(v) == s.cells[name].parts[dev].iops
                raw = sum(r.cell(name).parts[dev].iops for r in rounds) / len(rounds)   # from the stored rounds
                assert float(v) == pytest.approx(raw, rel=1e-12)
    # the per-drive IOPS add up to the aggregate table
    agg = {r["Block size"]: r for r in read_csv(tables / "iops-table.csv")}
    per = [{r["Block size"]: r for r in read_csv(tables / f"iops-drive-{_key(d)}.csv")} for d in (runs["a"], runs["b"])]
    for bs, row in agg.items():
        for mix, v in list(row.items())[1:]:
            assert float(v) == pytest.approx(sum(float(p[bs][mix]) for p in per), rel=1e-9)
    cells = read_csv(tables / "iops-drive-cells.csv")
    assert len(cells) == 2 * len(s.cells)
    assert (path.parent / "plots" / "iops-drives-tracked.png").exists()


@requires_devices
def test_throughput_and_latency_per_drive(runs):
    store, rid, path = runs["set"]
    tables = path.parent / "tables"
    seq = _summary(store, rid, "throughput").at(128 * 1024)
    rows = read_csv(tables / "throughput-drives.csv")
    assert [(r["Block size"], r["Drive"]) for r in rows] == [("128K", runs["a"]), ("128K", runs["b"])]
    for r in rows:
        assert float(r["Read MiB/s"]) == seq.cells["seq_128K_100-0"].parts[r["Drive"]].read_mib_s
        assert float(r["Write MiB/s"]) == seq.cells["seq_128K_0-100"].parts[r["Drive"]].write_mib_s
        assert float(r["Write MB/s"]) == pytest.approx(float(r["Write MiB/s"]) * 1.048576, rel=1e-12)
    lat = _summary(store, rid, "latency").cells
    for dev in (runs["a"], runs["b"]):
        rows = read_csv(tables / f"latency-drive-{_key(dev)}.csv")
        assert {(r["Cell"], r["Direction"]) for r in rows} == {("rnd_4K_100-0", "read"), ("rnd_4K_0-100", "write")}
        for r in rows:
            part = lat[r["Cell"]].parts[dev]
            st = part.read_lat if r["Direction"] == "read" else part.write_lat
            for col, v in (("mean (µs)", st.mean_us), ("max (µs)", st.max_us), ("p99 (µs)", st.p("99")),
                           ("p99.9 (µs)", st.p("99.9")), ("p99.99 (µs)", st.p("99.99")),
                           ("p99.999 (µs)", st.p("99.999"))):
                assert float(r[col]) == v, (dev, r["Cell"], col)
    # latency is never averaged away: the aggregate max is the worst drive's
    agg = {(r["Cell"], r["Direction"]): r for r in read_csv(tables / "latency-percentiles.csv")}
    for key, r in agg.items():
        worst = max(float(x["max (µs)"]) for d in (runs["a"], runs["b"])
                    for x in read_csv(tables / f"latency-drive-{_key(d)}.csv") if (x["Cell"], x["Direction"]) == key)
        assert float(r["max (µs)"]) == pytest.approx(worst, rel=1e-12)


@requires_devices
def test_determination_table_has_per_drive_trackers_in_display_units(runs):
    store, rid, path = runs["set"]
    tables = path.parent / "tables"
    trackers = {t.key.label: t.state for t in _summary(store, rid, "iops").steady.trackers}
    rows = {r["Steady-state determination"]: r for r in read_csv(tables / "iops-steady-determination.csv")}
    for dev in (runs["a"], runs["b"]):
        label = f"rnd_4K_0-100 iops @{dev}"
        assert rows["Unit"][label] == "IOPS"
        assert float(rows["Average"][label]) == pytest.approx(trackers[label].average, rel=1e-12)
    tp = {t.key.label: t.state for t in _summary(store, rid, "throughput").at(128 * 1024).steady.trackers}
    rows = {r["Steady-state determination"]: r for r in read_csv(tables / "throughput-steady-bs128K-determination.csv")}
    label = f"seq_128K_0-100 write_bw @{runs['b']}"
    assert rows["Unit"][label] == "MiB/s"                                  # bytes/s scaled like the aggregate
    assert float(rows["Average"][label]) == pytest.approx(tp[label].average / 2**20, rel=1e-12)


@requires_devices
def test_single_drive_report_has_no_per_drive_sections(runs):
    store, rid, path = runs["one"]
    _, _, set_path = runs["set"]
    assert store.run(rid)["target"].kind == "block"
    html = path.read_text()
    assert "report section failed" not in html
    for text in ("per drive", "Drive 1", "drives tested at once", "smallest drive", "Run status"):
        assert text not in html, text
    one = {p.name for p in (path.parent / "tables").iterdir()}
    both = {p.name for p in (set_path.parent / "tables").iterdir()}
    assert not [n for n in one if "drive" in n]
    assert one == {n for n in both if "-drive" not in n}                   # same tables, minus the per-drive ones
    one_plots = {p.name for p in (path.parent / "plots").iterdir()}
    set_plots = {p.name for p in (set_path.parent / "plots").iterdir()}
    assert one_plots == {n for n in set_plots if "-drive" not in n}
    # the same headings, in the same order, once the per-drive ones are taken out
    h3 = lambda t: re.findall(r"<h3>(.*?)</h3>", t)                      # noqa: E731
    assert h3(html) == [h for h in h3(set_path.read_text()) if "per drive" not in h]


# ---------------------------------------------------------------------------------------------
# WSAT, HIR, DIRTH and CBW on two drives at once: their per-drive tables equal the stored parts

ADVANCED = "wsat,hir,dirth,cbw"


@pytest.fixture(scope="module")
def advanced(tmp_path_factory):
    if _can_make_devices():
        pytest.skip(_can_make_devices())
    loops = LoopFactory()
    d = tmp_path_factory.mktemp("parallel-advanced")
    try:
        a, b = loops(), loops()
        p = ssdpts("run", a, b, "--profile", str(TINY), "--tests", ADVANCED, "--destroy-data", "--results",
                   str(d / "r"), "-q")
        rid = p.stdout.strip().splitlines()[-1]
        store = Store.in_dir(d / "r")
        path = write_report(store, rid, d / "report", strict=True)
        summaries = {t["name"]: registry.get(t["name"]).decode(t["summary"]) for t in store.tests(rid)}
        yield {"drives": (a, b), "store": store, "rid": rid, "path": path, "summaries": summaries}
    finally:
        loops.cleanup()


def _mean(v):
    return sum(v) / len(v)


@requires_devices
def test_wsat_per_drive_table(advanced):
    store, rid, path = advanced["store"], advanced["rid"], advanced["path"]
    assert "report section failed" not in path.read_text()
    rows = read_csv(path.parent / "tables" / "wsat-drives.csv")
    assert [(r["Workload"], r["Drive"]) for r in rows] == [("rnd4k-write", d) for d in advanced["drives"]]
    rounds = store.rounds(rid, "wsat", "rnd4k-write")
    for r in rows:
        per = [x.cells[0].parts[r["Drive"]] for x in rounds if r["Drive"] in x.cells[0].parts]
        assert int(r["Intervals"]) == len(per) == len(rounds)
        assert float(r["Fresh IOPS"]) == per[0].iops
        assert float(r["Final IOPS (last 5)"]) == pytest.approx(_mean([p.iops for p in per[-5:]]), rel=1e-12)
        assert float(r["Max latency (µs)"]) == max(p.lat_max_ns for p in per) / 1000
    # the aggregate's fresh IOPS is the two drives' first intervals summed
    w = advanced["summaries"]["wsat"].workloads["rnd4k-write"]
    assert w.fresh_iops == pytest.approx(sum(float(r["Fresh IOPS"]) for r in rows), rel=1e-9)


@requires_devices
def test_hir_per_drive_table(advanced):
    store, rid, path = advanced["store"], advanced["rid"], advanced["path"]
    s = advanced["summaries"]["hir"]
    rows = read_csv(path.parent / "tables" / "hir-drives.csv")
    assert [(r["Wait state"], r["Drive"]) for r in rows] == [(ws, d) for ws in s.wait_states
                                                              for d in advanced["drives"]]
    for r in rows:
        ab = [c.parts[r["Drive"]].iops for x in store.rounds(rid, "hir", f"ws={r['Wait state']}/AB") for c in x.cells]
        cc = [c.parts[r["Drive"]].iops for x in store.rounds(rid, "hir", f"ws={r['Wait state']}/C") for c in x.cells]
        assert int(r["AB bursts"]) == len(ab) == s.wait_states[r["Wait state"]].bursts
        # as the aggregate: AB bursts after an idle (all but the first), C after the first
        assert float(r["Mean AB burst IOPS"]) == pytest.approx(_mean(ab[1:]), rel=1e-12)
        assert float(r["Mean C IOPS"]) == pytest.approx(_mean(cc[1:]), rel=1e-12)


@requires_devices
@pytest.mark.parametrize("test", ["dirth", "cbw"])
def test_demand_per_drive_table(advanced, test):
    store, rid, path = advanced["store"], advanced["rid"], advanced["path"]
    s = advanced["summaries"][test]
    window = s.steady.window_rounds
    rounds = [x for x in store.rounds(rid, test, "") if x.round in window]
    rows = read_csv(path.parent / "tables" / f"{test}-drives.csv")
    assert [(r["Point"], r["Drive"]) for r in rows] == [(p.name, d) for p in s.points for d in advanced["drives"]]
    for r in rows:
        per = [x.cell(r["Point"]).parts[r["Drive"]] for x in rounds]
        assert float(r["IOPS"]) == pytest.approx(_mean([p.iops for p in per]), rel=1e-12)
        assert float(r["Max latency (µs)"]) == max(p.lat_max_ns for p in per) / 1000
    # IOPS add up to the aggregate point
    for p in s.points:
        assert p.iops == pytest.approx(sum(float(r["IOPS"]) for r in rows if r["Point"] == p.name), rel=1e-9)


# ---------------------------------------------------------------------------------------------
# a synthetic partial run: remote drive B dropped after round 2 of IOPS, then retried

A, B = "10.0.0.11:8765:/dev/nvme0n1", "10.0.0.12:8765:/dev/nvme0n1"


def _partial_store(root: Path) -> tuple[Store, str]:
    rng = random.Random(7)
    store = Store.in_dir(root)
    size = 3_840_000_000_000
    members = [{"kind": "block", "spec": "/dev/nvme0n1", "path": "/dev/nvme0n1", "size_bytes": size,
                "logical_block_size": 512, "physical_block_size": 4096, "host": h,
                "info": {"model": f"Remote NVMe {i}", "serial": f"S{i}", "firmware": "1.0", "transport": "nvme"}}
               for i, h in enumerate(("10.0.0.11:8765", "10.0.0.12:8765"), start=1)]
    rid = store.create_run(
        target_spec="--hosts hosts.toml", target={"kind": "set", "spec": f"{A} {B}", "path": f"{A}, {B}",
                                                  "size_bytes": size, "logical_block_size": 512,
                                                  "physical_block_size": 4096,
                                                  "info": {"model": "Remote NVMe 1 + Remote NVMe 2", "transport": "set",
                                                           "members": members}},
        host={"hostname": "ctl"}, profile_name="tiny", profile={}, tests=["iops"], options={}, engine="fio-remote")
    wls = [_wl("rnd_4K_0-100", "randrw", 4096, 0, 1, 8, 1.0), _wl("rnd_4K_100-0", "randrw", 4096, 100, 1, 8, 1.0)]

    def save(phase, n, labels, total_iops):
        cells = [aggregate({lab: _cell(rng, w, total_iops * (1 + 0.01 * rng.random()), 80.0, 1.0, True)
                            for lab in labels}, w["name"]) for w in wls]
        t = 1000.0 + n
        out = RoundOutput(cells=cells, engine="fio-remote", started_at=t, ended_at=t + 1)
        tracking = {"rnd_4K_0-100 iops": cells[0].iops, **{f"rnd_4K_0-100 iops @{p}": c.iops
                                                          for p, c in cells[0].parts.items()}}
        store.save_round(rid, "iops", phase, "round", n, out, wls, tracking)

    for n in range(1, 6):
        save("", n, [A, B] if n <= 2 else [A], 50000.0)
    rounds = store.rounds(rid, "iops", "")
    nums = [r.round for r in rounds]
    trackers = []
    for key in (TrackerKey("rnd_4K_0-100"), TrackerKey("rnd_4K_0-100", part=A), TrackerKey("rnd_4K_0-100", part=B)):
        vals = [r.tracking[key.label] for r in rounds if key.label in r.tracking]
        trackers.append(TrackerResult(key, evaluate(vals, rounds=nums[:len(vals)])))
    summary = IopsSummary(purge=PurgeRecord(method="trim", snia_purge=False, command="blkdiscard", seconds=0.1, note=""),
                          steady=SteadyResult("", False, 5, nums, trackers), cells=window_summary(rounds, nums),
                          block_sizes=[4096], mixes=[0, 100])
    store.set_test(rid, "iops", "completed", registry.get("iops").encode(summary))
    store.record_step(rid, "iops", "failed-targets", "failure",
                      {"targets": {B: "ws=0 round 3: connection refused"}, "retried": False})
    store.set_run_status(rid, "partial", f"targets failed: {B} (round 3: connection refused); "
                                         f"'ssdpts resume {rid}' retries them")
    return store, rid


def test_partial_run_names_the_failed_drive(tmp_path):
    store, rid = _partial_store(tmp_path / "results")
    path = write_report(store, rid, tmp_path / "report", strict=True)
    html = path.read_text()
    assert "report section failed" not in html
    assert "Run status: PARTIAL" in html and f"1 drive failed: <strong>{B}</strong>" in html
    assert html.index("Run status: PARTIAL") < html.index('id="test-iops"')       # before any result
    rows = read_csv(path.parent / "tables" / "run-failed-targets.csv")
    assert rows == [{"Test": "iops", "Drive": B, "Reason": "ws=0 round 3: connection refused", "Retried": "False"}]
    assert f"Drive failed during this test: {B}" in html                        # in the IOPS section too
    assert "<dt>Drive 2</dt><dd>" + B + " — Remote NVMe 2, 3,840.00 GB (3,576.28 GiB), nvme, S/N S2, FW 1.0</dd>" in html
    # the dropped drive's IOPS table holds its window (rounds 1-2), the other's all five rounds
    for dev, n in ((A, 5), (B, 2)):
        rows = read_csv(path.parent / "tables" / f"iops-drive-{_key(dev)}.csv")
        assert float(rows[0]["0/100"]) == _summary(store, rid, "iops").cells["rnd_4K_0-100"].parts[dev].iops
        got = [r.cell("rnd_4K_0-100").parts[dev].iops for r in store.rounds(rid, "iops", "") if dev in r.cell("rnd_4K_0-100").parts]
        assert len(got) == n and float(rows[0]["0/100"]) == pytest.approx(sum(got) / n, rel=1e-12)


def test_retried_results_are_listed(tmp_path):
    store, rid = _partial_store(tmp_path / "results")
    store.record_step(rid, "iops", "failed-targets", "failure",
                      {"targets": {B: "ws=0 round 3: connection refused"}, "retried": True})
    first = _summary(store, rid, "iops")      # the retry's summary: the first try's shape, its own figures
    retry = dataclasses.replace(first, steady=dataclasses.replace(first.steady, reached=True), cells={
        **first.cells, "rnd_4K_0-100": dataclasses.replace(first.cells["rnd_4K_0-100"], iops=24567.5, parts={})})
    store.record_step(rid, "iops", "retry1", "retry", {"targets": [B], "summary": registry.get("iops").encode(retry),
                                                       "failed": {}})
    store.set_run_status(rid, "completed")
    path = write_report(store, rid, tmp_path / "report", strict=True)
    html = path.read_text()
    assert "Run status: PARTIAL" not in html and 'id="run-status"' in html
    assert f"Retry <strong>retry1</strong> of iops on {B}: completed" in html
    rows = {r["Result"]: r["Value"] for r in read_csv(path.parent / "tables" / "run-iops-retry1.csv")}
    assert rows == {"rnd_4K_0-100 IOPS (measurement window)": "24,567.5 IOPS"}   # the tracked cell's headline
    failed = read_csv(path.parent / "tables" / "run-failed-targets.csv")
    assert failed[0]["Drive"] == B and failed[0]["Retried"] == "True"
