"""Several simulated drives in one run (as several real drives are tested in lock-step): one simulated drive per
target with its own state, each drive's results as a one-drive run of its preset gives them, their aggregate,
checkpoints per drive, and resume.

The truths: a one-drive run of the same preset, profile and seed (the simulator is deterministic, so each drive's
results are compared exactly), and each drive's own counters (`ssdpts.simdrive.truth`) read from its checkpoint,
never from the results."""

from __future__ import annotations

import hashlib

import pytest

from conftest import HERE, TINY, ssdpts
from ssdpts.runner import lifecycle
from ssdpts._sim import SimDrive
from ssdpts.errors import SsdptsError
from ssdpts.simdrive.truth import truth
from ssdpts.store import Store
from ssdpts.targets.sim import SimTarget

pytestmark = pytest.mark.no_end_report    # reads no end-of-run report (tests/conftest.py)

CLIENT = f"sim:{HERE / 'profiles' / 'sim-small.toml'}"                   # 1 GiB sim:client
ENTERPRISE = f"sim:{HERE / 'profiles' / 'sim-small-enterprise.toml'}"    # 1 GiB sim:enterprise
TESTS = ("iops", "throughput")
SEED = 7


def _run(results, *targets) -> str:
    p = ssdpts("run", *targets, "--profile", str(TINY), "--tests", ",".join(TESTS), "--seed", str(SEED),
               "--destroy-data", "--results", str(results), "-q")
    return p.stdout.strip().splitlines()[-1]


def _figures(cell) -> tuple:
    """Everything a cell's result says, as exact numbers (latency percentiles included)."""
    return tuple((d.ios, d.bytes, d.iops, d.bw_bytes, d.lat_mean_ns, d.lat_max_ns, tuple(sorted(d.percentiles.items())))
                 for d in (cell.read, cell.write)) + (cell.runtime_ms,)


def _rounds(store: Store, rid: str) -> list:
    return [r for t in TESTS for kind in ("precondition", "round") for r in store.rounds(rid, t, kind=kind)]


def _drive_truth(results, checkpoint: dict):
    return truth(SimDrive.restore((results / "sim" / checkpoint["file"]).read_bytes()))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    results = tmp_path_factory.mktemp("simpar") / "results"
    both = _run(results, CLIENT, ENTERPRISE)
    alone = {CLIENT: _run(results, CLIENT), ENTERPRISE: _run(results, ENTERPRISE)}
    return results, both, alone


def test_each_drive_of_a_two_drive_run_equals_its_one_drive_run(runs):
    results, both, alone = runs
    store = Store.in_dir(results)
    run = store.run(both)
    assert run["status"] == "completed" and run["target"].kind == "set" and run["engine"] == "sim"
    labels = {CLIENT: "sim:sim-small", ENTERPRISE: "sim:sim-small-enterprise"}
    pair = _rounds(store, both)
    assert pair
    for spec, label in labels.items():
        single = _rounds(store, alone[spec])
        assert [(r.test, r.kind, r.round) for r in single] == [(r.test, r.kind, r.round) for r in pair]
        for r2, r1 in zip(pair, single):
            for c2, c1 in zip(r2.cells, r1.cells):
                assert set(c2.parts) == set(labels.values())
                assert _figures(c2.parts[label]) == _figures(c1), (r2.test, r2.round, c2.name, label)
    # the two presets really differ (else the comparison above could not tell the drives apart)
    cell = pair[-1].cells[0]
    assert cell.parts[labels[CLIENT]].iops != cell.parts[labels[ENTERPRISE]].iops


def test_the_aggregate_is_the_sum_and_the_summaries_keep_each_drive(runs):
    from ssdpts.pts import registry

    results, both, _ = runs
    store = Store.in_dir(results)
    for r in _rounds(store, both):
        for c in r.cells:
            parts = list(c.parts.values())
            assert c.read.ios == sum(p.read.ios for p in parts) and c.write.bytes == sum(p.write.bytes for p in parts)
            assert c.iops == pytest.approx(sum(p.iops for p in parts), rel=1e-12)
            assert c.bw_bytes == pytest.approx(sum(p.bw_bytes for p in parts), rel=1e-12)
            assert c.lat_max_ns == max(p.lat_max_ns for p in parts)
            # what the two drives' counters saw of the cell: the results' bytes, on two devices
            assert (c.stimulus.write_bytes, c.stimulus.read_bytes, c.stimulus.devices) == \
                (c.write.bytes, c.read.bytes, 2)
    summaries = {t["name"]: registry.get(t["name"]).decode(t["summary"]) for t in store.tests(both)}
    cell = summaries["iops"].cells["rnd_4K_0-100"]
    assert set(cell.parts) == {"sim:sim-small", "sim:sim-small-enterprise"}
    assert cell.iops == pytest.approx(sum(v.iops for v in cell.parts.values()))


def test_each_drive_s_truth_matches_its_own_results(runs):
    results, both, alone = runs
    store = Store.in_dir(results)
    members = store.checkpoint(both)["members"]
    rounds = _rounds(store, both)
    for (spec, single), part, label in zip(alone.items(), members, ("sim:sim-small", "sim:sim-small-enterprise")):
        mine = _drive_truth(results, part)
        # the drive's own counters: every byte its results say it wrote and read, and nothing of the other drive's
        assert mine.host_write_bytes == sum(c.parts[label].write.bytes for r in rounds for c in r.cells)
        assert mine.host_read_bytes == sum(c.parts[label].read.bytes for r in rounds for c in r.cells)
        # ... and the very drive state a one-drive run of its preset ends in (NAND writes, GC, wear, clock)
        assert mine == _drive_truth(results, store.checkpoint(single))
    assert len({m["file"] for m in members}) == 2


def test_the_same_preset_twice_is_two_drives_with_names_of_their_own(tmp_path):
    p = ssdpts("run", CLIENT, CLIENT, "--profile", str(TINY), "--tests", "throughput", "--seed", str(SEED),
               "--destroy-data", "--results", str(tmp_path), "-q")
    store = Store.in_dir(tmp_path)
    rid = p.stdout.strip().splitlines()[-1]
    rounds = store.rounds(rid, "throughput")
    assert rounds and all(set(c.parts) == {"sim:sim-small#1", "sim:sim-small#2"} for r in rounds for c in r.cells)
    for c in (c for r in rounds for c in r.cells):     # the same preset and seeds: the same results, drive by drive
        assert _figures(c.parts["sim:sim-small#1"]) == _figures(c.parts["sim:sim-small#2"])


def test_a_simulated_and_a_real_drive_together_are_refused(tmp_path):
    image = tmp_path / "drive.img"
    p = ssdpts("run", CLIENT, str(image), "--size", "64M", "--profile", str(TINY), "--tests", "latency",
               "--destroy-data", "--results", str(tmp_path / "r"), check=False)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1
    assert lines[0].startswith("ssdpts: error: a simulated drive cannot be tested in parallel with real ones; ")
    assert not image.exists() and not (tmp_path / "r" / "ssdpts.db").exists()


def _start(results):
    return lifecycle.start([CLIENT, ENTERPRISE], results_dir=results, profile_name=str(TINY), tests=["iops"],
                        size=None, destroy_data=True, purge_method="auto", quiet=True, seed=SEED)


def test_an_interrupted_two_drive_run_resumes_on_both_drives_states(tmp_path, monkeypatch):
    monkeypatch.setattr(SimTarget, "CHECKPOINT_EVERY_S", 0.0)   # a checkpoint with every committed round
    a = _start(tmp_path / "a")
    store_a = Store.in_dir(tmp_path / "a")
    uninterrupted = [[m["sha256"] for m in c["members"]] for c in store_a.checkpoints(a)]
    assert len(uninterrupted) >= 4

    original, calls = Store.save_round, {"n": 0}

    def crashing(self, *args, **kw):      # interrupted at the fourth saved round, before it is committed
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return original(self, *args, **kw)

    monkeypatch.setattr(Store, "save_round", crashing)
    with pytest.raises(SsdptsError, match="interrupted"):
        _start(tmp_path / "b")
    monkeypatch.setattr(Store, "save_round", original)
    store_b = Store.in_dir(tmp_path / "b")
    b = store_b.runs()[0]["id"]
    done = len(store_b.checkpoints(b))
    committed = store_b.checkpoint(b)
    for part, digest in zip(committed["members"], uninterrupted[done - 1]):    # each drive's file, as committed
        assert hashlib.sha256((tmp_path / "b" / "sim" / part["file"]).read_bytes()).hexdigest() == digest
    lifecycle.resume(b, results_dir=tmp_path / "b", quiet=True)
    assert store_b.run(b)["status"] == "completed"
    # every later round lands on the same two drive states as without the interruption, and the same results
    assert [[m["sha256"] for m in c["members"]] for c in store_b.checkpoints(b)] == uninterrupted
    assert [[_figures(p) for c in r.cells for p in c.parts.values()] for r in store_b.rounds(b, "iops")] == \
        [[_figures(p) for c in r.cells for p in c.parts.values()] for r in store_a.rounds(a, "iops")]
    assert len(list((tmp_path / "b" / "sim").glob("*.state"))) == 2     # one per drive: older ones removed


def test_the_report_of_several_simulated_drives_says_they_are_simulated(runs, tmp_path):
    from ssdpts.report.headline import simulated_drive

    results, both, _ = runs
    store = Store.in_dir(results)
    sim = simulated_drive(store, store.run(both))
    assert sim is not None and sim.preset.split(" + ") == [CLIENT[4:], ENTERPRISE[4:]]
    ssdpts("report", both, "--results", str(results), "--out", str(tmp_path))
    page = (tmp_path / "report.html").read_text()
    assert 'id="simulated"' in page and "Simulated drive — not the drive it imitates" in page
