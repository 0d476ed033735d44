"""Metadata that must be true: purge labels, deviations, the simulated drive's resume state, write cache,
health failures, remote targets, claimed vs measured."""

from __future__ import annotations

import pytest

from conftest import HERE, TINY, run_completed
from ssdpts import runner
from ssdpts.deviations import Deviation
from ssdpts.errors import SsdptsError
from ssdpts.store import Store
from ssdpts.targets import purge as purge_mod
from ssdpts.targets.base import Target

SIM_SMALL = f"sim:{HERE / 'profiles' / 'sim-small.toml'}"


# --- purge ---------------------------------------------------------------------------------------------

def test_file_target_purge_is_never_a_snia_purge(tmp_path):
    f = tmp_path / "t.img"
    f.write_bytes(b"\0" * 4096)
    rec = purge_mod.purge(Target(kind="file", spec=str(f), path=str(f), size_bytes=1 << 20), "auto")
    assert rec.method == "file-recreate" and rec.snia_purge is False and "not a SNIA purge" in rec.note


def test_file_run_records_the_purge_as_a_deviation(tmp_path):
    rid, store = run_completed(str(tmp_path / "t.img"), tmp_path / "r", str(TINY), "latency", "--size", "32M")
    devs = store.deviations(rid)["latency"]
    assert [d.rule for d in devs] == ["purge-not-snia"]
    assert "file-recreate" in devs[0].evidence and "PTS 2.0.2" in devs[0].source


def test_auto_purge_ending_in_trim_is_a_deviation(loopdev, tmp_path):
    rid, store = run_completed(loopdev, tmp_path / "r", str(TINY), "latency", "--purge", "auto")
    assert store.step(rid, "latency", "purge:")["method"] == "trim"
    assert store.deviations(rid, "latency")["latency"][0].rule == "purge-not-snia"
    assert "--purge auto used trim" in store.deviations(rid, "latency")["latency"][0].evidence


@pytest.mark.parametrize("printed", ["", "not json at all", '{"nvme0": {"sprog": 65535}}', "[1, 2]"])
def test_unreadable_sanitize_log_is_a_failure(monkeypatch, printed):
    monkeypatch.setattr(purge_mod, "_run", lambda cmd, timeout=0: printed)
    with pytest.raises(SsdptsError, match="cannot read the NVMe sanitize log"):
        purge_mod._wait_sanitize("/dev/nvme0", timeout=5)


@pytest.mark.parametrize("printed, status", [('{"sstat": 257}', 1), ('{"nvme0": {"sstat": 0, "sprog": 65535}}', 0),
                                             ('{"sstat": 3}', 3)])
def test_sanitize_status_is_read_from_the_log(printed, status):
    assert purge_mod.sanitize_status(printed, "/dev/nvme0") == status


def test_deviations_are_typed_records_in_the_store(tmp_path):
    store = Store.in_dir(tmp_path)
    rid = store.create_run(target_spec="x", target={}, host={}, profile_name="p", profile={}, tests=["iops"],
                           options={}, engine="fio")
    d = Deviation("write-cache", "enabled, profile wants disabled", "PTS 2.0.2 2.1.1")
    store.record_deviation(rid, "", d)
    store.record_deviation(rid, "", d)                       # recorded once
    store.record_deviation(rid, "iops", Deviation("purge-not-snia", "trim", "s"))
    assert store.deviations(rid) == {"": [d], "iops": [Deviation("purge-not-snia", "trim", "s")]}
    assert store.deviations(rid, "iops") == {"iops": [Deviation("purge-not-snia", "trim", "s")]}


# --- the simulated drive: resume continues from exactly the committed state ------------------------------

def _start(results, **kw):
    return runner.start(SIM_SMALL, results_dir=results, profile_name=str(TINY), tests=["latency"], size=None,
                        destroy_data=True, purge_method="auto", quiet=True, seed=11, **kw)


@pytest.mark.parametrize("crash", ["before-commit", "after-commit"])
def test_sim_resume_state_equals_an_uninterrupted_runs(tmp_path, monkeypatch, crash):
    a = _start(tmp_path / "a")
    store_a = Store.in_dir(tmp_path / "a")
    uninterrupted = [c["sha256"] for c in store_a.checkpoints(a)]
    assert len(uninterrupted) >= 7          # purge, WIPC, >= 5 rounds: one checkpoint each

    original, calls = Store.save_round, {"n": 0}

    def crashing(self, *args, **kw):        # kill the run at its third round (WIPC is the first save)
        calls["n"] += 1
        if calls["n"] == 4:
            if crash == "after-commit":       # committed, but older state files not yet removed
                original(self, *args, **kw)
            raise KeyboardInterrupt
        return original(self, *args, **kw)

    monkeypatch.setattr(Store, "save_round", crashing)
    with pytest.raises(SsdptsError, match="interrupted"):
        _start(tmp_path / "b")
    monkeypatch.setattr(Store, "save_round", original)
    store_b = Store.in_dir(tmp_path / "b")
    b = store_b.runs()[0]["id"]
    committed = store_b.checkpoint(b)
    done = len(store_b.checkpoints(b))
    assert done == (5 if crash == "after-commit" else 4)
    # the state a resume starts from is the uninterrupted run's state at the same commit
    assert committed["sha256"] == uninterrupted[done - 1]
    state = (tmp_path / "b" / "sim" / committed["file"]).read_bytes()
    import hashlib

    assert hashlib.sha256(state).hexdigest() == uninterrupted[done - 1]
    runner.resume(b, results_dir=tmp_path / "b", quiet=True)
    # ... and every later round lands on the same drive state as without the interruption
    assert [c["sha256"] for c in store_b.checkpoints(b)] == uninterrupted
    assert len(list((tmp_path / "b" / "sim").glob("*.state"))) == 1
