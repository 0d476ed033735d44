"""NVMe passthrough targets on this host, without an NVMe drive: the ngXnY <-> nvmeXnY mapping read from a fake
sysfs shaped as Linux 6.1's (as the QEMU guest shows it, tests/vm/test_vm_passthrough.py runs the real one), a
character device opened as a namespace's generic device, and the engine choice and refusals for such a target."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from ssdpts.engines.blockidle import unavailable_reason
from ssdpts.engines.fio_versions import fio_binary, fio_version
from ssdpts.engines.ioengine import choose, refusals
from ssdpts.errors import SsdptsError
from ssdpts.targets.base import Target
from ssdpts.targets.resolve import open_target
from ssdpts.targets.safety import check_distinct
from ssdpts.targets.sysfs import SysRoots, is_nvme_generic, nvme_generic_block, nvme_generic_node
from ssdpts.workload import Workload
from ssdpts.workload.fio import render_on
from ssdpts.workload.ioengine import IoRequest

NULL_RDEV = os.stat("/dev/null").st_rdev     # a real character device to stand in for /dev/ng0n1


def _link(link: Path, to: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(os.path.relpath(to, link.parent))


def _namespace(sys: Path, parent: Path, ng: str, disk: str | None, disk_parent: Path | None = None) -> None:
    """A generic device (and a block device, when `disk`) under a controller or subsystem directory, as sysfs
    lays them out: /sys/class/*/NAME -> the device's directory, whose `device` points at its parent."""
    node = parent / ng
    node.mkdir(parents=True)
    _link(node / "device", parent)
    _link(sys / "class" / "nvme-generic" / ng, node)
    if disk:
        d = (disk_parent or parent) / disk
        (d / "queue").mkdir(parents=True)
        _link(d / "device", disk_parent or parent)
        _link(sys / "class" / "block" / disk, d)
        (d / "size").write_text("131072\n")
        (d / "dev").write_text("259:1\n")
        (d / "queue" / "logical_block_size").write_text("4096\n")


@pytest.fixture
def roots(tmp_path) -> SysRoots:
    sys = tmp_path / "sys"
    ctrl0 = sys / "devices" / "pci0000:00" / "0000:00:04.0" / "nvme" / "nvme0"
    _namespace(sys, ctrl0, "ng0n1", "nvme0n1")
    ctrl1 = sys / "devices" / "pci0000:00" / "0000:00:05.0" / "nvme" / "nvme1"
    _namespace(sys, ctrl1, "ng1n1", None)                                     # a namespace with no block device
    subsys = sys / "devices" / "virtual" / "nvme-subsystem" / "nvme-subsys2"  # native multipath: both on the subsystem
    _namespace(sys, subsys, "ng2n1", "nvme2n1")
    _namespace(sys, sys / "devices" / "pci0000:00" / "0000:00:06.0" / "nvme" / "nvme3", "ng3n1", "nvme3n1",
               disk_parent=ctrl0)                                             # the same numbers, another controller
    _link(sys / "dev" / "char" / f"{os.major(NULL_RDEV)}:{os.minor(NULL_RDEV)}", sys / "class" / "nvme-generic" / "ng0n1")
    _link(sys / "dev" / "block" / "259:1", ctrl0 / "nvme0n1")
    dev = tmp_path / "dev"
    dev.mkdir()
    os.mknod(dev / "nvme0n1", stat.S_IFBLK | 0o600, os.makedev(259, 1))
    return SysRoots(sys=sys, proc=tmp_path / "proc", dev=dev)


def test_generic_device_maps_to_its_namespace_block_device_and_back(roots):
    assert is_nvme_generic("ng0n1", roots) and not is_nvme_generic("nvme0n1", roots)
    assert nvme_generic_block("ng0n1", roots) == "nvme0n1" and nvme_generic_node("nvme0n1", roots) == "ng0n1"
    assert nvme_generic_block("ng2n1", roots) == "nvme2n1" and nvme_generic_node("nvme2n1", roots) == "ng2n1"
    assert nvme_generic_block("ng1n1", roots) is None                         # no block device made
    assert nvme_generic_block("ng3n1", roots) is None and nvme_generic_node("nvme3n1", roots) is None
    assert nvme_generic_node("sda", roots) is None


def test_a_generic_device_opens_as_its_namespace_block_device(roots):
    t = open_target("/dev/null", roots=roots, probe=False)       # /dev/null's major:minor is ng0n1 in this sysfs
    assert t.kind == "block" and t.path == str(roots.dev / "nvme0n1") and t.passthrough == "/dev/null"
    assert t.fio_filename == "/dev/null" and t.size_bytes == 131072 * 512 and t.logical_block_size == 4096
    assert "bypass the block layer" in t.info["passthrough"]
    assert "not available: passthrough bypasses the block layer" in unavailable_reason(t)


def test_a_character_device_that_is_no_generic_device_is_refused():
    with pytest.raises(SsdptsError, match=r"^/dev/null is a character device but not an NVMe generic device .*; name"):
        open_target("/dev/null")


def test_a_namespace_without_block_device_is_refused(roots):
    os.unlink(roots.sys / "dev" / "char" / f"{os.major(NULL_RDEV)}:{os.minor(NULL_RDEV)}")
    _link(roots.sys / "dev" / "char" / f"{os.major(NULL_RDEV)}:{os.minor(NULL_RDEV)}",
          roots.sys / "class" / "nvme-generic" / "ng1n1")
    with pytest.raises(SsdptsError, match=r"its namespace has no block device \(no /dev/nvme1n1.*; format"):
        open_target("/dev/null", roots=roots, probe=False)


PT = Target(kind="block", spec="/dev/ng0n1", path="/dev/nvme0n1", size_bytes=2**30, passthrough="/dev/ng0n1")
FILE = Target(kind="file", spec="/tmp/x.img", path="/tmp/x.img", size_bytes=2**30)


def _fio() -> tuple[str, str]:
    binary = fio_binary()
    return binary, fio_version(binary)


def test_auto_takes_io_uring_cmd_on_a_generic_device():
    choice = choose(IoRequest(), [PT], *_fio())
    assert choice.ioengine == "io_uring_cmd" and choice.job_options() == {"cmd_type": "nvme"}
    assert "NVMe generic character device" in choice.reason


@pytest.mark.parametrize("engine", ["libaio", "io_uring"])
def test_other_engines_are_refused_on_a_generic_device(engine):
    with pytest.raises(SsdptsError, match=rf"^{engine} cannot drive /dev/ng0n1, an NVMe generic character device "
                                          r".*; set ioengine = \"io_uring_cmd\" or \"auto\", or name the block device"):
        choose(IoRequest(engine), [PT], *_fio())


def test_io_uring_cmd_is_refused_for_a_file_and_for_a_fio_older_than_3_31():
    binary, version = _fio()
    assert refusals("io_uring_cmd", IoRequest("io_uring_cmd"), [FILE], binary, version)[0].startswith(
        "io_uring_cmd needs an NVMe generic character device (/dev/ngXnY) as the target, /tmp/x.img is not one")
    old = refusals("io_uring_cmd", IoRequest("io_uring_cmd"), [PT], binary, "fio-3.28")
    assert old == ["fio-3.28 cannot send NVMe commands (io_uring_cmd with cmd_type=nvme needs fio 3.31 or later); "
                   "install a newer fio, or name the namespace's block device with ioengine = \"io_uring\""]
    assert refusals("io_uring_cmd", IoRequest("io_uring_cmd"), [PT], binary, "fio-3.31") == []


def test_one_namespace_named_twice_is_refused():
    block = Target(kind="block", spec="/dev/nvme0n1", path="/dev/nvme0n1", size_bytes=2**30)
    with pytest.raises(SsdptsError, match=r"^refusing /dev/nvme0n1: it is the namespace of /dev/ng0n1, also named"):
        check_distinct([PT, block])


def test_the_job_opens_the_generic_device_without_o_direct():
    """fio refuses O_DIRECT on a character device ("destination does not support O_DIRECT", seen in the guest);
    passthrough commands never touch the page cache, so the job says direct=0 there and direct=1 elsewhere."""
    w = Workload("rnd_4K_100-0", "randread", bs=4096, runtime_s=1)
    text = render_on([w], [PT], ioengine="io_uring_cmd").text()
    assert "filename=/dev/ng0n1" in text and "direct=0" in text and "direct=1" not in text
    several = render_on([w], [PT, FILE], ioengine="io_uring_cmd")
    assert [o["direct"] for _, o in several.sections] == ["0", "1"]
