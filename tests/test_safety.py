"""Bad input never destroys data: each refusal leaves the device bytes unchanged."""

import os
import subprocess
from pathlib import Path

import pytest

from conftest import digest, requires_devices, ssdpts
from ssdpts.errors import SsdptsError
from ssdpts.targets.safety import check_block_device
from ssdpts.targets.sysfs import SysRoots

pytestmark = pytest.mark.no_end_report    # reads no end-of-run report (tests/conftest.py)


def refused(dev: str, *extra: str, match: str, tmp_path: Path) -> None:
    before = digest(dev)
    p = ssdpts("run", dev, "--tests", "latency", "--profile", "quick", "--results", str(tmp_path / "r"), *extra,
               check=False)
    assert p.returncode == 2, p.stderr
    lines = [l for l in p.stderr.strip().splitlines() if l]
    assert len(lines) == 1 and lines[0].startswith("ssdpts: error: refusing"), p.stderr
    assert match in lines[0], lines[0]
    assert digest(dev) == before


@requires_devices
def test_mounted_filesystem_is_refused_even_with_consent(loopdev, tmp_path):
    subprocess.run(["mkfs.ext4", "-q", "-E", "lazy_itable_init=0,lazy_journal_init=0", loopdev], check=True)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    subprocess.run(["mount", "-o", "ro", loopdev, str(mnt)], check=True)  # ro: ext4 writes nothing on its own
    try:
        refused(loopdev, "--destroy-data", match=f"mounted at {mnt}", tmp_path=tmp_path)
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


@requires_devices
def test_active_swap_is_refused(loopdev, tmp_path):
    subprocess.run(["mkswap", loopdev], check=True, capture_output=True)
    if subprocess.run(["swapon", loopdev], capture_output=True).returncode != 0:
        pytest.skip("swapon is not permitted here")
    try:
        refused(loopdev, "--destroy-data", match="active swap", tmp_path=tmp_path)
    finally:
        subprocess.run(["swapoff", loopdev], check=True)


@requires_devices
def test_signature_without_consent_is_refused_and_named(loopdev, tmp_path):
    subprocess.run(["mkfs.ext4", "-q", loopdev], check=True)
    refused(loopdev, match="ext4 filesystem", tmp_path=tmp_path)


@requires_devices
def test_blank_device_needs_consent(loopdev, tmp_path):
    refused(loopdev, match="--destroy-data", tmp_path=tmp_path)


@requires_devices
def test_device_held_by_another_program_is_refused(loopdev, tmp_path):
    fd = os.open(loopdev, os.O_RDONLY | os.O_EXCL)   # what mount, md or LVM do
    try:
        refused(loopdev, "--destroy-data", match="holds it exclusively (open by", tmp_path=tmp_path)
        refused(loopdev, "--destroy-data", match=f"(pid {os.getpid()})); stop that program", tmp_path=tmp_path)
    finally:
        os.close(fd)


# ---- partitions, holders and the root filesystem on a fake sysfs tree (no partition tables here) ----

def fake_tree(tmp_path: Path, *, mounted: dict[str, str] | None = None, holders: dict[str, list[str]] | None = None,
              swaps: list[str] | None = None) -> tuple[str, SysRoots]:
    sys_, proc = tmp_path / "sys", tmp_path / "proc"
    disk = sys_ / "block" / "nvme0n1"
    (disk / "queue").mkdir(parents=True)
    (disk / "dev").write_text("259:0\n")
    (disk / "size").write_text("2097152\n")
    (disk / "holders").mkdir()
    for i in (1, 2):
        part = disk / f"nvme0n1p{i}"
        (part / "holders").mkdir(parents=True)
        (part / "partition").write_text(f"{i}\n")
        (part / "dev").write_text(f"259:{i}\n")
    for name, hs in (holders or {}).items():
        base = disk if name == "nvme0n1" else disk / name
        for h in hs:
            (base / "holders" / h).mkdir()
    (sys_ / "dev" / "block").mkdir(parents=True)
    (sys_ / "dev" / "block" / "259:0").symlink_to(disk)
    (sys_ / "class" / "block").mkdir(parents=True)
    (sys_ / "class" / "block" / "nvme0n1").symlink_to(disk)
    for i in (1, 2):
        (sys_ / "class" / "block" / f"nvme0n1p{i}").symlink_to(disk / f"nvme0n1p{i}")
    (proc / "self").mkdir(parents=True)
    lines = [f"{30 + n} 1 {mm} / {where} rw - ext4 /dev/x rw" for n, (mm, where) in enumerate((mounted or {}).items())]
    (proc / "self" / "mountinfo").write_text("\n".join(lines) + "\n")
    (proc / "swaps").write_text("Filename Type Size Used Priority\n" +
                                "".join(f"{s} partition 1 0 -2\n" for s in (swaps or [])))
    node = tmp_path / "nvme0n1"
    os.mknod(node, 0o600 | 0o060000, os.makedev(259, 0))
    return str(node), SysRoots(sys=sys_, proc=proc)


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="mknod needs root")


@needs_root
def test_fake_mounted_partition(tmp_path):
    node, roots = fake_tree(tmp_path, mounted={"259:2": "/data"})
    with pytest.raises(SsdptsError, match=r"mounted at /data \(partition nvme0n1p2\)"):
        check_block_device(node, destroy_data=True, roots=roots)


@needs_root
def test_fake_root_filesystem(tmp_path):
    node, roots = fake_tree(tmp_path, mounted={"259:1": "/"})
    with pytest.raises(SsdptsError, match="root filesystem"):
        check_block_device(node, destroy_data=True, roots=roots)


@needs_root
@pytest.mark.parametrize("where", ["nvme0n1", "nvme0n1p1"])
def test_fake_holders(tmp_path, where):
    node, roots = fake_tree(tmp_path, holders={where: ["dm-0"]})
    with pytest.raises(SsdptsError, match=f"{where} is in use by dm-0"):
        check_block_device(node, destroy_data=True, roots=roots)


@needs_root
def test_fake_swap_partition(tmp_path):
    node, roots = fake_tree(tmp_path, swaps=["/dev/nvme0n1p2"])
    with pytest.raises(SsdptsError, match="active swap"):
        check_block_device(node, destroy_data=True, roots=roots)


@needs_root
def test_fake_unused_device_passes_with_consent(tmp_path):
    node, roots = fake_tree(tmp_path, mounted={"8:1": "/"})
    check_block_device(node, destroy_data=True, roots=roots)


@needs_root
def test_partition_purge_is_only_trim(tmp_path):
    from ssdpts.targets.base import Target
    from ssdpts.targets.purge import supported_methods

    node, roots = fake_tree(tmp_path)
    part = tmp_path / "nvme0n1p2"
    os.mknod(part, 0o600 | 0o060000, os.makedev(259, 2))
    ctrl = {"sanicap": 3, "oacs": 2, "fna": 0, "nn": 1}
    whole = Target("block", str(node), str(node), 1 << 30, info={"nvme_id_ctrl": ctrl, "discard_max_bytes": 1})
    assert supported_methods(whole, roots) == ["nvme-sanitize", "nvme-format", "trim"]
    p2 = Target("block", str(part), str(part), 1 << 29, info={"nvme_id_ctrl": ctrl, "discard_max_bytes": 1})
    assert supported_methods(p2, roots) == ["trim"]          # sanitize/format would erase the whole drive
    shared = dict(ctrl, nn=4, fna=1)                          # other namespaces, format applies to all of them
    many = Target("block", str(node), str(node), 1 << 30, info={"nvme_id_ctrl": shared, "discard_max_bytes": 1})
    assert supported_methods(many, roots) == ["trim"]


@needs_root
def test_purge_counts_active_namespaces_not_identify_nn(tmp_path):
    # Identify NN is the largest NSID (256 on QEMU's controller, tests/vm): one active namespace is a whole drive
    from ssdpts.targets.base import Target
    from ssdpts.targets.purge import supported_methods

    node, roots = fake_tree(tmp_path)
    ctrl = {"sanicap": 2, "oacs": 2, "fna": 1, "nn": 256}
    sole = Target("block", str(node), str(node), 1 << 30, info={"nvme_id_ctrl": ctrl, "namespaces": 1})
    assert supported_methods(sole, roots) == ["nvme-sanitize", "nvme-format"]
    two = Target("block", str(node), str(node), 1 << 30, info={"nvme_id_ctrl": ctrl, "namespaces": 2})
    assert supported_methods(two, roots) == []


def test_hdparm_abort_is_a_failure():
    # hdparm exits 0 when the drive aborts a SECURITY command (QEMU's AHCI disk, tests/vm/test_vm_purge.py)
    from ssdpts.targets.purge import _ata_aborted

    assert _ata_aborted("SG_IO: bad/missing sense data, sb[]:  70 00 0b 00 00 00 00 0a 04 41 40 01 00")
    assert not _ata_aborted("SG_IO: bad/missing sense data, sb[]:  70 00 00 00 00 00 00 0a 00 00 00 00 00")
    assert not _ata_aborted("")


@requires_devices
def test_resume_refuses_a_different_drive_under_the_same_name(loopdev, tmp_path, tiny):
    import signal
    import sys
    import time

    from conftest import wait_for_rounds
    from ssdpts.store import Store

    results = tmp_path / "r"
    proc = subprocess.Popen([sys.executable, "-m", "ssdpts", "run", loopdev, "--profile", tiny, "--tests", "iops",
                             "--destroy-data", "--results", str(results), "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    rid = wait_for_rounds(results / "ssdpts.db", "iops", 1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    time.sleep(0.3)
    # the same /dev/loopN now points at another backing file of the same size: another "drive"
    other = tmp_path / "other.img"
    with open(other, "wb") as f:
        f.truncate(64 * 2**20)
    subprocess.run(["losetup", "-d", loopdev], check=True)
    subprocess.run(["losetup", "--direct-io=on", loopdev, str(other)], check=True)
    before = digest(loopdev)
    p = ssdpts("resume", rid, "--results", str(results), check=False)
    assert p.returncode == 2 and "not the drive this run started on" in p.stderr, p.stderr
    assert digest(loopdev) == before
    run = Store(results / "ssdpts.db").run(rid)   # its process was killed: seen as interrupted, not failed
    assert run["status"] == "interrupted" and "is gone" in run["message"]
