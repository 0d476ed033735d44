"""Metadata that must be true: purge labels, deviations, the simulated drive's resume state, write cache,
health failures, remote targets, claimed vs measured."""

from __future__ import annotations

import json

import hashlib

import pytest

import ssdpts.health as health
from conftest import HERE, TINY, TINY_WRITES, LoopFactory, _can_make_devices, run_completed
from ssdpts.runner import lifecycle, testrun
from ssdpts.deviations import Deviation
from ssdpts.errors import SsdptsError
from ssdpts.health.parse import parse_smartctl
from ssdpts.pts import registry
from ssdpts.pts.fresh_peak.summary import FreshPeakSummary, PeakResult
from ssdpts.pts.iops.summary import IopsSummary
from ssdpts.results import CellWindow, Latency, SteadyResult
from ssdpts.pts.throughput.summary import BlockSizeResult, ThroughputSummary
from ssdpts.report.claimed import claim_rows
from ssdpts.store import Store
from ssdpts.targets import purge as purge_mod
from ssdpts.targets import writecache
from ssdpts.targets.base import Target
from ssdpts.targets.purge import PurgeRecord
from ssdpts.targets.sim import SimTarget
from ssdpts.workload import Workload

pytestmark = pytest.mark.no_end_report    # reads no end-of-run report (tests/conftest.py)

SIM_SMALL = f"sim:{HERE / 'profiles' / 'sim-small.toml'}"


# --- purge ---------------------------------------------------------------------------------------------

def test_file_target_purge_is_never_a_snia_purge(tmp_path):
    f = tmp_path / "t.img"
    f.write_bytes(b"\0" * 4096)
    rec = purge_mod.purge(Target(kind="file", spec=str(f), path=str(f), size_bytes=1 << 20), "auto")
    assert rec.method == "file-recreate" and rec.snia_purge is False and "not a SNIA purge" in rec.note


def test_file_run_records_the_purge_as_a_deviation(tmp_path):
    rid, store = run_completed(str(tmp_path / "t.img"), tmp_path / "r", TINY_WRITES, "latency", "--size", "32M")
    devs = store.deviations(rid)["latency"]
    assert [d.rule for d in devs] == ["purge-not-snia"]
    assert "file-recreate" in devs[0].evidence and "PTS 2.0.2" in devs[0].source


@pytest.fixture(scope="module")
def loop_run(tmp_path_factory):
    """One latency run on a loop device with `--purge auto` and `--set-write-cache`, read by the purge and the
    write-cache tests (each option writes its own step and deviation): (run id, store)."""
    if _can_make_devices():
        pytest.skip(_can_make_devices())
    loops = LoopFactory()
    try:
        yield run_completed(loops(64 * 2**20), tmp_path_factory.mktemp("loop") / "r", TINY_WRITES, "latency",
                            "--purge", "auto", "--set-write-cache")
    finally:
        loops.cleanup()


def test_auto_purge_ending_in_trim_is_a_deviation(loop_run):
    rid, store = loop_run
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
    return lifecycle.start(SIM_SMALL, results_dir=results, profile_name=str(TINY), tests=["latency"], size=None,
                        destroy_data=True, purge_method="auto", quiet=True, seed=11, **kw)


def _interrupted_at_fourth_save(results, monkeypatch, commit_first: bool):
    """A simulated run interrupted (KeyboardInterrupt) at its fourth saved round, that round committed
    first or not: its store and run id."""
    original, calls = Store.save_round, {"n": 0}

    def crashing(self, *args, **kw):
        calls["n"] += 1
        if calls["n"] == 4:
            if commit_first:
                original(self, *args, **kw)
            raise KeyboardInterrupt
        return original(self, *args, **kw)

    monkeypatch.setattr(Store, "save_round", crashing)
    with pytest.raises(SsdptsError, match="interrupted"):
        _start(results)
    monkeypatch.setattr(Store, "save_round", original)
    store = Store.in_dir(results)
    return store, store.runs()[0]["id"]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> list[str]:
    """The checkpoints' sha256 of one uninterrupted simulated run, a checkpoint with every committed round
    (both crash points below compare with it)."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(SimTarget, "CHECKPOINT_EVERY_S", 0.0)
        results = tmp_path_factory.mktemp("uninterrupted")
        a = _start(results)
        return [c["sha256"] for c in Store.in_dir(results).checkpoints(a)]


@pytest.mark.parametrize("crash", ["before-commit", "after-commit"])
def test_sim_resume_state_equals_an_uninterrupted_runs(tmp_path, monkeypatch, crash, uninterrupted):
    assert len(uninterrupted) >= 7          # purge, WIPC, >= 5 rounds: one checkpoint each
    monkeypatch.setattr(SimTarget, "CHECKPOINT_EVERY_S", 0.0)   # a checkpoint with every committed round

    # killed at its third round (WIPC is the first save); after-commit: committed, older state files not removed
    store_b, b = _interrupted_at_fourth_save(tmp_path / "b", monkeypatch, commit_first=crash == "after-commit")
    committed = store_b.checkpoint(b)
    done = len(store_b.checkpoints(b))
    assert done == (5 if crash == "after-commit" else 4)
    # the state a resume starts from is the uninterrupted run's state at the same commit
    assert committed["sha256"] == uninterrupted[done - 1]
    state = (tmp_path / "b" / "sim" / committed["file"]).read_bytes()
    assert hashlib.sha256(state).hexdigest() == uninterrupted[done - 1]
    lifecycle.resume(b, results_dir=tmp_path / "b", quiet=True)
    # ... and every later round lands on the same drive state as without the interruption
    assert [c["sha256"] for c in store_b.checkpoints(b)] == uninterrupted
    assert len(list((tmp_path / "b" / "sim").glob("*.state"))) == 1


# --- write cache: applied with consent, restored, otherwise a deviation ---------------------------------



class FakeDrive:
    """A command runner standing in for nvme-cli / hdparm / sdparm on one drive with a cache bit."""

    def __init__(self, tool: str, on: bool, fail_set: bool = False):
        self.tool, self.on, self.fail_set, self.calls = tool, on, fail_set, []

    def __call__(self, cmd: list[str]) -> tuple[int, str]:
        self.calls.append(" ".join(cmd))
        if cmd[:2] == ["nvme", "set-feature"] or cmd[0] == "hdparm" and cmd[1] != "-W" or "--set" in cmd:
            if self.fail_set:
                return 1, "NVMe status: INVALID_FIELD: A reserved coded value or an unsupported value (0x2)"
            self.on = cmd[-2:] == ["-v", "1"] or cmd[1] == "-W1" or "WCE=1" in cmd
            return 0, ""
        if cmd[:2] == ["nvme", "get-feature"]:
            return 0, f"get-feature:0x06 (Volatile Write Cache), Current value:0x0000000{int(self.on)}\n"
        if cmd[:2] == ["hdparm", "-W"]:
            return 0, f"\n/dev/sdb:\n write-caching =  {int(self.on)} ({'on' if self.on else 'off'})\n"
        return 0, f"    /dev/sdc: ATA  X\n    WCE           {int(self.on)}  [cha: y, def:  1, sav:  1]\n"


def _block(path: str, **info) -> Target:
    return Target(kind="block", spec=path, path=path, size_bytes=1 << 30, info=info)


@pytest.mark.parametrize("path, info, tool", [("/dev/nvme0n1", {"transport": "nvme"}, "nvme"),
                                              ("/dev/sdb", {"smartctl_device_type": "sat"}, "hdparm"),
                                              ("/dev/sdc", {"smartctl_device_type": "scsi"}, "sdparm")])
def test_write_cache_set_with_consent_and_restored(tmp_path, path, info, tool):
    store = Store.in_dir(tmp_path)
    rid = store.create_run(target_spec=path, target={}, host={}, profile_name="p", profile={}, tests=[],
                           options={}, engine="fio")
    drive = FakeDrive(tool, on=True)
    with writecache.applied(store, rid, _block(path, **info), "disabled", True, run=drive) as states:
        assert drive.on is False and states[0].during == "disabled" and states[0].before == "enabled"
    assert drive.on is True and states[0].restored is True
    expected = {"nvme": f"nvme set-feature {path} -f 6 -v 0", "hdparm": f"hdparm -W0 {path}",
                "sdparm": f"sdparm --set WCE=0 {path}"}[tool]
    assert expected in drive.calls
    assert store.deviations(rid) == {}
    step = store.step(rid, "", "write-cache")
    assert step["drives"][0]["changed"] and step["drives"][0]["restored"]


def test_write_cache_without_consent_is_a_deviation_and_untouched(tmp_path):
    store = Store.in_dir(tmp_path)
    rid = store.create_run(target_spec="x", target={}, host={}, profile_name="p", profile={}, tests=[],
                           options={}, engine="fio")
    drive = FakeDrive("nvme", on=True)
    with writecache.applied(store, rid, _block("/dev/nvme0n1", transport="nvme"), "disabled", False, run=drive):
        pass
    assert drive.on is True and not any("set-feature" in c for c in drive.calls)
    (d,) = store.deviations(rid)[""]
    assert d.rule == "write-cache" and "WCE (volatile write cache enabled)" in d.evidence
    assert "--set-write-cache" in d.evidence and "2.1.1" in d.source


def test_write_cache_set_failure_is_a_deviation_with_the_tools_message(tmp_path):
    store = Store.in_dir(tmp_path)
    rid = store.create_run(target_spec="x", target={}, host={}, profile_name="p", profile={}, tests=[],
                           options={}, engine="fio")
    drive = FakeDrive("nvme", on=True, fail_set=True)
    with writecache.applied(store, rid, _block("/dev/nvme0n1", transport="nvme"), "disabled", True, run=drive):
        pass
    (d,) = store.deviations(rid)[""]
    assert "INVALID_FIELD" in d.evidence


def test_write_cache_spec_words():
    assert writecache.spec_words("enabled").startswith("WCE") and writecache.spec_words("disabled").startswith("WCD")
    assert writecache.spec_words(None).startswith("unknown")


def test_write_cache_state_unknown_on_loop_is_a_deviation(loop_run):
    rid, store = loop_run
    rules = [d.rule for d in store.deviations(rid).get("", [])]
    step = store.step(rid, "", "write-cache")
    # a loop device reports "write back" or "write through" in sysfs and has no cache command
    assert step["required"] == "disabled"
    if step["drives"][0]["during"] != "disabled":
        assert "write-cache" in rules and "cannot be set" in store.deviations(rid)[""][0].evidence


# --- health failures -------------------------------------------------------------------------------------

def test_smartctl_failures_are_recorded_with_its_message():
    doc = {"smartctl": {"exit_status": 8 | 64, "messages": [{"string": "SMART Status command failed",
                                                             "severity": "error"}]},
           "device": {"name": "/dev/sdb", "protocol": "ATA"}, "model_name": "X", "smart_status": {"passed": False}}
    rec = parse_smartctl(doc, "/dev/sdb")
    assert rec["failures"] == ["smartctl exit bit 3: SMART status: DISK FAILING (SMART Status command failed)"]
    assert rec["warnings"] == ["smartctl exit bit 6: the device error log contains errors"]


def test_failing_smartctl_run_is_a_failure_not_dropped(monkeypatch):
    err = "smartctl -j -a /dev/sdz failed (exit 2): Smartctl open device: /dev/sdz failed: No such device"
    monkeypatch.setattr(health, "_run_json", lambda cmd: (None, err))
    monkeypatch.setattr(health.shutil, "which", lambda name: "/usr/sbin/" + name)
    rec = health.snapshot(_block("/dev/sdz"))
    assert rec["failures"] == [err] and rec["available"] is False


def test_runner_records_health_failures_as_deviations(tmp_path, monkeypatch):
    store = Store.in_dir(tmp_path)
    rid = store.create_run(target_spec="x", target={}, host={}, profile_name="p", profile={}, tests=["iops"],
                           options={}, engine="fio")
    monkeypatch.setattr(testrun, "snapshot", lambda t: {"available": True, "failures": ["smartctl exit bit 3: X"]})
    from ssdpts.progress import Progress

    testrun._health(store, rid, "iops", "before", _block("/dev/sdb"), Progress(quiet=True))
    (d,) = store.deviations(rid, "iops")["iops"]
    assert d.rule == "health-failure" and "before the test: smartctl exit bit 3: X" == d.evidence


# --- remote targets: the fio host's data or "not available from the remote host" -------------------------

def test_remote_target_metadata_is_never_the_controllers(results, tmp_path):
    import shutil as _shutil

    if _shutil.which("ip") is None:
        pytest.skip("iproute2 (ip) is not installed")
    from netns import FioHosts

    hosts = FioHosts(1)
    try:
        hosts_file = hosts.hosts_toml(tmp_path / "hosts.toml")
        import subprocess
        import sys

        p = subprocess.run([sys.executable, "-m", "ssdpts", "run", "--hosts", str(hosts_file), "--profile", str(TINY),
                            "--tests", "latency", "--destroy-data", "--results", str(results), "-q"],
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        rid = p.stdout.strip().splitlines()[-1]
        store = Store.in_dir(results)
        run = store.run(rid)
        # the loop device exists on this machine too under the same path: none of its local data may be used
        target = run["target"]
        assert target.logical_block_size == 512                            # probed (O_DIRECT 512 B read), not 4096
        assert "probed on the fio host" in target.info["logical_block_size_source"]
        assert target.serial == "not available from the remote host"
        for when in ("before", "after"):
            h = store.step(rid, "latency", f"health:{when}")
            assert h.available is False and "not available from the remote host" in h.reason
        host = run["host"]
        assert host.cpu_model == "not available from the remote host" and host.memory_bytes is None
        assert host.remote_hosts == [hosts.hosts[0].address + ":8765"] and host.controller.hostname
        # the I/O engine chosen once and recorded is the one the fio host ran, by fio's own account of its options
        io = run["options"].io_engine
        assert io.ioengine == "libaio" and "remote fio server" in io.reason
        ran = json.loads(store.raw_output(store.rounds(rid, "latency")[0].id))
        assert (ran["global options"]["ioengine"], ran["global options"]["thread"]) == (io.ioengine,
                                                                                        str(int(io.threads)))
    finally:
        hosts.close()


# --- claimed vs measured: fresh-out-of-box basis, steady figure beside -----------------------------------

def _window(name: str, rw: str, bs: int, read_pct: int, iops: float = 0.0, read_mib_s: float = 0.0,
            write_mib_s: float = 0.0) -> CellWindow:
    """A typed window record carrying only the figures the claims read."""
    return CellWindow(workload=Workload(name=name, rw=rw, bs=bs, read_pct=read_pct, runtime_s=60.0), iops=iops,
                      read_iops=0.0, write_iops=0.0, read_mib_s=read_mib_s, write_mib_s=write_mib_s, usr_cpu=0.0,
                      sys_cpu=0.0, lat_mean_us=0.0, lat_max_us=0.0)


def test_claims_compare_with_fresh_peak_and_show_steady_beside(tmp_path):
    store = Store.in_dir(tmp_path)
    rid = store.create_run(target_spec="x", target={}, host={}, profile_name="p", profile={},
                           tests=["fresh-peak", "iops", "throughput"], options={}, engine="fio")
    purge = PurgeRecord("sim-purge", True, "", 0.0)
    lat = Latency(mean_us=100.0, max_us=900.0)
    fresh = FreshPeakSummary(purge=purge, block_size=4096, threads=24, iodepth=32, runtime_s=60.0, results=[
        PeakResult("randread", 400_000.0, 1562.5, 1638.4, lat), PeakResult("randwrite", 290_000.0, 1132.8, 1187.8, lat)])
    iops = IopsSummary(purge=purge, steady=SteadyResult("", False, 25), block_sizes=[4096], mixes=[100, 65, 0], cells={
        n: _window(n, "randrw", 4096, pct, iops=v) for n, pct, v in (("rnd_4K_100-0", 100, 300_000.0),
                                                                     ("rnd_4K_0-100", 0, 30_000.0),
                                                                     ("rnd_4K_65-35", 65, 60_000.0))})
    seq = 128 * 1024
    throughput = ThroughputSummary([BlockSizeResult(seq, purge, SteadyResult("bs=128K", True, 5), "seq_128K_100-0",
                                                    "seq_128K_0-100", {
        "seq_128K_100-0": _window("seq_128K_100-0", "read", seq, 100, read_mib_s=3000.0),
        "seq_128K_0-100": _window("seq_128K_0-100", "write", seq, 0, write_mib_s=1000.0)})])
    for name, summary in (("fresh-peak", fresh), ("iops", iops), ("throughput", throughput)):
        store.set_test(rid, name, "completed", registry.get(name).encode(summary))
    claims = {"random": [{"block_size": "4k", "read_iops": 350_000.0, "write_iops": 250_000.0,
                          "mixed_iops": 100_000.0, "mixed_read_pct": 65}],
              "sequential": [{"block_size": "128k", "read_mb_s": 3500.0}]}
    rows = {r["what"]: r for r in claim_rows(store, store.run(rid), claims)}
    w = rows["RND 4K 0/100"]
    # fresh out of box is reached by the purge before the fresh-peak cells; the fresh-peak test judges no steady
    # state (steady_reached None), the IOPS figure beside it did not reach it (the stored summary's)
    assert (w["measured"], w["basis"], w["steady"], w["steady_reached"], w["steady_figure_reached"]) == (
        290_000.0, "fresh out of box (fresh-peak test)", 30_000.0, None, False)
    assert (w["reached"], w["meets"]) == (True, True) and w["reason"].startswith("reached: ")
    mixed = rows["RND 4K 65/35"]                 # no fresh-out-of-box mixed cell: steady is the basis, and says so
    assert mixed["measured"] == 60_000.0 and mixed["basis"].startswith("steady state") and mixed["fresh"] is None
    # ... but the IOPS test never reached steady state: shown, not judged
    assert (mixed["reached"], mixed["meets"]) == (False, None)
    assert mixed["reason"] == "not reached: IOPS steady state not reached in 25 rounds"
    seq = rows["SEQ 128K read"]                  # fresh-peak ran at 4 KiB: the 128 KiB claim has no fresh figure
    assert seq["measured"] == 3000.0 and seq["steady_reached"] is True and seq["meets"] is False   # 3000 < 3337.9
    assert seq["measured_mb_s"] == pytest.approx(3000.0 * 2**20 / 1e6)


def test_sim_rounds_after_the_last_checkpoint_are_rolled_back_and_rerun(tmp_path, monkeypatch):
    monkeypatch.setattr(SimTarget, "CHECKPOINT_EVERY_S", 1e9)   # only the forced ones: purge, end of each phase
    a = _start(tmp_path / "a")
    store_a = Store.in_dir(tmp_path / "a")
    final = store_a.checkpoint(a)["sha256"]
    store_b, b = _interrupted_at_fourth_save(tmp_path / "b", monkeypatch, commit_first=True)   # round 3 committed
    assert len(store_b.rounds(b, "latency", "")) == 3
    lifecycle.resume(b, results_dir=tmp_path / "b", quiet=True)
    rollback = store_b.step(b, "", "rollback:001")
    assert rollback["rounds_removed"] == 4                      # WIPC + rounds 1-3: after the purge's checkpoint
    assert store_b.checkpoint(b)["sha256"] == final             # the same drive as without the interruption
    ra, rb = store_a.rounds(a, "latency", ""), store_b.rounds(b, "latency", "")
    assert [r.cells[0].iops for r in ra] == [r.cells[0].iops for r in rb]
