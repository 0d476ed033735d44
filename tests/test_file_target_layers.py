"""A file target names the drive under its file system through the layers between: a partition, a loop device
(its backing file and the file system that is on), dm (LVM, dm-linear) and md (raid1), or says which layer
hides the drive. The truth: `lsblk --inverse` and `findmnt` (util-linux, reading the kernel's own tables), and
for the fake sysfs trees the kernel's layout written out by hand. Every device made here is torn down."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import requires_devices
from ssdpts.health import snapshot
from ssdpts.targets import open_target
from ssdpts.targets.placement import block_stack, file_placement
from ssdpts.targets.sysfs import SysRoots

pytestmark = pytest.mark.no_end_report
MIB = 2**20


# ------------------------------------------------------------------------------------------------
# the walk over sysfs trees laid out as the kernel lays them out (no root needed)

def _fake_sys(tmp_path: Path, disks: dict[str, list[str]], holders: dict[str, tuple[str, list[str], dict]]) -> SysRoots:
    """disks: name -> partitions; holders: dm/md name -> (kind, slaves, extra files under the device)."""
    sys = tmp_path / "sys"
    (sys / "class" / "block").mkdir(parents=True)
    for disk, parts in disks.items():
        d = sys / "devices" / "pci0000:00" / "block" / disk
        (d / "queue").mkdir(parents=True)
        (d / "queue" / "logical_block_size").write_text("512\n")
        (sys / "class" / "block" / disk).symlink_to(d)
        for part in parts:
            (d / part).mkdir()
            (d / part / "partition").write_text("1\n")
            (sys / "class" / "block" / part).symlink_to(d / part)
    for name, (_, slaves, files) in holders.items():
        d = sys / "devices" / "virtual" / "block" / name
        (d / "slaves").mkdir(parents=True)
        for slave in slaves:
            (d / "slaves" / slave).symlink_to(os.path.realpath(sys / "class" / "block" / slave))
        for rel, text in files.items():
            (d / rel).parent.mkdir(parents=True, exist_ok=True)
            (d / rel).write_text(text)
        (sys / "class" / "block" / name).symlink_to(d)
    return SysRoots(sys=sys, proc=tmp_path / "proc", dev=tmp_path / "dev")


def test_lvm_over_a_partition_names_the_disk(tmp_path):
    roots = _fake_sys(tmp_path, {"sdb": ["sdb1"]},
                      {"dm-0": ("dm", ["sdb1"], {"dm/uuid": "LVM-abc\n", "dm/name": "vg0-data\n"})})
    s = block_stack("dm-0", roots)
    assert s.drives == ("sdb",) and s.why == ""
    assert s.layers == ("dm-0 (LVM 'vg0-data') over sdb1", "sdb1 (partition of sdb)", "sdb")


def test_md_raid1_over_two_disks_names_both(tmp_path):
    roots = _fake_sys(tmp_path, {"sdb": [], "sdc": []}, {"md0": ("md", ["sdb", "sdc"], {"md/level": "raid1\n"})})
    s = block_stack("md0", roots)
    assert s.drives == ("sdb", "sdc") and s.layers[0] == "md0 (md raid1) over sdb, sdc" and s.why == ""


def test_luks_on_lvm_on_md_walks_every_layer(tmp_path):
    roots = _fake_sys(tmp_path, {"nvme0n1": ["nvme0n1p2"], "nvme1n1": ["nvme1n1p2"]}, {
        "md127": ("md", ["nvme0n1p2", "nvme1n1p2"], {"md/level": "raid1\n"}),
        "dm-0": ("dm", ["md127"], {"dm/uuid": "LVM-x\n", "dm/name": "vg-root\n"}),
        "dm-1": ("dm", ["dm-0"], {"dm/uuid": "CRYPT-LUKS2-y\n", "dm/name": "root_crypt\n"})})
    s = block_stack("dm-1", roots)
    assert s.drives == ("nvme0n1", "nvme1n1")
    assert [x.split(" ")[0] for x in s.layers] == ["dm-1", "dm-0", "md127", "nvme0n1p2", "nvme0n1", "nvme1n1p2",
                                                    "nvme1n1"]
    assert "LUKS 'root_crypt'" in s.layers[0]


@pytest.mark.parametrize("name, what", [("nbd0", "a network block device"), ("zram0", "a compressed RAM disk"),
                                        ("rbd0", "a Ceph RBD image")])
def test_a_layer_with_no_drive_under_it_says_it_hides_the_drive(tmp_path, name, what):
    roots = _fake_sys(tmp_path, {}, {"dm-3": ("dm", [], {"dm/name": "empty\n"})})
    assert block_stack("dm-3", roots).why == ("not available: /dev/dm-3 (dm 'empty') hides the drive: it has no "
                                              "device under it in sysfs")
    assert block_stack(name, roots).why == f"not available: /dev/{name} ({what}) hides the drive"


# ------------------------------------------------------------------------------------------------
# real devices: loop, a partition on it, dm-linear, md raid1

def _run(*cmd: str, stdin: str | None = None) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True, input=stdin).stdout.strip()


def _lsblk_inverse(dev: str) -> list[str]:
    """The kernel's dependency chain from `dev` down, as lsblk --inverse prints it (names, top first)."""
    tree = json.loads(_run("lsblk", "--json", "--inverse", "-o", "NAME", dev))["blockdevices"]
    out = []
    while tree:
        out.append(tree[0]["name"])
        tree = tree[0].get("children") or []
    return out


def _findmnt_source(path: Path) -> str:
    return _run("findmnt", "-n", "-o", "SOURCE", "--target", str(path))


@contextmanager
def _loop(backing: Path, size: int, partition: bool = False):
    with open(backing, "wb") as f:
        f.truncate(size)
    if partition:
        _run("sfdisk", "-q", str(backing), stdin="label: dos\nstart=2048, type=83\n")
    dev = _run("losetup", "--direct-io=on", "-f", "--show", *(["-P"] if partition else []), str(backing))
    try:
        yield dev
    finally:
        subprocess.run(["losetup", "-d", dev], capture_output=True)
        backing.unlink(missing_ok=True)


@contextmanager
def _ext4_mounted(dev: str, point: Path):
    _run("mkfs.ext4", "-q", "-F", dev)
    point.mkdir()
    _run("mount", dev, str(point))
    try:
        yield point
    finally:
        subprocess.run(["umount", str(point)], capture_output=True)
        point.rmdir()
        left = subprocess.run(["findmnt", "-n", "--source", dev], capture_output=True, text=True).stdout
        assert not left.strip(), f"{dev} is still mounted: {left}"


def _wait_for(path: str) -> None:
    subprocess.run(["udevadm", "settle"], capture_output=True) if shutil.which("udevadm") else None
    for _ in range(50):
        if os.path.exists(path):
            return
        subprocess.run(["sleep", "0.1"])
    raise AssertionError(f"{path} did not appear")


@requires_devices
@pytest.mark.parametrize("partition", [False, True], ids=["loop", "partition-on-loop"])
def test_ext4_on_a_loop_device_over_a_file_on_this_machines_disk(tmp_path, partition):
    """file -> ext4 on loopN (or loopNp1 -> loopN) -> its backing file in tmp_path -> the disk holding tmp_path."""
    under = _findmnt_source(tmp_path)                      # the device the backing file's file system is on
    if not under.startswith("/dev/"):
        pytest.skip(f"{tmp_path} is on {under}, not on a block device")
    with _loop(tmp_path / "disk.img", 32 * MIB, partition=partition) as dev:
        part = f"{dev}p1" if partition else dev
        if partition and not Path(f"/sys/class/block/{Path(part).name}").exists():
            pytest.skip("this kernel reads no partition table on the loop device (CONFIG_MSDOS_PARTITION unset)")
        _wait_for(part)
        with _ext4_mounted(part, tmp_path / "mnt") as point:
            path = point / "t.img"
            where = file_placement(str(path))
            chain = _lsblk_inverse(part)                   # ['loopNp1', 'loopN'] or ['loopN']
            assert [layer.split(" ")[0] for layer in where.layers[:len(chain)]] == chain
            assert where.layers[len(chain) - 1] == f"{chain[-1]} (loop over {tmp_path / 'disk.img'})"
            top = _lsblk_inverse(os.path.realpath(under))[-1]   # a partition's disk, as lsblk sees it
            assert where.drives == (f"/dev/{top}",) and where.disk == f"/dev/{top}", where
            target = open_target(str(path), size=4 * MIB)
            assert target.info["health_device"] == f"/dev/{top}" and target.info["layers"] == list(where.layers)
            rec = snapshot(target)
            assert rec["device"] == f"/dev/{top}" and rec["file_placement"] == f"file on ext4 on {part}"
            path.unlink(missing_ok=True)


@requires_devices
def test_a_loop_device_over_a_file_in_ram_says_the_loop_hides_the_drive(tmp_path):
    shm = Path("/dev/shm")
    if not shm.is_dir() or _run("findmnt", "-n", "-o", "FSTYPE", "--target", str(shm)).splitlines()[-1:] != ["tmpfs"]:
        pytest.skip("no tmpfs at /dev/shm")
    backing = shm / f"ssdpts-test-{uuid.uuid4().hex[:8]}.img"
    with _loop(backing, 32 * MIB) as dev, _ext4_mounted(dev, tmp_path / "mnt") as point:
        target = open_target(str(point / "t.img"), size=4 * MIB)
        name = Path(dev).name
        why = (f"not available: /dev/{name} (loop) hides the drive: its backing file {backing} is on tmpfs, which "
               "has no block device")
        assert target.info["health_device"] is None and target.info["health_device_note"] == why
        rec = snapshot(target)
        assert not rec["available"] and why in rec["reason"]
        (point / "t.img").unlink(missing_ok=True)


def _kernel_has(what: str) -> str | None:
    if what == "dm" and not (Path("/dev/mapper/control").exists() and shutil.which("dmsetup")):
        return "this kernel has no device mapper (/dev/mapper/control) or dmsetup is not installed"
    if what == "md" and not (Path("/proc/mdstat").exists() and shutil.which("mdadm")):
        return "this kernel has no md driver (/proc/mdstat) or mdadm is not installed"
    return None


@requires_devices
@pytest.mark.skipif(_kernel_has("dm") is not None, reason=_kernel_has("dm") or "")
def test_ext4_on_dm_linear_over_a_loop_device(tmp_path, loop_factory):
    dev = loop_factory(32 * MIB)
    name = f"ssdpts-test-{uuid.uuid4().hex[:8]}"
    _run("dmsetup", "create", name, "--table", f"0 {32 * MIB // 512} linear {dev} 0")
    try:
        mapped = f"/dev/mapper/{name}"
        _wait_for(mapped)
        with _ext4_mounted(mapped, tmp_path / "mnt") as point:
            where = file_placement(str(point / "t.img"))
            chain = _lsblk_inverse(mapped)                 # [name, loopN]
            dm = Path(os.path.realpath(mapped)).name
            assert where.layers[0] == f"{dm} (dm '{name}') over {chain[1]}"
            assert where.layers[1].startswith(f"{chain[1]} (loop over ")
    finally:
        subprocess.run(["dmsetup", "remove", "--retry", name], capture_output=True)


@requires_devices
@pytest.mark.skipif(_kernel_has("md") is not None, reason=_kernel_has("md") or "")
def test_ext4_on_md_raid1_over_two_loop_devices_names_both(tmp_path, loop_factory):
    a, b = loop_factory(32 * MIB), loop_factory(32 * MIB)
    md = f"/dev/md/ssdpts-test-{uuid.uuid4().hex[:6]}"
    _run("mdadm", "--create", md, "--run", "--level=1", "--raid-devices=2", "--metadata=1.2", "--assume-clean",
         a, b, stdin="y\n")
    try:
        _wait_for(md)
        with _ext4_mounted(md, tmp_path / "mnt") as point:
            target = open_target(str(point / "t.img"), size=4 * MIB)
            real = Path(os.path.realpath(md)).name
            level = Path(f"/sys/block/{real}/md/level").read_text().strip()
            assert level == "raid1"
            layers = target.info["layers"]
            assert layers[0] == f"{real} (md raid1) over {', '.join(sorted(Path(x).name for x in (a, b)))}"
            rec = snapshot(target)
            assert rec["source"] == "set" and set(rec["members"]) == set(target.info.get("health_devices") or []) \
                or "hides the drive" in target.info["health_device_note"]
    finally:
        subprocess.run(["mdadm", "--stop", md], capture_output=True)
        subprocess.run(["mdadm", "--zero-superblock", a, b], capture_output=True)
