"""Health snapshots on the real NVMe driver: the counters move by what was written (NVMe rounding)."""

from __future__ import annotations

import pytest

WRITE_128K = 64           # 64 x 128 KiB + 1 x 4 KiB, direct: one NVMe Write command each
SECTORS = WRITE_128K * 256 + 8

HEALTH = r"""
import json, subprocess, sys
from ssdpts.health import deltas, snapshot
from ssdpts.health.record import HealthSnapshot
from ssdpts.targets import open_target
nvme, sata = sys.argv[1:3]
def smart_log():
    return json.loads(subprocess.run(["nvme", "smart-log", nvme, "-o", "json"], capture_output=True, text=True,
                                     check=True).stdout)
def dd(*args):
    subprocess.run(["dd", "if=/dev/urandom", f"of={nvme}", "oflag=direct", "status=none", *args], check=True)
t = open_target(nvme)
before, log_before = snapshot(t), smart_log()
dd("bs=128k", f"count={sys.argv[3]}")
dd("bs=4k", "count=1", "seek=8192")
after, log_after = snapshot(t), smart_log()
print(json.dumps({"before": before, "after": after, "log_before": log_before, "log_after": log_after,
                  "deltas": deltas(HealthSnapshot.from_dict(before), HealthSnapshot.from_dict(after)), "sata": snapshot(open_target(sata))}))
"""


@pytest.fixture(scope="module")
def health(vm) -> dict:
    return vm.py(HEALTH, vm.disk("nvme"), vm.disk("sata"), str(WRITE_128K))


def test_nvme_counters_follow_the_writes(health):
    lb, la = health["log_before"], health["log_after"]
    assert int(la["host_write_commands"]) - int(lb["host_write_commands"]) == WRITE_128K + 1
    # Data Units Written: thousands of 512-byte units, rounded up (NVMe 1.4 Figure 194): the difference of two
    # rounded-up totals is the floor or the ceiling of the written amount
    du = int(la["data_units_written"]) - int(lb["data_units_written"])
    assert SECTORS // 1000 <= du <= -(-SECTORS // 1000)


def test_health_records_and_deltas_read_them(health):
    before, after, d = health["before"], health["after"], health["deltas"]
    assert before["available"] and after["available"]
    assert after["model"] == "QEMU NVMe Ctrl" and after["serial"] == "SSDPTSNVME1"
    du = int(health["log_after"]["data_units_written"]) - int(health["log_before"]["data_units_written"])
    assert after["host_written_bytes"] - before["host_written_bytes"] == du * 512_000
    assert d["host_written_bytes"] == du * 512_000
    # QEMU has no media (NAND) write counter: WAF is "not available", never a made-up 1.0
    assert d["waf"] is None and "media_written_bytes" in d["missing"] and "waf" in d["missing"]
    assert after["percentage_used"] == 0 and after["temperature_c"] == 50      # QEMU: 323 K


def test_sata_health_says_what_is_missing(health):
    sata = health["sata"]
    assert sata["available"] and sata["serial"] == "SSDPTSSATA1"
    assert sata["host_written_bytes"] is None       # QEMU's ATA SMART has no attribute 241 (Total LBAs Written)
    assert sata["temperature_c"] == 31              # attribute 190, lowest byte of its raw value
