"""`ssdpts doctor` and the checks `run` makes first: real loop, zram, file and simulated targets, and forced
warnings and fails (a process holding the target, fake sysfs trees, a hot drive's health record)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from ssdpts import doctor
from ssdpts.doctor import Bench, Status, examine, gate, parse_ignored
from ssdpts.errors import SsdptsError
from ssdpts.store import Store
from ssdpts.targets import Target, open_target
from ssdpts.targets.sysfs import SysRoots

from conftest import ssdpts


def _by_name(findings) -> dict:
    return {f.check: f for f in findings}


@pytest.fixture
def holder():
    """A process holding a path open for reading (as dd or a backup would), killed afterwards."""
    procs = []

    def hold(path: str) -> subprocess.Popen:
        p = subprocess.Popen(["sleep", "300"], stdin=open(path, "rb"))
        procs.append(p)
        return p

    yield hold
    for p in procs:
        p.kill()
        p.wait()


def test_doctor_on_a_loop_device_json(loopdev):
    p = ssdpts("doctor", loopdev, "--json")
    doc = json.loads(p.stdout)
    checks = {c["check"]: c for c in doc["checks"]}
    assert doc["ok"] is True and p.returncode == 0
    name = Path(loopdev).name
    assert checks["io-scheduler"]["status"] == "ok"
    assert checks["io-scheduler"]["found"].startswith(f"{name}: scheduler ") and "nr_requests " in checks["io-scheduler"]["found"]
    assert checks["open-by"]["status"] == "ok"
    assert checks["temperature"]["status"] == "n/a" and "virtual block device (loop)" in checks["temperature"]["found"]
    assert "memory" not in checks                      # only the simulated drive needs it
    assert set(checks) <= set(doctor.NAMES)


def test_a_process_holding_the_target_fails_and_run_refuses_then_runs_with_the_override(loop_factory, holder,
                                                                                         results, tiny):
    dev = loop_factory(32 * 2**20)
    sleeper = holder(dev)
    f = _by_name(examine(Bench(target=open_target(dev)), only=frozenset({"open-by"})))["open-by"]
    assert f.status is Status.FAIL and f"sleep (pid {sleeper.pid})" in f.found
    p = ssdpts("doctor", dev, check=False)
    assert p.returncode == 1 and "fail" in p.stdout
    short = results.parent / "short.toml"       # the tiny profile's latency test cut to 5 rounds of one cell
    short.write_text(f'[profile]\nextends = "{tiny}"\n[tests.latency]\nmax_rounds = 5\nmixes = [0]\n')
    args = ["run", dev, "--profile", str(short), "--tests", "latency", "--destroy-data", "--results", str(results),
            "-q"]
    p = ssdpts(*args, check=False)
    assert p.returncode == 2
    err = p.stderr.strip().splitlines()
    assert len(err) == 1 and "doctor check open-by failed" in err[0] and "--ignore-doctor open-by" in err[0]
    assert "Traceback" not in p.stderr
    assert not (results / "ssdpts.db").exists() or Store.in_dir(results).runs() == []
    p = ssdpts(*args, "--ignore-doctor", "open-by", env={**os.environ, "SSDPTS_REPORT": "0"})   # no plots: time
    run = Store.in_dir(results).run(p.stdout.strip().splitlines()[-1])
    assert run["status"] == "completed"
    recorded = {c["check"]: c for c in run["host"].doctor}
    assert recorded["open-by"]["status"] == "fail" and recorded["open-by"]["ignored"] is True
    assert "open-by fail (ignored)" in ssdpts("show", run["id"], "--results", str(results)).stdout


def test_doctor_on_zram(zram_own):
    found = _by_name(examine(Bench(target=open_target(zram_own))))
    assert found["io-scheduler"].found.startswith(f"{Path(zram_own).name}: scheduler ")
    assert found["temperature"].status is Status.NA and "(zram)" in found["temperature"].found
    assert found["open-by"].status is Status.OK


def test_doctor_on_a_file_target(tmp_path, holder):
    path = tmp_path / "scratch.img"
    path.write_bytes(b"\0" * 4096)
    found = _by_name(examine(Bench(target=open_target(str(path)), write_cache_required="disabled")))
    assert found["open-by"].status is Status.OK
    assert found["write-cache"].status is Status.NA and "a file has none of its own" in found["write-cache"].found
    assert found["temperature"].status is Status.NA
    sleeper = holder(str(path))
    f = _by_name(examine(Bench(target=open_target(str(path))), only=frozenset({"open-by"})))["open-by"]
    assert f.status is Status.FAIL and str(sleeper.pid) in f.found


def test_doctor_on_the_simulated_drive():
    target = open_target("sim:client")
    found = _by_name(examine(Bench(target=target)))
    assert "io-scheduler" not in found and "smartctl" not in found
    assert found["memory"].status is Status.OK
    need_mib = 2 * target.size_bytes // 4096 * 8 / 2**20
    assert f"needs about {need_mib:.0f} MiB" in found["memory"].found
    assert found["temperature"].status is Status.NA and "models no temperature" in found["temperature"].found


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text + "\n")


def test_governor_and_boost_from_a_fake_sysfs(tmp_path):
    sys_, proc = tmp_path / "sys", tmp_path / "proc"
    _tree(proc, {"cpuinfo": "flags : fpu hypervisor", "self/status": "CapEff:\t0000000000000000"})
    roots = SysRoots(sys=sys_, proc=proc)
    found = _by_name(examine(Bench(roots=roots)))
    assert found["cpu-governor"].status is Status.NA
    assert found["cpu-governor"].found == "not available (no cpufreq in this VM)"
    _tree(sys_, {"devices/system/cpu/cpu0/cpufreq/scaling_governor": "performance",
                 "devices/system/cpu/cpu1/cpufreq/scaling_governor": "powersave",
                 "devices/system/cpu/intel_pstate/no_turbo": "0"})
    found = _by_name(examine(Bench(roots=roots)))
    assert found["cpu-governor"].status is Status.WARN
    assert found["cpu-governor"].found.startswith("performance on 1 CPU(s), powersave on 1 CPU(s)")
    assert "cpupower frequency-set -g performance" in found["cpu-governor"].fix
    assert found["cpu-boost"].status is Status.OK and found["cpu-boost"].found.startswith("turbo on")
    _tree(sys_, {"devices/system/cpu/cpu1/cpufreq/scaling_governor": "performance"})
    assert _by_name(examine(Bench(roots=roots)))["cpu-governor"].status is Status.OK


def test_scheduler_warns_on_bfq_from_a_fake_sysfs(loopdev, tmp_path):
    name = Path(loopdev).name
    _tree(tmp_path, {f"class/block/{name}/queue/scheduler": "none mq-deadline [bfq]",
                     f"class/block/{name}/queue/nr_requests": "64"})
    bench = Bench(target=open_target(loopdev), roots=SysRoots(sys=tmp_path))
    f = _by_name(examine(bench, only=frozenset({"io-scheduler"})))["io-scheduler"]
    assert f.status is Status.WARN
    assert f.found.startswith(f"{name}: scheduler bfq, nr_requests 64")
    assert f.fix.startswith(f"echo none > /sys/block/{name}/queue/scheduler")


def _block(path: str = "/dev/nvme9n1") -> Target:
    return Target(kind="block", spec=path, path=path, size_bytes=2**30)


@pytest.mark.parametrize("record, status, words", [
    ({"temperature_c": 41, "critical_warning": 0, "raw": {"nvme_id_ctrl": {"wctemp": 355}}}, Status.OK,
     "41 °C (warning threshold 82 °C)"),
    ({"temperature_c": 84, "critical_warning": 0, "raw": {"nvme_id_ctrl": {"wctemp": 355}}}, Status.WARN,
     "at or over its warning threshold"),
    ({"temperature_c": 70, "critical_warning": 2, "raw": {}}, Status.WARN, "critical warning bit 1 set"),
    ({"temperature_c": None, "missing": {"temperature_c": "not reported by this device"}}, Status.NA,
     "not available (not reported by this device)"),
])
def test_temperature_from_the_health_record(monkeypatch, record, status, words):
    monkeypatch.setattr(doctor, "snapshot", lambda target: record)
    f = examine(Bench(target=_block()), only=frozenset({"temperature"}))[0]
    assert f.status is status and words in f.found


def test_write_cache_against_the_profile(monkeypatch):
    monkeypatch.setattr(doctor.writecache, "read_state", lambda target: "enabled")
    only = frozenset({"write-cache"})
    f = examine(Bench(target=_block(), write_cache_required="disabled"), only=only)[0]
    assert f.status is Status.WARN and "--set-write-cache" in f.fix
    f = examine(Bench(target=_block(), write_cache_required="disabled", set_write_cache=True), only=only)[0]
    assert f.status is Status.OK
    assert examine(Bench(target=_block(), write_cache_required="unchanged"), only=only)[0].status is Status.OK


def test_the_gate_refuses_a_fail_unless_ignored(monkeypatch):
    monkeypatch.setattr(doctor, "snapshot", lambda target: {"temperature_c": 90, "critical_warning": 2})
    bench = Bench(target=_block())
    monkeypatch.setattr(doctor, "CHECKS", tuple(c for c in doctor.CHECKS if c.name in ("temperature", "memory")))
    assert [f.status for f in gate(bench, frozenset(), "x")] == [Status.WARN]     # a warning never refuses
    broken = doctor.Check("broken", "why", "source", lambda b: 1 / 0)
    monkeypatch.setattr(doctor, "CHECKS", (broken,))
    with pytest.raises(SsdptsError, match="doctor check broken failed: the check itself failed: ZeroDivisionError"):
        gate(bench, frozenset(), "x")
    assert gate(bench, frozenset({"broken"}), "x")[0].ignored


def test_ignore_doctor_names_are_checked():
    assert parse_ignored("open-by, memory") == {"open-by", "memory"}
    assert parse_ignored("all") == set(doctor.NAMES)
    with pytest.raises(SsdptsError, match="unknown check 'nope'"):
        parse_ignored("nope")
