"""End-to-end runs of IOPS, Throughput and Latency on real block devices (loop with direct I/O, zram)."""

import json

import pytest

from conftest import assert_no_stall, requires_devices, ssdpts
from ssdpts.pts import registry
from ssdpts.results import TrackerKey
from ssdpts.store import Store

pytestmark = pytest.mark.no_end_report    # reads no end-of-run report (tests/conftest.py)


def run_id_of(p) -> str:
    return p.stdout.strip().splitlines()[-1]


def summary_of(test: dict):
    """A stored test's typed summary, decoded by its registered spec."""
    return registry.get(test["name"]).decode(test["summary"])


@requires_devices
def test_quick_run_of_all_three_tests_on_loop(loopdev, results, tiny):
    p = ssdpts("run", loopdev, "--profile", tiny, "--destroy-data", "--purge", "trim", "--results", str(results), "-q")
    rid = run_id_of(p)
    store = Store.in_dir(results)
    run = store.run(rid)
    assert run["status"] == "completed"
    assert_no_stall(results, rid)
    assert run["host"].fio_version.startswith("fio-") and run["host"].cpu_cores >= 1
    assert run["target"].kind == "block" and run["target"].transport == "loop"
    tests = {t["name"]: t for t in store.tests(rid)}
    assert set(tests) == {"iops", "throughput", "latency"} and all(t["status"] == "completed" for t in tests.values())

    # IOPS: precondition stored, 5..6 rounds of the 2x2 matrix, window averages equal the stored cells
    pre = store.rounds(rid, "iops", kind="precondition")
    assert len(pre) == 1 and "rw=write" in pre[0].job_text and "io_size=" in pre[0].job_text
    rounds = store.rounds(rid, "iops")
    assert [r.round for r in rounds] == list(range(1, len(rounds) + 1)) and 5 <= len(rounds) <= 6
    assert all(len(r.cells) == 4 for r in rounds)
    for r in rounds:
        assert "norandommap=1" in r.job_text and r.command[0].endswith("fio")
        assert "ioengine=io_uring" in r.job_text and "thread=1" in r.job_text   # libaio loses completions on loop (docs/testing.md)
        assert r.tracking["rnd_4K_0-100 iops"] == pytest.approx(r.cell("rnd_4K_0-100").iops)
        assert r.cell("rnd_4K_0-100").write.iops > 0 and r.cell("rnd_4K_0-100").read.iops == 0
        mixed = r.cell("rnd_64K_65-35")
        assert mixed.iops == pytest.approx(mixed.read.iops + mixed.write.iops)   # R + W, not a weighted mean
        assert r.gap_before_ms is not None      # chained after preconditioning / the previous round
    summary = summary_of(tests["iops"])
    window = summary.steady.window_rounds
    assert window == [r.round for r in rounds][-5:]
    expect = sum(r.cell("rnd_4K_0-100").iops for r in rounds if r.round in window) / 5
    assert summary.iops(4096, 0) == pytest.approx(expect, rel=1e-3)
    assert summary.purge.method == "trim" and summary.purge.snia_purge is False
    trackers = summary.steady.trackers
    assert {t.key for t in trackers} == {TrackerKey("rnd_4K_0-100", "iops"), TrackerKey("rnd_64K_65-35", "iops")}
    assert summary.steady.reached == all(t.state.reached for t in trackers)

    # Throughput: per block size its own purge + WIPC at that size, read and write bandwidth tracked
    tp = summary_of(tests["throughput"]).at(128 * 1024)
    assert tp.read_mib_s > 0 and tp.write_mib_s > 0
    assert tp.read_mb_s == pytest.approx(tp.read_mib_s * 1.048576)
    assert tp.purge.method == "trim" and tp.steady.phase == "bs=128K"
    tp_rounds = store.rounds(rid, "throughput", "bs=128K")
    expect = sum(r.cell(tp.read_cell).read.bw_bytes for r in tp_rounds if r.round in tp.steady.window_rounds)
    assert tp.read_mib_s == pytest.approx(expect / len(tp.steady.window_rounds) / 2**20, rel=1e-9)
    assert store.step(rid, "throughput", "purge:bs=128K")["method"] == "trim"
    assert "bs=131072" in store.rounds(rid, "throughput", "bs=128K", kind="precondition")[0].job_text

    # Latency: TC1/QD1, percentiles from merged histograms
    lat = summary_of(tests["latency"]).cells["rnd_4K_0-100"]
    assert lat.workload.threads == 1 and lat.workload.iodepth == 1
    w = lat.write_lat
    assert lat.read_lat is None and w.percentiles_from == "histogram"
    assert 0 < w.mean_us <= w.p("99") <= w.p("99.9") <= w.p("99.99") <= w.p("99.999")
    assert w.max_us >= w.mean_us

    # the documented JSON and the text view
    doc = json.loads(ssdpts("show", rid, "--json", "--results", str(results)).stdout)
    assert doc["schema"] == "ssdpts.results/3" and doc["run"]["id"] == rid
    assert [t["name"] for t in doc["tests"]] == ["iops", "throughput", "latency"]
    assert [t["summary"]["schema"] for t in doc["tests"]] == ["ssdpts.iops/1", "ssdpts.throughput/1", "ssdpts.latency/1"]
    assert summary_of(doc["tests"][1]).at(128 * 1024).read_mib_s == tp.read_mib_s   # JSON reads back as stored
    text = ssdpts("show", rid, "--results", str(results)).stdout
    assert "IOPS (read + write)" in text and "MiB/s" in text and "p99.99" in text
    assert rid in ssdpts("list", "--results", str(results)).stdout


@requires_devices
def test_iops_on_zram(zram, results, tiny):
    p = ssdpts("run", zram, "--profile", tiny, "--tests", "iops", "--destroy-data", "--results", str(results), "-q")
    rid = run_id_of(p)
    store = Store.in_dir(results)
    assert store.run(rid)["status"] == "completed"
    assert_no_stall(results, rid)
    assert store.run(rid)["target"].transport == "zram"
    assert "ioengine=io_uring" in store.rounds(rid, "iops")[0].job_text     # ioengine = auto (docs/bench.md)
    summary = summary_of(store.tests(rid)[0])
    assert summary.purge.method == "trim"
    assert summary.cells and all(c.iops > 0 for c in summary.cells.values())


@requires_devices
def test_file_target_is_created_sized_and_reusable(tmp_path, results, tiny):
    shm = tmp_path  # the file lives in the test's own directory
    f = shm / "scratch.img"
    p = ssdpts("run", str(f), "--size", "32M", "--tests", "latency", "--profile", tiny, "--results", str(results), "-q")
    assert f.stat().st_size == 32 * 2**20
    store = Store.in_dir(results)
    assert store.run(run_id_of(p))["status"] == "completed"
    assert_no_stall(results, run_id_of(p))
    assert summary_of(store.tests(run_id_of(p))[0]).purge.method == "file-recreate"
    # a second run on the file ssdpts created needs no consent
    ssdpts("run", str(f), "--tests", "latency", "--profile", tiny, "--results", str(results), "-q")
    # a file that is not ours does
    foreign = shm / "precious.db"
    foreign.write_bytes(b"precious" * 1000)
    p = ssdpts("run", str(foreign), "--tests", "latency", "--profile", tiny, "--results", str(results), check=False)
    assert p.returncode == 2 and "not created by ssdpts" in p.stderr
    assert foreign.read_bytes() == b"precious" * 1000
