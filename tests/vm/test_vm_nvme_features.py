"""What QEMU's NVMe and AHCI drives show through the real kernel, read by ssdpts and checked against the
drives' own answers: LBA formats with metadata and T10 PI, a format into another LBA format, a purge by
NVMe Format, the PCIe link of a drive behind a root port of a set speed and width (and the above-interface
rule judging a run by it), power states, the composite temperature traced during a run, a critical warning
raised by the drive mid-run, and the SATA disk's TRIM bit and (absent) ATA security.

The drive is the session's `nvmepi` (tests/vm/testbed.py): one namespace of LBA format 1 (512 B + 8 B metadata)
with PI type 1 (QEMU `nvme-ns ms=8,pi=1`), its controller behind `pcie-root-port x-speed=8,x-width=4`.
Everything runs in one guest process (importing ssdpts under TCG costs seconds).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from vm.testbed import DRIVES, GUEST_XFER, HERE

PI_DRIVE = next(d for d in DRIVES if d.name == "nvmepi")
KELVIN = 273.15
ABOVE_TOLERANCE = 0.03      # docs/conformance.md "Plausibility: above-interface": 3 % above the link is allowed

FEATURES = r"""
import json, os, subprocess, sys, time
from click.testing import CliRunner
from ssdpts.cli import main
from ssdpts.targets import open_target
from ssdpts.targets.purge import purge
pi, ctrl, sata, profile, xfer = sys.argv[1:6]
name, sata_name = os.path.basename(pi), os.path.basename(sata)
def sh(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True).stdout
def cli(*args):
    r = CliRunner().invoke(main, list(args))
    return {"rc": r.exit_code, "out": r.output}
def info(dev):
    r = cli("info", dev, "--json")
    return json.loads(r["out"]) if r["rc"] == 0 else r
def read(path):
    try:
        return open(path).read().strip()
    except OSError:
        return None
def link(d):
    return {k: read(f"{d}/{k}") for k in ("current_link_speed", "current_link_width", "max_link_speed", "max_link_width")}
def id_ns():
    return json.loads(sh("nvme", "id-ns", pi, "-o", "json"))
def smart_log():
    return json.loads(sh("nvme", "smart-log", ctrl, "-o", "json"))
def zero(dev):
    return subprocess.run(["cmp", dev, "/dev/zero"], capture_output=True, text=True).stderr.startswith("cmp: EOF on " + dev)
def writes():
    return int(open(f"/sys/block/{name}/stat").read().split()[4])
out, t0 = {}, time.monotonic()
fn = os.path.realpath(f"/sys/class/nvme/{os.path.basename(ctrl)}/device")      # the controller's PCI function
out["fn"], out["port"] = os.path.basename(fn), os.path.basename(os.path.dirname(fn))
out["fn_link"], out["port_link"] = link(fn), link(os.path.dirname(fn))
out["id_ctrl"] = json.loads(sh("nvme", "id-ctrl", ctrl, "-o", "json"))
out["power_feature"] = sh("nvme", "get-feature", ctrl, "-f", "2")
out["id_ns_before"], out["integrity_before"] = id_ns(), read(f"/sys/block/{name}/integrity/format")
out["info_before"] = info(pi)
out["format"] = cli("format", pi, "--lba-format", "4", "--destroy-data")
out["id_ns_after"], out["integrity_after"] = id_ns(), read(f"/sys/block/{name}/integrity/format")
out["lbs_after"] = read(f"/sys/block/{name}/queue/logical_block_size")
out["info_after"] = info(pi)
subprocess.run(["dd", "if=/dev/urandom", f"of={pi}", "bs=1M", "count=1", "oflag=direct", "status=none"], check=True)
out["written_zero"] = zero(pi)
out["purge"] = purge(open_target(pi), "auto").to_dict()
out["purged_zero"] = zero(pi)
out["sata_smartctl"] = json.loads(sh("smartctl", "-j", "-i", sata))
out["sata_hdparm"] = sh("hdparm", "-I", sata)
out["sata_discard_max"] = read(f"/sys/block/{sata_name}/queue/discard_max_bytes")
out["sata_info"] = info(sata)
out["seconds_before_run"] = time.monotonic() - t0
# the run: once it writes (its `before` health snapshot and its purge are behind it) the drive's over-temperature
# threshold goes below its composite temperature, so the drive itself raises critical warning bit 1
w0 = writes()
run = subprocess.Popen(["ssdpts", "run", pi, "--profile", profile, "--destroy-data", "--purge", "auto",
                        "--results", "/tmp/features", "-q"], env={**os.environ, "SSDPTS_REPORT": "0"},
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
while writes() == w0 and run.poll() is None:
    time.sleep(0.05)
out["threshold"] = sh("nvme", "set-feature", ctrl, "-f", "4", "-v", "300")
out["smart_log_warned"] = smart_log()
out["smartctl_health_rc"] = subprocess.run(["smartctl", "-H", ctrl], capture_output=True).returncode
stdout, stderr = run.communicate(timeout=900)
out["run"] = {"rc": run.returncode, "out": stdout[-2000:], "err": stderr[-2000:]}
out["run_id"] = stdout.split()[-1] if stdout.split() else ""
subprocess.run(["cp", "-a", "/tmp/features", xfer], check=True)
out["smart_log_end"] = smart_log()
sh("nvme", "set-feature", ctrl, "-f", "4", "-v", str(out["id_ctrl"]["wctemp"]))   # back to the drive's own
out["seconds"] = time.monotonic() - t0
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def got(vm) -> dict:
    """The guest's findings; the run's results document is written here from the copied database (same code,
    native speed, as test_vm_e2e.py does)."""
    out = vm.py(FEATURES, vm.disk("nvmepi"), vm.ctrl("nvmepi"), vm.disk("sata"), str(HERE / "features.toml"),
                f"{GUEST_XFER}/features", timeout=900)
    print(f"nvme features in the guest: {out['seconds']:.0f} s ({out['seconds_before_run']:.0f} s before the run)")
    results = vm.xfer / "features"
    subprocess.run([sys.executable, "-m", "ssdpts", "export", out["run_id"], "--format", "json", "--out",
                    str(results / "doc"), "--results", str(results)], check=True, capture_output=True, timeout=300)
    out["doc"] = json.loads((results / "doc" / f"{out['run_id']}.json").read_text())
    print(f"the run in the guest: {out['doc']['run']['updated'] - out['doc']['run']['created']:.0f} s")
    return out


def rows(doc: dict) -> dict:
    from ssdpts.targets.facts import DeviceFacts
    return dict(DeviceFacts.from_dict(doc["info"]["facts"]).rows())


def test_lba_formats_with_metadata_and_protection_information(got):
    ns = got["id_ns_before"]
    # the drive's own Identify Namespace: LBAF 1 (512 + 8) in use, PI type 1 (QEMU nvme-ns ms=8,pi=1)
    assert ns["flbas"] & 0xF == 1 and ns["lbafs"][1] == {"ms": 8, "ds": 9, "rp": 0} and ns["dps"] & 0x7 == 1
    assert got["integrity_before"] == "T10-DIF-TYPE1-CRC"            # the kernel's block integrity profile
    facts = got["info_before"]["info"]["facts"]
    formats = {f["index"]: f for f in facts["lba_formats"]}
    assert len(formats) == ns["nlbaf"] + 1
    for i, f in enumerate(ns["lbafs"][:ns["nlbaf"] + 1]):
        assert (formats[i]["data_bytes"], formats[i]["metadata_bytes"]) == (2 ** f["ds"], f["ms"])
        assert formats[i]["in_use"] is (i == 1)
    shown = rows(got["info_before"])
    assert "LBAF 1: 512+8 (in use)" in shown["LBA formats"] and "LBAF 7: 4096+64" in shown["LBA formats"]
    # DPC 0x1f: types 1-3; DPS bit 3 clear (pil=0): PI in the metadata's last 8 bytes; FLBAS bit 4 clear (mset=0)
    assert shown["Protection (T10 PI)"] == ("type 1 enabled (PI in the last 8 bytes of the metadata, metadata in a "
                                            "separate buffer); supported: type 1, type 2, type 3")


def test_format_into_another_lba_format(got):
    assert got["format"]["rc"] == 0, got["format"]["out"]
    assert "into LBAF 4: 4096+0" in got["format"]["out"] and "logical block now 4096 bytes" in got["format"]["out"]
    ns = got["id_ns_after"]
    assert ns["flbas"] & 0xF == 4 and ns["dps"] & 0x7 == 0          # nvme format --lbaf=4 (PI: --pi=0)
    assert got["lbs_after"] == "4096" and got["integrity_after"] in (None, "none")
    after = got["info_after"]
    assert after["logical_block_size"] == 4096
    assert "LBAF 4: 4096+0 (in use)" in rows(after)["LBA formats"]
    assert rows(after)["Protection (T10 PI)"].startswith("not enabled")


def test_purge_by_nvme_format_and_crypto_erase_not_offered(vm, got):
    assert got["written_zero"] is False and got["purged_zero"] is True
    rec = got["purge"]
    assert rec["method"] == "nvme-format" and rec["snia_purge"] is True
    assert rec["command"] == f"nvme format {vm.disk('nvmepi')} --ses=1 --force"
    # QEMU 7.2's controller: FNA 0. Cryptographic erase is not advertised (bit 2), so it is not offered
    assert got["id_ctrl"]["fna"] & 0x4 == 0
    assert rows(got["info_after"])["Format NVM"] == (
        "supported (OACS bit 1), on one namespace at a time (FNA bit 0 clear): user-data erase (SES=1); "
        "cryptographic erase (SES=2) not offered (FNA bit 2 clear)")


def test_pcie_link_behind_the_root_port(got):
    speed, width = PI_DRIVE.port_link
    # the root port (QEMU x-speed/x-width) can carry 8 GT/s x4; QEMU's NVMe function advertises 2.5 GT/s x1
    # (hw/pci/pcie.c's default link capability), so that is what the link trains to: both ends say so in sysfs
    port, fn = got["port_link"], got["fn_link"]
    assert port["max_link_speed"] == f"{float(speed):.1f} GT/s PCIe" and port["max_link_width"] == width
    assert fn["current_link_speed"] == port["current_link_speed"] == "2.5 GT/s PCIe"
    assert fn["current_link_width"] == port["current_link_width"] == "1"
    ctl = got["info_before"]["info"]["facts"]["controller"]
    assert ctl["address"] == got["fn"] and ctl["driver"] == "nvme"
    assert ctl["link"] == {"speed_gt_s": 2.5, "width": 1} and ctl["max_link"] == {"speed_gt_s": 2.5, "width": 1}
    shown = rows(got["info_before"])
    assert shown["PCIe link"].startswith("2.5 GT/s x1 (250 MB/s raw link limit) now")
    assert f"behind {got['port']} " in shown["Controller"]
    assert f"(port link 2.5 GT/s x1 now, {speed} GT/s x{width} maximum)" in shown["Controller"]
    # stored with the run, where the report header and the above-interface rule read it
    stored = got["doc"]["target"]["info"]["facts"]["controller"]
    assert stored["link"] == {"speed_gt_s": 2.5, "width": 1} and stored["upstream"] == ctl["upstream"]


def test_power_states(got):
    psds = got["id_ctrl"]["psds"][:got["id_ctrl"]["npss"] + 1]
    facts = got["info_before"]["info"]["facts"]
    assert [(p["index"], p["max_power_w"], p["entry_latency_us"], p["exit_latency_us"]) for p in facts["power_states"]] \
        == [(i, p["max_power"] * 0.01, p["entry_lat"], p["exit_lat"]) for i, p in enumerate(psds)]   # MP in 0.01 W
    assert facts["current_power_state"] == int(got["power_feature"].split(":")[-1], 16) & 0x1F
    assert rows(got["info_before"])["Power states"].startswith("PS0* 25 W, entry 16 µs, exit 4 µs (current PS0")


def test_run_judged_by_the_link(got):
    doc = got["doc"]
    assert got["run"]["rc"] == 0, got["run"]
    assert doc["run"]["status"] == "completed"
    assert not [n for n in doc["conformance"]["notes"] if "above-interface not judged" in n]
    # what the run's 1 MiB reads moved (fio's IOPS per round) against the link both ends of it report
    tracked = [v for t in doc["tests"] for r in t["rounds"] if r["kind"] == "round" for v in r["tracking"].values()]
    top_mb_s = max(tracked) * 2**20 / 1e6
    limit_mb_s = 2.5e9 * 8 / 10 / 8 / 1e6                           # 2.5 GT/s, 8b/10b, one lane
    above = [d for d in doc["conformance"]["deviations"] if d["rule"] == "above-interface"]
    print(f"1 MiB random reads peaked at {top_mb_s:,.0f} MB/s; the link carries {limit_mb_s:,.0f} MB/s")
    if top_mb_s > limit_mb_s * (1 + ABOVE_TOLERANCE):
        assert above, f"{top_mb_s:,.0f} MB/s over a {limit_mb_s:,.0f} MB/s link and no above-interface deviation"
    for d in above:
        assert "PCIe 2.5 GT/s x1 (250 MB/s raw link limit), per direction" in d["evidence"]


def test_temperature_traced_during_the_run(got):
    steps = [s for t in got["doc"]["tests"] for s in t["steps"] if s["key"] == "temperature"]
    assert len(steps) == 1
    trace = steps[0]["data"]["drives"][0]
    assert trace["source"].startswith("kernel hwmon") and trace["interval_s"] == 0.25
    assert len(trace["celsius"]) >= 3 and trace["seconds"] == sorted(trace["seconds"]) and trace["seconds"][-1] > 0.5
    # QEMU's composite temperature is a fixed 323 K; the kernel's hwmon gives it in m°C (323 K = 49.85 °C)
    assert {round(c, 2) for c in trace["celsius"]} == {round(got["smart_log_end"]["temperature"] - KELVIN, 2)}


def test_critical_warning_raised_mid_run_is_a_health_event(got):
    # the drive's own SMART log after its over-temperature threshold (300 K) went below its 323 K: bit 1
    assert got["smart_log_warned"]["critical_warning"] == 0x02 and got["smart_log_end"]["critical_warning"] == 0x02
    health = {s["key"]: s["data"] for t in got["doc"]["tests"] for s in t["steps"] if s["key"].startswith("health:")}
    assert health["health:before"]["failures"] == [] and health["health:before"]["critical_warning"] == 0
    assert health["health:after"]["critical_warning"] == 0x02
    events = [d for d in got["doc"]["conformance"]["deviations"] if d["rule"] == "health-failure"]
    # smartctl's own verdict on the same drive: exit status bit 3, "SMART status: DISK FAILING"
    assert got["smartctl_health_rc"] & 0x8
    assert sorted(d["evidence"] for d in events) == ["after the test: NVMe critical warning 0x02",
                                                     "after the test: smartctl exit bit 3: SMART status: DISK FAILING"]


def test_sata_identify_trim_and_no_ata_security(vm, got):
    ata = got["sata_smartctl"]
    # QEMU's ide-hd with discard=unmap sets IDENTIFY word 169 bit 0 (TRIM); smartctl reads it
    assert ata["trim"]["supported"] is True and ata["serial_number"] == "SSDPTSSATA1"
    assert int(got["sata_discard_max"]) > 0
    doc = got["sata_info"]
    facts = rows(doc)
    assert facts["TRIM / deallocate"].startswith("supported (ATA DSM TRIM, IDENTIFY word 169)")
    assert f"kernel discards up to {int(got['sata_discard_max']):,} B per request" in facts["TRIM / deallocate"]
    # QEMU's hw/ide/core.c has no SECURITY commands (F1h-F6h) in its command table and leaves IDENTIFY word 82
    # bit 1 clear: no Security section, no ATA secure erase (test_vm_purge.py sees the ABRT)
    assert "ata_security" not in ata and "Security:" not in got["sata_hdparm"]
    assert doc["purge_methods"] == ["trim"]
