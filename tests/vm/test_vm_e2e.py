"""An end-to-end run (iops, latency, wsat) on the emulated NVMe drive through the real kernel driver:
purge, preconditioning, rounds, health snapshots, results document and report."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ssdpts.pts import registry

from vm.testbed import GUEST_XFER, HERE


@pytest.fixture(scope="module")
def e2e(vm) -> tuple[dict, list[str]]:
    """The run happens in the guest, on the real driver; the results database is then copied out and the
    results document and HTML report are written here (same code, native speed: plotting under TCG takes
    ~2 minutes and exercises nothing of the kernel)."""
    dev = vm.disk("nvme")
    r = vm.run(f"SSDPTS_REPORT=0 ssdpts run {dev} --profile {HERE / 'e2e.toml'} --destroy-data --purge auto "
               f"--results /tmp/e2e -q | tail -1 && cp -a /tmp/e2e {GUEST_XFER}/e2e", timeout=900, check=True)
    print(f"e2e run in the guest: {r.seconds:.0f} s")
    run_id, results = r.out.split()[-1], vm.xfer / "e2e"
    for args in (["export", run_id, "--format", "json", "--out", str(results / "doc")],
                 ["report", run_id, "--out", str(results / "report")]):
        subprocess.run([sys.executable, "-m", "ssdpts", *args, "--results", str(results)], check=True,
                       capture_output=True, text=True, timeout=300)
    doc = json.loads(next((results / "doc").glob("*.json")).read_text())
    return doc, sorted(p.name for p in (results / "report").iterdir())


def test_run_completed_on_the_real_drive(e2e):
    doc, _ = e2e
    assert doc["run"]["status"] == "completed"
    assert doc["target"]["info"]["serial"] == "SSDPTSNVME1" and doc["target"]["info"]["namespaces"] == 1
    assert [t["name"] for t in doc["tests"]] == ["iops", "latency", "wsat"]
    assert all(t["status"] == "completed" for t in doc["tests"])


def test_each_test_purged_with_nvme_format(e2e):
    doc, _ = e2e
    for t in doc["tests"]:
        purges = [s["data"] for s in t["steps"] if s["kind"] == "purge"]
        assert purges and purges[0]["method"] == "nvme-format" and purges[0]["snia_purge"] is True, t["name"]


def test_results_have_real_values(e2e):
    doc, _ = e2e
    tests = {t["name"]: registry.get(t["name"]).decode(t["summary"]) for t in doc["tests"]}
    assert tests["iops"].iops(4096, 0) > 0
    assert tests["iops"].steady.rounds >= 1
    lat = tests["latency"].latency(4096, 0, "write")
    assert 0 < lat.mean_us <= lat.p("99") <= lat.max_us
    wsat = tests["wsat"].workloads["rnd4k-write"]
    assert wsat.stop_reason in ("4x capacity written", "time limit", "round limit")
    assert wsat.series and wsat.tgbw_gb > 0


def test_health_snapshots_recorded(e2e):
    doc, _ = e2e
    steps = [s for t in doc["tests"] for s in t["steps"] if s["key"].startswith("health:")]
    assert steps, "no health steps in the results"
    after = [s["data"] for s in steps if s["key"].startswith("health:after")]
    assert after and all(a["available"] and a["serial"] == "SSDPTSNVME1" for a in after)


def test_report_written(e2e):
    _, listing = e2e
    assert "report.html" in listing and "plots" in listing
