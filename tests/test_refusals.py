"""Refused before anything is created: one line, exit 2, no run row, no results directory, target bytes unchanged.

ssdpts's own files, read-only devices and file systems, symlink loops, targets too small for what the tests run.
"""

import os
import subprocess
from pathlib import Path

import pytest

from conftest import SHM, _can_make_devices, digest, requires_devices, ssdpts
from ssdpts.store import Store
from ssdpts.targets.safety import read_only
from ssdpts.targets.sysfs import SysRoots

pytestmark = pytest.mark.no_end_report    # reads no end-of-run report (tests/conftest.py)


def refused(target: str, *extra: str, results: Path, match: str, cwd: Path | None = None) -> str:
    """`ssdpts run TARGET` is refused with one line naming `match`; the stderr line."""
    p = ssdpts("run", target, "--results", str(results), *extra, check=False, cwd=cwd)
    lines = [l for l in p.stderr.strip().splitlines() if l]
    assert p.returncode == 2 and len(lines) == 1 and lines[0].startswith("ssdpts: error:"), p.stderr
    assert match in lines[0] and "Traceback" not in p.stderr, lines[0]
    return lines[0]


# ---- ssdpts's own files ---------------------------------------------------------------------------------

@pytest.fixture
def own_results(tmp_path) -> Path:
    """A results directory as a running ssdpts has it: the database open (so -wal and -shm exist), a log, a
    report, a checkpoint."""
    results = tmp_path / "results"
    store = Store.in_dir(results)
    for name in ("logs/r1.log", "reports/r1.html", "sim/r1.000001.state"):
        (results / name).parent.mkdir(exist_ok=True)
        (results / name).write_bytes(os.urandom(4096))
    assert (results / "ssdpts.db-wal").exists() and (results / "ssdpts.db-shm").exists()
    try:
        yield results
    finally:
        store.close()


def _snapshot(results: Path) -> dict[str, str]:
    return {str(p.relative_to(results)): digest(p) for p in sorted(results.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("consent", [(), ("--destroy-data",)])
@pytest.mark.parametrize("name", ["ssdpts.db", "ssdpts.db-wal", "ssdpts.db-shm", "logs/r1.log", "reports/r1.html",
                                  "sim/r1.000001.state", "logs/new.img"])
def test_own_results_are_never_a_target(own_results, name, consent):
    before = _snapshot(own_results)
    refused(str(own_results / name), "--size", "1M", *consent, results=own_results, match="ssdpts's own results")
    assert _snapshot(own_results) == before
    assert Store.in_dir(own_results).runs() == []


def test_own_results_through_another_name_are_refused(own_results, tmp_path):
    before = _snapshot(own_results)
    (tmp_path / "link.img").symlink_to(own_results / "ssdpts.db")
    os.link(own_results / "ssdpts.db", tmp_path / "hard.img")
    for target in ("link.img", "hard.img"):
        refused(str(tmp_path / target), "--destroy-data", results=own_results, match="ssdpts's own results")
    refused(str(own_results), "--size", "1M", "--destroy-data", results=own_results, match="is a directory")
    assert _snapshot(own_results) == before


@requires_devices
def test_loop_device_backed_by_own_results_is_refused(own_results):
    backing = own_results / "disk.img"
    backing.write_bytes(os.urandom(1 << 20))
    dev = subprocess.check_output(["losetup", "-f", "--show", str(backing)], text=True).strip()
    try:
        before = _snapshot(own_results)
        refused(dev, "--destroy-data", results=own_results, match="ssdpts's own results")
        assert _snapshot(own_results) == before
    finally:
        subprocess.run(["losetup", "-d", dev], check=True)


def test_info_names_own_results(own_results):
    out = ssdpts("info", str(own_results / "ssdpts.db"), "--results", str(own_results)).stdout
    assert "safe        no: refusing" in out and "ssdpts's own results" in out


# ---- read-only devices and file systems, symlink loops -------------------------------------------------

@pytest.fixture
def read_only_loop(tmp_path) -> str:
    """A loop device attached read-only (losetup -r: the flag goes with the attachment; 'blockdev --setro' would
    stay on the loop device for whoever attaches it next); always detached."""
    if _can_make_devices():
        pytest.skip(_can_make_devices())
    backing = SHM / f"ssdpts-test-ro-{os.getpid()}-{tmp_path.name}.img"
    backing.write_bytes(os.urandom(1 << 20) * 64)
    dev = subprocess.check_output(["losetup", "-r", "-f", "--show", str(backing)], text=True).strip()
    try:
        yield dev
    finally:
        subprocess.run(["losetup", "-d", dev], check=True)
        backing.unlink()


def test_read_only_device_is_refused_and_info_says_so(read_only_loop, tmp_path):
    before = digest(read_only_loop)
    refused(read_only_loop, "--destroy-data", "--profile", "quick", results=tmp_path / "r", match="read-only")
    assert digest(read_only_loop) == before and not (tmp_path / "r").exists()
    out = ssdpts("info", read_only_loop).stdout
    assert "safe        no: refusing" in out and "read-only" in out


def test_read_only_is_read_from_the_kernel_without_sysfs(read_only_loop, tmp_path):
    """BLKROGET answers where sysfs has no `ro` (an empty tree here)."""
    assert read_only(read_only_loop, Path(read_only_loop).name, SysRoots(sys=tmp_path, proc=tmp_path))


def test_file_on_read_only_file_system_is_refused(read_only_fs, tmp_path):
    before = digest(read_only_fs / "old.img")
    for target, extra in (("old.img", ("--destroy-data",)), ("new.img", ("--size", "1M"))):
        refused(str(read_only_fs / target), *extra, results=tmp_path / "r", match="read-only")
    assert digest(read_only_fs / "old.img") == before and sorted(os.listdir(read_only_fs)) == ["old.img"]
    assert not (tmp_path / "r").exists()
    assert "read-only" in ssdpts("info", str(read_only_fs / "old.img")).stdout


def test_symlink_loop_is_one_line(tmp_path):
    (tmp_path / "a.img").symlink_to(tmp_path / "b.img")
    (tmp_path / "b.img").symlink_to(tmp_path / "a.img")
    refused(str(tmp_path / "a.img"), "--size", "1M", results=tmp_path / "r", match="symlink loop")
    assert sorted(os.listdir(tmp_path)) == ["a.img", "b.img"]


# ---- too small for what the tests run ------------------------------------------------------------------

BIG_IO = """
[profile]
extends = "quick"
tests = ["iops"]
[tests.iops]
threads = 2
iodepth = 16
block_sizes = ["1m"]
mixes = [0]
tracking = [["1m", 0]]
cell_runtime = "200ms"
[wipc]
block_size = "4k"
threads = 1
iodepth = 1
"""


@requires_devices
def test_device_smaller_than_the_ios_in_flight_is_refused(loop_factory, tmp_path):
    dev = loop_factory(2**20)
    profile = tmp_path / "big-io.toml"
    profile.write_text(BIG_IO)
    before = digest(dev)
    line = refused(dev, "--destroy-data", "--profile", str(profile), results=tmp_path / "r", match="too small")
    assert "rnd_1024K_0-100 (1024K I/Os × TC2 × QD16 = 33554432 bytes in flight)" in line
    assert digest(dev) == before and not (tmp_path / "r").exists()
    assert "too small for iops cell rnd_1024K_0-100" in ssdpts("info", dev, "--profile", str(profile)).stdout


def test_active_range_below_one_io_per_job_is_refused(tmp_path):
    profile = tmp_path / "narrow.toml"
    profile.write_text(BIG_IO.replace("threads = 2\niodepth = 16", "threads = 1\niodepth = 1\nactive_range = 1"))
    refused("x.img", "--size", "64M", "--profile", str(profile), results=tmp_path / "r", cwd=tmp_path,
            match="less than one 1024K I/O")
    assert sorted(os.listdir(tmp_path)) == ["narrow.toml"]
