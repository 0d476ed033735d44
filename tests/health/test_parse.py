"""Health snapshot parsers on real-shaped smartctl / nvme-cli JSON (fixtures/), incl. counters > 2^53."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ssdpts.health import parse, snapshot
from ssdpts.health.parse import loads, merge, parse_document, parse_nvme_cli, parse_smartctl, to_int
from ssdpts.health.projection import deltas
from ssdpts.health.record import HealthSnapshot
from ssdpts.targets.base import Target

FIX = Path(__file__).parent / "fixtures"


def doc(name):
    return loads((FIX / name).read_text())


def test_attribute_table_is_data_and_loads():
    t = parse.table()
    fams = {f["name"]: f for f in t["family"]}
    assert {"micron", "intel", "samsung", "sandforce"} <= set(fams)
    assert {a["id"] for a in fams["micron"]["attributes"]} >= {173, 202, 246, 247, 248}
    assert {a["id"] for a in fams["intel"]["attributes"]} >= {233, 241, 249}
    assert {a["id"] for a in fams["samsung"]["attributes"]} >= {177, 241, 251}
    assert {a["id"] for a in fams["sandforce"]["attributes"]} >= {231, 233, 241}
    assert {e["path"] for e in t["neutral"]} >= {"endurance_used.current_percent", "spare_available.current_percent"}
    assert {e["field"] for e in t["nvme"]} >= {"host_written", "percentage_used", "temperature", "media_errors"}


def test_micron_mx300_seed_002_attributes_and_waf():
    b, a = parse_smartctl(doc("ata-micron-mx300-before.json")), parse_smartctl(doc("ata-micron-mx300-after.json"))
    assert a["available"] and a["family"] == "micron" and a["protocol"] == "ATA" and a["source"] == "smartctl"
    assert a["host_written_bytes"] == 32351612002 * 512                 # 246 Total_LBAs_Written x 512 B
    assert a["percentage_used"] == 3 and a["lifetime_remaining"] == 97  # 202 raw = % used
    assert a["erase_count_avg"] == 49 and a["temperature_c"] == 47 and a["power_on_hours"] == 116
    assert a["waf_host_units"] == 1010996703 and a["waf_media_units"] == 1010996703 + 2539844662
    assert a["waf_unit"].startswith("pages")
    assert a["media_written_bytes"] is None and "media_written_bytes" in a["missing"]
    assert a["timestamp"] == 1470000000 + 97 * 3600                      # smartctl local_time
    d = deltas(HealthSnapshot.from_dict(b), HealthSnapshot.from_dict(a))
    # (Δ247 + Δ248) / Δ247 on deltas, seed 002: ~3.51
    expect = ((1010996703 - 126377) + (2539844662 - 226832)) / (1010996703 - 126377)
    assert d["waf"] == pytest.approx(expect) and round(d["waf"], 2) == 3.51
    assert d["host_written_bytes"] == (32351612002 - 3941471) * 512
    assert d["wear_percent"] == 3 and d["elapsed_s"] == 97 * 3600
    assert a["raw"]["smartctl"]["ata_smart_attributes"]["table"][0].keys() == {"id", "name", "value", "worst",
                                                                                "thresh", "raw"}   # trimmed


def test_samsung_smartctl_73_devstat_vs_75_vendor_neutral_keys():
    old, new = parse_smartctl(doc("ata-samsung-860evo-smartctl73.json")), parse_smartctl(doc("ata-samsung-860evo-smartctl75.json"))
    assert old["family"] == new["family"] == "samsung"
    # 7.3: device statistics page 7 and page 1 win over the vendor attributes
    assert old["percentage_used"] == 4 and old["sources"]["percentage_used"].startswith("devstat page 7")
    assert old["host_written_bytes"] == 71234567890 * 512 and old["sources"]["host_written_bytes"].startswith("devstat")
    assert old["host_read_bytes"] == 81234567890 * 512
    assert old["available_spare"] is None and "available_spare" in old["missing"]
    # 7.5: endurance_used / spare_available; host writes from attribute 241 (no devstat in this file)
    assert new["percentage_used"] == 4 and new["sources"]["percentage_used"] == "endurance_used.current_percent"
    assert new["available_spare"] == 100 and new["available_spare_threshold"] == 10
    assert new["host_written_bytes"] == 71234567890 * 512 and "241" in new["sources"]["host_written_bytes"]
    assert new["erase_count_avg"] == 61 and new["temperature_c"] == 34 and new["media_errors"] == 0
    assert old["waf_host_units"] is None          # no 251 on a client 860: no WAF, said so
    assert "media_written_bytes" in old["missing"]


def test_intel_units_32mib_and_gib_give_waf_in_bytes():
    r = parse_smartctl(doc("ata-intel-s3700-smartctl72.json"))
    assert r["family"] == "intel"
    assert r["host_written_bytes"] == 1500000 * 32 * 2**20 and r["host_read_bytes"] == 900000 * 32 * 2**20
    assert r["media_written_bytes"] == 60000 * 2**30
    assert r["lifetime_remaining"] == 93 and r["percentage_used"] == 7      # 233 normalized = life left
    assert r["waf_unit"] == "bytes" and r["waf_media_units"] / r["waf_host_units"] == pytest.approx(60000 * 32 / 1500000)
    assert r["temperature_c"] == 25


def test_nvme_via_smartctl_prefers_exact_string_for_128_bit_counters():
    r = parse_smartctl(doc("nvme-smartctl73.json"))
    big = 2**64 + 12345
    assert r["protocol"] == "NVMe" and r["available"]
    assert r["host_written_bytes"] == big * 512000            # from data_units_written_s, not the rounded number
    assert isinstance(r["host_written_bytes"], int) and r["host_written_bytes"] > 2**53
    assert r["host_read_bytes"] == 88123456 * 512000
    assert r["percentage_used"] == 7 and r["available_spare"] == 100 and r["temperature_c"] == 41
    assert r["media_errors"] == 0 and r["power_on_hours"] == 8760
    # the little-endian byte array alone gives the same value
    d = doc("nvme-smartctl73.json")
    log = d["nvme_smart_health_information_log"]
    del log["data_units_written_s"]
    assert parse_smartctl(d)["host_written_bytes"] == big * 512000


def test_nvme_cli_big_bare_numbers_kelvin_and_id_ctrl():
    log, ctrl = doc("nvme-cli-smart-log.json"), doc("nvme-cli-id-ctrl.json")
    assert log["data_units_written"] == 2**55 + 3                     # exact: no float on the way
    r = parse_nvme_cli(log, ctrl, "/dev/nvme0n1")
    assert r["available"] and r["source"] == "nvme-cli" and r["protocol"] == "NVMe"
    assert r["host_written_bytes"] == (2**55 + 3) * 512000
    assert r["media_errors"] == 2**128 - 1
    assert r["temperature_c"] == 314 - 273                            # Kelvin -> °C
    assert r["model"] == "Samsung SSD 980 PRO 1TB" and r["serial"] == "S5GXNF0R123456A"
    assert r["capacity_bytes"] == 1000204886016
    # survives the results database (JSON text) exactly
    back = json.loads(json.dumps(r))
    assert back["media_errors"] == 2**128 - 1 and back["host_written_bytes"] == (2**55 + 3) * 512000
    # deltas beyond 2^53 stay exact
    later = dict(r, host_written_bytes=r["host_written_bytes"] + 512000)
    assert deltas(HealthSnapshot.from_dict(r), HealthSnapshot.from_dict(later))["host_written_bytes"] == 512000


def test_merge_smartctl_with_nvme_cli():
    s = parse_smartctl(doc("nvme-smartctl73.json"))
    s["available_spare"] = None
    n = parse_nvme_cli(doc("nvme-cli-smart-log.json"), doc("nvme-cli-id-ctrl.json"))
    m = merge(s, n)
    assert m["source"] == "smartctl+nvme-cli" and m["available_spare"] == 100
    assert m["host_written_bytes"] == (2**64 + 12345) * 512000          # smartctl's value kept
    assert "nvme_smart_log" in m["raw"] and "smartctl" in m["raw"]


@pytest.mark.parametrize("name, why", [("no-smart-loop.json", "Unable to detect device type"),
                                       ("no-smart-usb.json", "SMART is not supported")])
def test_device_without_smart(name, why):
    r = parse_smartctl(doc(name))
    assert r["available"] is False and why in r["reason"]
    assert set(r["missing"]) >= {"host_written_bytes", "percentage_used", "temperature_c"}
    assert all(why in v for v in r["missing"].values())


def test_to_int_forms():
    assert to_int("0x10") == 16 and to_int("1,234") == 1234 and to_int(12.0) == 12 and to_int(True) is None
    assert to_int({"hi": 1, "lo": 5}) == 2**64 + 5 and to_int("n/a") is None and to_int(None) is None
    assert to_int("340282366920938463463374607431768211455") == 2**128 - 1


def test_parse_document_detects_kind_and_timestamp():
    a = parse_document(doc("ata-micron-mx300-after.json"), mtime=5.0)
    assert a["timestamp_source"] == "local_time.time_t" and a["timestamp"] == 1470000000 + 97 * 3600
    n = parse_document(doc("nvme-cli-smart-log.json"), mtime=5.0)
    assert n["source"] == "nvme-cli" and n["timestamp"] == 5.0 and n["timestamp_source"] == "file mtime"
    x = parse_document([1, 2], mtime=5.0)
    assert x["available"] is False


def test_snapshot_never_raises_and_says_why(tmp_path):
    f = Target(kind="file", spec="x", path=str(tmp_path / "x.img"), size_bytes=1 << 20)
    r = snapshot(f)
    assert r["available"] is False and "file" in r["reason"]
    loop = Target(kind="block", spec="/dev/loop7", path="/dev/loop7", size_bytes=1 << 20, info={"transport": "loop"})
    r = snapshot(loop)
    assert r["available"] is False and "virtual block device (loop)" in r["reason"]
    assert snapshot(object())["available"] is False

    class Broken:
        kind = "sim"
        path = "sim:x"
        info = {}

        def counters(self):
            raise RuntimeError("boom")

    r = snapshot(Broken())
    assert r["available"] is False and "boom" in r["reason"]


def test_snapshot_of_block_devices_runs_smartctl_and_nvme_cli(monkeypatch):
    import ssdpts.health as h

    calls = []
    files = {("smartctl", "/dev/sdb"): "ata-micron-mx300-after.json", ("smartctl", "/dev/nvme0n1"): "nvme-smartctl73.json",
             ("smart-log", "/dev/nvme0n1"): "nvme-cli-smart-log.json", ("id-ctrl", "/dev/nvme0n1"): "nvme-cli-id-ctrl.json"}

    def fake(cmd):
        calls.append(cmd)
        key = (cmd[0] if cmd[0] == "smartctl" else cmd[1], cmd[3] if cmd[0] == "smartctl" else cmd[2])
        return (doc(files[key]), "") if key in files else (None, "no such device")

    monkeypatch.setattr(h, "_run_json", fake)
    monkeypatch.setattr(h, "_disk", lambda p: p.replace("p1", "") if "nvme" in p else p.rstrip("0123456789"))
    sata = Target(kind="block", spec="/dev/sdb1", path="/dev/sdb1", size_bytes=1 << 30, info={"transport": "sata/sas"})
    r = h.snapshot(sata)
    assert r["available"] and r["family"] == "micron" and calls[-1] == ["smartctl", "-j", "-a", "/dev/sdb"]
    nvme = Target(kind="block", spec="/dev/nvme0n1p1", path="/dev/nvme0n1p1", size_bytes=1 << 30, info={"transport": "nvme"})
    r = h.snapshot(nvme)
    assert r["source"] == "smartctl+nvme-cli" and r["model"] == "Samsung SSD 980 PRO 1TB"
    assert ["nvme", "smart-log", "/dev/nvme0n1", "-o", "json"] in calls
