"""`ssdpts info` on the real kernel's NVMe, SATA (AHCI) and SCSI drivers, from real nvme-cli/smartctl output."""

from __future__ import annotations

import re
import subprocess

import pytest

MiB = 2**20

# one guest process for all `ssdpts info --json` calls (importing ssdpts under TCG costs seconds)
INFO_ALL = r"""
import json, sys
from click.testing import CliRunner
from ssdpts.cli import main
out = {}
for dev in sys.argv[1:]:
    r = CliRunner().invoke(main, ["info", dev, "--json"])
    out[dev] = {"rc": r.exit_code, "doc": json.loads(r.output) if r.exit_code == 0 else r.output}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def infos(vm) -> dict:
    devs = [vm.disk("nvme"), vm.disk("nvme2ns", 1), vm.disk("nvme2ns", 2), vm.disk("sata"), vm.disk("scsi")]
    out = vm.py(INFO_ALL, *devs)
    for dev, r in out.items():
        assert r["rc"] == 0, f"ssdpts info {dev}: {r['doc']}"
    return {dev: r["doc"] for dev, r in out.items()}


def qemu_version() -> str:
    text = subprocess.run(["qemu-system-x86_64", "--version"], capture_output=True, text=True).stdout
    return re.search(r"version (\d+\.\d+\.\d+)", text).group(1)


def test_info_nvme(vm, infos):
    doc = infos[vm.disk("nvme")]
    info = doc["info"]
    assert info["model"] == "QEMU NVMe Ctrl"
    assert info["serial"] == "SSDPTSNVME1"
    assert info["firmware"] == qemu_version()[:8]            # QEMU reports its own version as FR (8 chars)
    assert info["transport"] == "nvme"
    assert info["lba_format"] == "LBAF 0: 512 B data + 0 B metadata (of 8 formats)"
    assert info["namespaces"] == 1                           # active namespaces ...
    assert info["nvme_id_ctrl"]["nn"] == 256                 # ... while Identify NN is the largest NSID
    assert doc["size_bytes"] == 64 * MiB and doc["logical_block_size"] == 512
    assert info["write_cache"] == "write back"
    assert doc["purge_methods"] == ["nvme-format", "trim"]   # QEMU 7.2: SANICAP 0, OACS format bit set


def test_info_nvme_two_namespaces(vm, infos):
    for ns in (1, 2):
        info = infos[vm.disk("nvme2ns", ns)]["info"]
        assert info["serial"] == "SSDPTSNVME2"
        assert info["namespaces"] == 2
        assert infos[vm.disk("nvme2ns", ns)]["size_bytes"] == 64 * MiB


def test_info_sata(vm, infos):
    doc = infos[vm.disk("sata")]
    info = doc["info"]
    assert info["model"] == "SSDPTS SATA DISK"
    assert info["serial"] == "SSDPTSSATA1"
    assert info["firmware"] == "2.5+"                        # QEMU's ATA IDENTIFY firmware revision
    assert info["transport"] == "sata"
    assert info["smartctl_device_type"] == "sat"
    assert info["lba_format"] == "512 B logical / 512 B physical"
    assert "namespaces" not in info
    assert info["rotational"] is False                       # rotation_rate=1: reports as a non-rotating SSD
    assert doc["size_bytes"] == 128 * MiB
    # no ATA Security feature set on QEMU's disk, and SCSI FORMAT UNIT is not translated by libata
    assert doc["purge_methods"] == ["trim"]


def test_info_scsi(vm, infos):
    doc = infos[vm.disk("scsi")]
    info = doc["info"]
    assert info["model"] == "QEMU HARDDISK"
    assert info["serial"] == "SSDPTSSCSI1"                   # from smartctl's SCSI fields (scsi_model_name ...)
    assert info["firmware"] == "2.5+"
    assert info["transport"] == "scsi/sas"
    assert info["smartctl_device_type"] == "scsi"
    assert doc["purge_methods"] == ["sg-format", "trim"]
