"""File targets resolved to the drive under their file system, and the fs-vs-raw and TRIM studies on loop devices
(real fio, mkfs.ext4, fstrim). Nothing may stay mounted or attached: every test checks findmnt afterwards."""

from __future__ import annotations

import glob
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import HERE, requires_devices, run_completed
from ssdpts.clock import WALL
from ssdpts.errors import SsdptsError
from ssdpts.health import snapshot
from ssdpts.pts import registry
from ssdpts.targets import filesystem, open_target
from ssdpts.targets.filesystem import mounted_filesystem
from ssdpts.targets.placement import file_placement

FS_TINY = str(HERE / "profiles" / "fs-tiny.toml")
pytestmark = [requires_devices,
              pytest.mark.skipif(not filesystem.mkfs_available("ext4"), reason="mkfs.ext4 is not installed")]


def mounted_here(device: str) -> list[str]:
    out = subprocess.run(["findmnt", "-n", "-o", "TARGET", "--source", device], capture_output=True, text=True)
    return out.stdout.split()


def leftover_mount_dirs() -> set[str]:
    return set(glob.glob(os.path.join(tempfile.gettempdir(), "ssdpts-fs-*")))


@pytest.fixture
def ext4(loop_factory, tmp_path):
    """A 64 MiB loop device with ext4 mounted on tmp_path/mnt; unmounted (and checked) afterwards."""
    dev = loop_factory(64 * 2**20)
    subprocess.run(["mkfs.ext4", "-q", "-F", dev], check=True)
    point = tmp_path / "mnt"
    point.mkdir()
    subprocess.run(["mount", dev, str(point)], check=True)
    try:
        yield dev, point
    finally:
        subprocess.run(["umount", str(point)], capture_output=True)
        assert mounted_here(dev) == []


def summaries(store, rid):
    return {t["name"]: registry.get(t["name"]).decode(t["summary"]) for t in store.tests(rid)}


def test_a_file_target_knows_its_file_system_disk_and_sector_size(ext4):
    dev, point = ext4
    path = point / "t.img"
    where = file_placement(str(path))
    assert (where.filesystem, where.mount_point, where.device) == ("ext4", str(point), dev)
    assert where.logical_block_size == 512
    # the loop device's backing file is followed to the drive under it (LoopFactory keeps it in /dev/shm: tmpfs,
    # or /tmp: this machine's disk); test_file_target_layers.py checks each layer against lsblk
    backing = Path(f"/sys/block/{Path(dev).name}/loop/backing_file").read_text().strip()
    assert where.layers[0] == f"{Path(dev).name} (loop over {backing})"
    assert where.disk is not None or "hides the drive" in where.why_no_disk
    target = open_target(str(path), size=8 * 2**20)            # not created yet: the device's logical block
    assert target.logical_block_size == 512
    assert target.info["placement"] == f"file on ext4 on {dev}"
    path.write_bytes(os.urandom(64 * 1024))
    target = open_target(str(path))                            # existing: O_DIRECT probed, 512-byte reads accepted
    assert target.logical_block_size == 512 and "O_DIRECT probe" in target.info["logical_block_size_source"]
    # health comes from the drive under the layers, or says which layer hides it
    rec = snapshot(target)
    assert not rec["available"]
    assert rec["device"] == where.disk and "virtual block device" in rec["reason"] if where.disk else \
        "hides the drive" in rec["reason"]


def test_a_file_on_tmpfs_says_it_has_no_block_device(tmp_path):
    shm = Path("/dev/shm")
    if not shm.is_dir():
        pytest.skip("no /dev/shm")
    where = file_placement(str(shm / "ssdpts-nothing.img"))
    assert where.device is None and where.disk is None and where.filesystem == "tmpfs"
    assert where.why_no_disk == "not available: tmpfs has no block device"


def test_the_mount_is_always_undone_even_on_failure(loop_factory):
    dev = loop_factory(64 * 2**20)
    before = leftover_mount_dirs()
    with pytest.raises(RuntimeError):
        with mounted_filesystem(dev, "ext4") as point:
            assert mounted_here(dev) == [point]
            open(os.path.join(point, "busy"), "w").close()
            raise RuntimeError("a test failing while mounted")
    assert mounted_here(dev) == [] and leftover_mount_dirs() == before


def test_trim_is_refused_without_discard(monkeypatch, loopdev):
    monkeypatch.setattr(filesystem, "discard_max_bytes", lambda device, roots=None: 0)
    with pytest.raises(SsdptsError, match=r"does not support TRIM/discard \(discard_max_bytes = 0\)"):
        filesystem.trim_device(loopdev, 64 * 2**20)


def test_fs_vs_raw_and_trim_on_a_raw_device(loop_factory, tmp_path):
    dev = loop_factory(64 * 2**20)
    before = leftover_mount_dirs()
    rid, store = run_completed(dev, tmp_path / "r", FS_TINY, "fs-vs-raw,trim-study")
    assert mounted_here(dev) == [] and leftover_mount_dirs() == before
    s = summaries(store, rid)
    fs = s["fs-vs-raw"]
    assert (fs.filesystem, fs.placement, fs.capacity_bytes) == ("ext4", f"file on ext4 on {dev}", 64 * 2**20)
    assert fs.file_bytes == int(0.7 * 64 * 2**20) // 4096 * 4096
    assert [w.label for w in fs.workloads] == ["RND 4K read", "RND 4K write", "SEQ 128K read", "SEQ 128K write"]
    for w in fs.workloads:
        assert w.raw_iops > 0 and w.file_iops > 0 and w.iops_ratio == pytest.approx(w.file_iops / w.raw_iops)
        assert w.raw_mib_s == pytest.approx(w.raw_iops * w.block_size / 2**20, rel=0.02)
    trim = s["trim-study"]
    assert trim.method == "blkdiscard" and trim.trim.command == f"blkdiscard -f {dev}"
    assert trim.trim.seconds > 0 and trim.trim.bytes_trimmed == trim.trim.space_bytes == 64 * 2**20
    assert trim.trim.gib_per_s == pytest.approx(trim.trim.bytes_trimmed / 2**30 / trim.trim.seconds)
    assert [(r.phase, r.round) for r in trim.rounds] == [("before", 1), ("before", 2), ("after", 1), ("after", 2)]
    assert all(r.write_iops > 0 and r.read_iops > 0 for r in trim.rounds)
    starts = [r.start_s for r in trim.rounds]
    assert starts == sorted(starts) and trim.of("after")[0].start_s == pytest.approx(trim.trim_start_s + trim.trim.seconds)
    assert trim.level("before", "write_iops") == pytest.approx(sum(r.write_iops for r in trim.of("before")) / 2)
    # the text renderers (`show`) read the typed summaries; the registry test runs on the simulated SSD only
    shown = "\n".join(registry.get("fs-vs-raw").text(fs, WALL) + registry.get("trim-study").text(trim, WALL))
    assert "file on ext4 on" in shown and f"blkdiscard -f {dev}:" in shown


def test_trim_study_on_a_file_uses_fstrim(ext4, tmp_path):
    dev, point = ext4
    rid, store = run_completed(str(point / "t.img"), tmp_path / "r", FS_TINY, "trim-study", "--size", "32M")
    trim = summaries(store, rid)["trim-study"]
    assert trim.method == "fstrim" and trim.trim.command == f"fstrim -v {point}"
    assert trim.trim.seconds > 0 and 0 < trim.trim.bytes_trimmed <= trim.trim.space_bytes <= 64 * 2**20
    assert os.path.getsize(point / "t.img") == 32 * 2**20          # re-created after the TRIM
    assert all(r.write_iops > 0 for r in trim.rounds) and len(trim.of("after")) == 2


def fio_mb_s(store, rid: str, phase: str) -> dict[str, float]:
    """Per fio job (= cell) of a phase's rounds: MB/s (10^6 bytes/s) as fio's own JSON reports it (read + write
    bw_bytes), read from the raw output the rounds stored."""
    import json

    out, decoder = {}, json.JSONDecoder()
    for r in store.rounds(rid, "fs-vs-raw", phase, with_cells=False):
        text = store.raw_output(r.id)
        doc, _ = decoder.raw_decode(text[text.index("{"):])
        for job in doc["jobs"]:
            out[job["jobname"]] = (job["read"]["bw_bytes"] + job["write"]["bw_bytes"]) / 1e6
    return out


def test_fs_vs_raw_plots_mb_s_vs_block_size_with_and_without_a_partition(loop_factory, tmp_path, monkeypatch):
    """Seed 001 Figs 7-9: MB/s against block size, the raw device and the file system as two lines per access.
    The chart's points, read back from the figure as the report saved it, are fio's own bandwidth of each cell
    (its JSON, stored with the rounds), MB/s = 10^6 bytes/s, at the block sizes the profile asked."""
    from plotted import capture
    from ssdpts.report.html import write_report

    monkeypatch.setenv("SSDPTS_REPORT", "0")
    dev = loop_factory(64 * 2**20)
    rid, store = run_completed(dev, tmp_path / "r", str(HERE / "profiles" / "fs-bs-tiny.toml"), "fs-vs-raw")
    assert mounted_here(dev) == []
    fio = {side: fio_mb_s(store, rid, side) for side in ("raw", "file")}
    plotted = capture(monkeypatch)
    path = write_report(store, rid, tmp_path / "report")
    chart = plotted["fs-vs-raw-mb-vs-bs"]
    kib = {"RND": [4, 64], "SEQ": [16, 128]}
    panels = {title for title, _ in chart.lines}
    assert panels == {"RND read", "RND write", "SEQ read", "SEQ write"}
    assert chart.ylabels[0] == "MB/s (10^6 bytes/s)"
    for title in panels:
        kind, mix = title.split()
        for side, series in (("raw", "raw device (no partition)"), ("file", "file on ext4 (partition)")):
            x, y = chart.lines[(title, series)]
            cells = [f"{kind.lower()}_{k}K_{'100-0' if mix == 'read' else '0-100'}" for k in kib[kind]]
            assert x == kib[kind]
            assert y == pytest.approx([fio[side][c] for c in cells], rel=1e-6), (title, side)
            assert all(v > 0 for v in y)
    # the same points as a table beside the chart (CSV)
    csv_rows = (path.parent / "tables" / "fs-vs-raw-mb-vs-bs.csv").read_text().splitlines()
    assert len(csv_rows) == 1 + 8
