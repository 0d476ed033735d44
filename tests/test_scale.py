"""Several drives at once, and many hosts through fio's client/server mode (network namespaces)."""

import shutil
import subprocess
import sys
import threading
import time

import pytest

from conftest import TINY_WRITES, requires_devices, ssdpts
from ssdpts.pts import registry
from ssdpts.results import TrackerKey
from ssdpts.store import Store

pytestmark = pytest.mark.no_end_report    # reads no end-of-run report (tests/conftest.py)

needs_netns = pytest.mark.skipif(shutil.which("ip") is None, reason="iproute2 (ip) is not installed")


@requires_devices
def test_parallel_targets_aggregate_is_the_sum(loop_factory, results):
    a, b = loop_factory(), loop_factory()
    p = ssdpts("run", a, b, "--profile", TINY_WRITES, "--tests", "iops,latency", "--destroy-data", "--results",
               str(results), "-q")
    rid = p.stdout.strip().splitlines()[-1]
    store = Store.in_dir(results)
    run = store.run(rid)
    assert run["status"] == "completed" and run["target"].kind == "set"
    for r in store.rounds(rid, "iops"):
        assert "filename=" + a in r.job_text and "filename=" + b in r.job_text   # one fio job file, both drives
        # a process per job: libaio completions get lost on loop devices beside another thread's hook
        assert "ioengine=libaio" in r.job_text and "thread=0" in r.job_text   # (docs/testing.md, "Stalls")
        for cell in r.cells:
            assert set(cell.parts) == {a, b}
            assert cell.iops == pytest.approx(sum(p.iops for p in cell.parts.values()))
            assert cell.bw_bytes == pytest.approx(sum(p.bw_bytes for p in cell.parts.values()))
            assert cell.lat_max_ns == max(p.lat_max_ns for p in cell.parts.values())
    summaries = {t["name"]: registry.get(t["name"]).decode(t["summary"]) for t in store.tests(rid)}
    s = summaries["iops"]
    trackers = {t.key for t in s.steady.trackers}
    assert {TrackerKey("rnd_4K_0-100", "iops", a), TrackerKey("rnd_4K_0-100", "iops", b)} <= trackers   # per target too
    cell = s.cells["rnd_4K_0-100"]
    assert cell.iops == pytest.approx(sum(v.iops for v in cell.parts.values()))
    lat = summaries["latency"].cells["rnd_4K_0-100"]
    assert set(lat.parts) == {a, b} and all(v.write_lat.p("99") > 0 for v in lat.parts.values())


@requires_devices
def test_sequential_targets_are_separate_runs(loop_factory, results):
    a, b = loop_factory(), loop_factory()
    p = ssdpts("run", a, b, "--sequential", "--profile", TINY_WRITES, "--tests", "latency", "--destroy-data",
               "--results", str(results), "-q")
    ids = p.stdout.strip().splitlines()[-2:]
    store = Store.in_dir(results)
    assert [store.run(i)["target_spec"] for i in ids] == [a, b]


@requires_devices
@needs_netns
def test_three_hosts_one_killed_then_retried(results, tiny, tmp_path):
    from netns import FioHosts

    hosts = FioHosts(3)
    try:
        hosts_file = hosts.hosts_toml(tmp_path / "hosts.toml")
        victim = hosts.hosts[1]
        label = f"{victim.address}:8765:{victim.device}"
        proc = subprocess.Popen([sys.executable, "-m", "ssdpts", "run", "--hosts", str(hosts_file), "--profile", tiny,
                                 "--tests", "iops", "--destroy-data", "--results", str(results), "-q"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        db = results / "ssdpts.db"

        def kill_after_two_rounds():
            deadline = time.time() + 120
            while time.time() < deadline:
                if db.exists():
                    s = Store(db)
                    runs = s.runs()
                    n = len(s.rounds(runs[0]["id"], "iops", with_cells=False)) if runs else 0
                    s.close()
                    if n >= 2:
                        victim.kill()
                        return
                time.sleep(0.05)

        killer = threading.Thread(target=kill_after_two_rounds)
        killer.start()
        out, err = proc.communicate(timeout=300)
        killer.join()
        assert proc.returncode == 0, err
        rid = out.strip().splitlines()[-1]
        store = Store(db)
        run = store.run(rid)
        assert run["status"] == "partial" and victim.address in run["message"]
        rounds = store.rounds(rid, "iops")
        others = {f"{h.address}:8765:{h.device}" for h in hosts.hosts if h is not victim}
        assert all(others <= set(r.cells[0].parts) for r in rounds)        # the others completed every round
        assert label in rounds[0].cells[0].parts and label not in rounds[-1].cells[0].parts
        assert store.step(rid, "iops", "failed-targets")["targets"].keys() == {label}
        assert store.tests(rid)[0]["status"] == "completed"
        # the purge ran through the remote engine: a fio trim job on every host, recorded as not a SNIA purge
        purged = store.step(rid, "iops", "purge:")
        assert purged["method"] == "trim" and not purged["snia_purge"]
        assert sorted(c.split()[1] for c in purged["command"].split(" ; ")) == sorted(
            f"--client=ip:{h.address},8765" for h in hosts.hosts)

        victim.start()                                                    # the host is back: resume retries it
        ssdpts("resume", rid, "--results", str(results), "-q")
        run = store.run(rid)
        assert run["status"] == "completed", run["message"]
        retry = store.step(rid, "iops", "retry1")
        assert retry["targets"] == [label] and retry["failed"] == {}
        retried = store.rounds(rid, "iops", "retry1/")
        assert retried and all(set(r.cells[0].parts) == {label} for r in retried)
    finally:
        hosts.close()
    assert not subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.count("ssdpts-")


@requires_devices
@needs_netns
def test_unreachable_host_is_refused_before_writing(results, tiny):
    p = ssdpts("run", "--host", "127.0.0.1:9", "/dev/nvme9n9", "--size", "1G", "--profile", tiny,
               "--destroy-data", "--results", str(results), check=False)
    assert p.returncode == 2 and "127.0.0.1:9 is not reachable" in p.stderr
    p = ssdpts("run", "--host", "127.0.0.1", "/dev/nvme9n9", "--profile", tiny, "--destroy-data",
               "--results", str(results), check=False)
    assert p.returncode == 2 and "needs its size" in p.stderr
