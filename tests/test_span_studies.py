"""file-reuse on a file in ext4 on a loop device (real fio) and span-sweep on a loop device and sim:client."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from conftest import HERE, requires_devices, run_completed, ssdpts
from ssdpts.targets import filesystem
from test_fs_studies import ext4, summaries  # noqa: F401  (the fixture)

pytestmark = pytest.mark.no_end_report    # reads no end-of-run report (tests/conftest.py)

SPAN_TINY = str(HERE / "profiles" / "span-tiny.toml")


@requires_devices
@pytest.mark.skipif(not filesystem.mkfs_available("ext4"), reason="mkfs.ext4 is not installed")
def test_file_reuse_creates_then_reuses_the_file(ext4, tmp_path):
    dev, point = ext4
    path = point / "t.img"
    rid, store = run_completed(str(path), tmp_path / "r", SPAN_TINY, "file-reuse", "--size", "32M")
    s = summaries(store, rid)["file-reuse"]
    assert [p.name for p in s.passes] == ["created", "reused", "recreated"]
    assert s.file_bytes == 16 * 2**20 and s.overwrite is False
    created, reused, recreated = s.passes
    # the runner made the file; the study deleted it, so fio created it: allocated, not written (overwrite=0)
    assert created.removed_first and not created.before.exists and created.fio_laid_out
    assert recreated.removed_first and not recreated.before.exists and recreated.fio_laid_out
    assert not reused.removed_first and not reused.fio_laid_out
    assert reused.before == created.after and reused.before.size_bytes == 16 * 2**20
    assert created.after.allocated_bytes == 16 * 2**20
    assert created.after.written_bytes > 0
    assert [s.labels[w] for w in s.workloads] == ["SEQ 128K write", "RND 4K write", "RND 4K read"]
    for w in s.workloads:
        assert s.iops("created", w) > 0 and s.iops("reused", w) > 0
        assert s.ratio("reused", w) == pytest.approx(s.iops("reused", w) / s.iops("created", w))
    assert os.path.getsize(path) == 32 * 2**20             # back to the target's size for later tests


@requires_devices
@pytest.mark.skipif(not filesystem.mkfs_available("ext4"), reason="mkfs.ext4 is not installed")
def test_file_reuse_fits_where_fio_fits(ext4, tmp_path):
    """A file of 60 % of the free space: fio alone creates and writes it; file-reuse deletes and lets fio create
    it twice (the run's lock on the old file let go first: its blocks are free, not twice the room needed)."""
    dev, point = ext4
    st = os.statvfs(point)
    size = int(st.f_bavail * st.f_frsize * 0.6) // 2**20 * 2**20
    alone = point / "fio-alone.img"
    p = subprocess.run(["fio", "--name=alone", f"--filename={alone}", f"--size={size}", "--rw=write", "--bs=128k",
                        "--direct=1", "--output-format=json"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["jobs"][0]["write"]["io_bytes"] == size          # fio's own count
    alone.unlink()
    profile = tmp_path / "whole-file.toml"
    profile.write_text(f'[profile]\nextends = "{SPAN_TINY}"\n[tests.file-reuse]\nfile_size_percent = 100\n')
    path = point / "t.img"
    rid, store = run_completed(str(path), tmp_path / "r", str(profile), "file-reuse", "--size", str(size))
    s = summaries(store, rid)["file-reuse"]
    assert [p.name for p in s.passes] == ["created", "reused", "recreated"] and s.file_bytes == size
    assert all(p.after.allocated_bytes == size for p in s.passes)                 # FIEMAP, not fio's word
    assert all(s.iops(p.name, w) > 0 for p in s.passes for w in s.workloads)
    assert os.path.getsize(path) == size


@requires_devices
def test_file_reuse_refuses_a_block_device_in_one_line(loopdev, tmp_path):
    p = ssdpts("run", loopdev, "--profile", SPAN_TINY, "--tests", "file-reuse", "--destroy-data",
               "--results", str(tmp_path), "-q", check=False)
    assert p.returncode != 0 and "Traceback" not in p.stderr
    assert "file-reuse needs a file target" in p.stderr


def test_span_sweep_on_the_simulated_drive(tmp_path):
    rid, store = run_completed("sim:client", tmp_path, SPAN_TINY, "span-sweep")
    s = summaries(store, rid)["span-sweep"]
    cap = s.capacity_bytes
    assert [p.span_bytes for p in s.points] == [4 * 2**20, 16 * 2**20, cap // 4096 * 4096]
    assert s.filled_bytes == cap // (128 * 1024) * 128 * 1024
    for p in s.points:
        assert p.span_fraction == pytest.approx(p.span_bytes / cap)
        assert p.read_iops > 0 and p.read_lat_mean_us > 0 and p.read_p99_us >= p.read_lat_mean_us * 0.5
        assert p.write_iops > 0            # quick (which the test profile extends) runs the writes too
    assert s.read_iops_drop == pytest.approx(s.points[-1].read_iops / s.points[0].read_iops)
    assert any("models no map cache" in n for n in s.notes)


def test_a_file_made_anew_is_locked_as_the_old_one_was(tmp_path):
    """file-reuse deletes the run's file (its lock let go, so the blocks are free) and locks the file fio makes."""
    from ssdpts.errors import SsdptsError
    from ssdpts.targets.hold import _lock_file, locked, relock, remove_locked_file

    path = tmp_path / "t.img"
    path.write_bytes(b"x" * 4096)
    with locked(str(path)):
        with pytest.raises(SsdptsError, match="another ssdpts run is using this file"):
            _lock_file(str(path))
        remove_locked_file(str(path))
        assert not path.exists()
        path.write_bytes(b"y")                              # fio made it anew
        relock(str(path))
        with pytest.raises(SsdptsError, match="another ssdpts run is using this file"):
            _lock_file(str(path))
    os.close(_lock_file(str(path)))                         # let go at the end of the run
