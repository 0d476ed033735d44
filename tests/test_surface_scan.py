"""Surface scan (seed 001): read-only and write-verify passes, per-region MiB/s, slow regions, errors."""

import hashlib

import pytest

from conftest import TINY, requires_devices, run_completed, ssdpts
from ssdpts.engines.fiojson import parse_job
from ssdpts.engines.results import aggregate, merge_jobs
from ssdpts.pts import registry


def _profile(tmp_path, **keys) -> str:
    body = "".join(f"{k} = {v!r}\n".replace("'", '"') for k, v in keys.items())
    p = tmp_path / "scan.toml"
    p.write_text(f'[profile]\nextends = "{TINY}"\n\n[tests.surface-scan]\n{body}')
    return str(p)


def _summary(store, rid):
    return registry.get("surface-scan").decode(store.tests(rid)[0]["summary"])


def test_write_pass_on_sim_flags_the_regions_written_while_the_cache_folds(tmp_path):
    rid, store = run_completed("sim:client", tmp_path, _profile(tmp_path, regions=16, mode="write-verify",
                                                                slow_threshold=0.7), "surface-scan")
    s = _summary(store, rid)
    assert s.mode == "write-verify" and s.verify == "crc32c" and len(s.regions) == 16
    assert s.scanned_bytes == s.capacity_bytes == 16 * 2**30
    assert [r.start_bytes for r in s.regions] == [i * 2**30 for i in range(16)]
    # sim:client's three steps (2100 MiB/s SLC, 700 direct to TLC, ~430 while folding): the median is the
    # middle step, and the folding regions at the end fall below 70 % of it
    assert s.median_mib_s == pytest.approx(700, rel=0.02)
    assert s.regions[0].mib_s == pytest.approx(2100, rel=0.02)
    assert [r.index for r in s.slow_regions] == [14, 15, 16]
    assert all(r.mib_s < 0.7 * s.median_mib_s for r in s.slow_regions)
    # the simulated drive stores no data: nothing was verified, and the report says so
    assert s.data_verified is False and all(r.verify_mib_s is None for r in s.regions) and s.errors == 0
    assert any("verification not available" in n for n in s.notes)
    assert (tmp_path / "reports" / rid / "plots" / "surface-scan-mib-by-region.png").exists()
    rows = (tmp_path / "reports" / rid / "tables" / "surface-scan-slow-regions.csv").read_text().splitlines()
    assert [r.split(",")[0] for r in rows[1:]] == ["14", "15", "16"]


def _digest(dev: str) -> str:
    with open(dev, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


@requires_devices
def test_read_scan_on_a_loop_device_needs_no_consent_and_writes_nothing(loop_factory, tmp_path):
    dev = loop_factory(16 * 2**20)
    with open(dev, "r+b") as f:               # something to keep: a pattern the scan must not touch
        f.write(bytes(range(256)) * 4096 * 4)
    before = _digest(dev)
    p = ssdpts("run", dev, "--profile", _profile(tmp_path, regions=4, block_size="256k"), "--tests", "surface-scan",
               "--results", str(tmp_path), "-q")
    rid = p.stdout.strip().splitlines()[-1]
    from ssdpts.store import Store
    store = Store.in_dir(tmp_path)
    assert store.run(rid)["status"] == "completed" and store.run(rid)["options"].destroy_data is False
    s = _summary(store, rid)
    assert _digest(dev) == before
    assert s.mode == "read" and s.verify is None and s.errors == 0 and len(s.regions) == 4
    assert [r.size_bytes for r in s.regions] == [4 * 2**20] * 4 and s.scanned_bytes == 16 * 2**20
    assert all(r.mib_s > 0 and r.lat_max_ms > 0 and r.verify_mib_s is None for r in s.regions)
    jobs = [r.job_text for r in store.rounds(rid, "surface-scan", "scan")]
    assert all("rw=read" in j and "continue_on_error=all" in j and "verify" not in j for j in jobs)


@requires_devices
def test_write_verify_on_a_loop_device_needs_destroy_data_and_verifies(loop_factory, tmp_path):
    dev = loop_factory(16 * 2**20)
    profile = _profile(tmp_path, regions=2, block_size="256k", mode="write-verify")
    p = ssdpts("run", dev, "--profile", profile, "--tests", "surface-scan", "--results", str(tmp_path), check=False)
    assert p.returncode != 0 and "Traceback" not in p.stderr and "--destroy-data" in p.stderr
    rid, store = run_completed(dev, tmp_path, profile, "surface-scan")
    s = _summary(store, rid)
    assert s.data_verified is True and s.errors == 0 and len(s.regions) == 2
    # fio wrote every region and read it all back to check the checksums
    assert all(r.mib_s > 0 and r.verify_mib_s > 0 for r in s.regions)
    rounds = store.rounds(rid, "surface-scan", "scan")
    cells = [c for r in rounds for c in r.cells]
    assert [c.write.bytes for c in cells] == [c.read.bytes for c in cells] == [8 * 2**20] * 2
    assert all("verify=crc32c" in r.job_text and "do_verify=1" in r.job_text for r in rounds)


def test_fio_error_count_is_read_from_total_err():
    job = {"jobname": "scan_0001", "error": 0, "total_err": 3, "first_error": 5, "job_runtime": 100,
           "read": {"io_bytes": 1 << 20, "total_ios": 4, "bw_bytes": 1 << 23, "iops": 40.0, "runtime": 100,
                    "lat_ns": {"min": 1, "max": 9, "mean": 5.0, "stddev": 1.0}},
           "write": {"io_bytes": 0, "total_ios": 0, "bw_bytes": 0, "iops": 0.0, "runtime": 0,
                     "lat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0}}}
    assert parse_job(job).errors == 3
    assert parse_job({**job, "total_err": 0}).errors == 0


def test_a_set_cell_counts_the_errors_of_every_drive():
    """A cell run on several drives at once: fio's error count of each drive's job is kept in the set's figure
    (a surface scan of a set whose second drive had 3 errors said 0 when only bytes and IOPS were summed)."""
    job = {"jobname": "scan_0001", "error": 0, "total_err": 3, "first_error": 5, "job_runtime": 100,
           "read": {"io_bytes": 1 << 20, "total_ios": 4, "bw_bytes": 1 << 23, "iops": 40.0, "runtime": 100,
                    "lat_ns": {"min": 1, "max": 9, "mean": 5.0, "stddev": 1.0}},
           "write": {"io_bytes": 0, "total_ios": 0, "bw_bytes": 0, "iops": 0.0, "runtime": 0,
                     "lat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0}}}
    healthy, failing = parse_job({**job, "total_err": 0}), parse_job(job)
    assert aggregate({"a": healthy, "b": failing}, "scan_0001").errors == 3
    assert merge_jobs({"a": failing, "b": failing}, "scan_0001").errors == 6
