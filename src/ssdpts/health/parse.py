"""smartctl / nvme-cli / simulator health data -> one normalised record (fields in docs/endurance.md).

Everything here is pure: JSON in, dict out, never raises on odd input (missing or odd values land in
`missing`). Counters are Python ints, exact beyond 2^53: JSON is parsed with Python's arbitrary
precision ints, smartctl's `KEY_s` decimal strings win over the (possibly rounded) numbers, and
floats are never used for counters.
"""

from __future__ import annotations

import json
import re
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..exact import to_int  # noqa: F401  (health.parse.to_int: the name other modules use)

TABLE = Path(__file__).with_name("attributes.toml")
RECORD_VERSION = 1

# normalised fields: name -> unit in the record
FIELDS = {
    "host_written_bytes": "bytes", "host_read_bytes": "bytes", "media_written_bytes": "bytes",
    "percentage_used": "%", "lifetime_remaining": "%", "available_spare": "%", "available_spare_threshold": "%",
    "temperature_c": "°C", "media_errors": "count", "power_on_hours": "hours", "erase_count_avg": "P/E cycles",
    "critical_warning": "bits", "unsafe_shutdowns": "count",
    "thermal_t1_transitions": "count", "thermal_t2_transitions": "count", "thermal_t1_seconds": "s",
    "thermal_t2_seconds": "s",
}
# NVMe host-controlled thermal management counters: nvme-cli only (smartctl's JSON lacks them, smartmontools #583)
_THERMAL = {"thm_temp1_trans_count": "thermal_t1_transitions", "thm_temp2_trans_count": "thermal_t2_transitions",
            "thm_temp1_total_time": "thermal_t1_seconds", "thm_temp2_total_time": "thermal_t2_seconds"}
# table field name -> record key (byte counters get a _bytes suffix, temperature a _c suffix)
_KEY = {"host_written": "host_written_bytes", "host_read": "host_read_bytes", "media_written": "media_written_bytes",
        "temperature": "temperature_c"}
_REPORTED = ("host_written_bytes", "host_read_bytes", "media_written_bytes", "percentage_used", "available_spare",
             "temperature_c", "media_errors", "power_on_hours")


@lru_cache(maxsize=1)
def table() -> dict:
    import tomllib     # here: a stored run's health is read (show) without parsing a drive's table
    return tomllib.loads(TABLE.read_text())


# ------------------------------------------------------------------------------------------------
# exact numbers

def to_num(v: Any) -> float | int | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return v
    if isinstance(v, str):
        m = re.match(r"^\s*(-?\d+(?:\.\d+)?)", v)
        return (float(m.group(1)) if "." in m.group(1) else int(m.group(1))) if m else None
    if isinstance(v, dict) and "value" in v:
        return to_num(v["value"])
    return None


def loads(text: str | bytes) -> Any:
    """JSON with exact big integers (Python ints are arbitrary precision; only floats are lossy)."""
    return json.loads(text)


def _exact(obj: dict, key: str) -> int | None:
    """smartctl prints 128-bit values not exact as a double also as KEY_s (decimal string): prefer it."""
    if not isinstance(obj, dict):
        return None
    n = to_int(obj.get(f"{key}_s"))
    if n is not None:
        return n
    le = obj.get(f"{key}_le")          # little-endian bytes: exact too
    if isinstance(le, list) and le and all(isinstance(b, int) and 0 <= b < 256 for b in le):
        return int.from_bytes(bytes(le), "little")
    return to_int(obj.get(key))


def _path(doc: dict, dotted: str) -> Any:
    cur: Any = doc
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def unit_bytes(unit: str, lba: int = 512) -> int | None:
    if unit == "lba":
        return lba
    u = table()["units"].get(unit)
    return int(u) if u is not None else None


# ------------------------------------------------------------------------------------------------
# the record

def empty_record(source: str, reason: str | None = None) -> dict:
    rec: dict = {"record_version": RECORD_VERSION, "available": False, "source": source, "timestamp": time.time(),
                 "device": None, "protocol": None, "model": None, "serial": None, "firmware": None, "family": None}
    for k in FIELDS:
        rec[k] = None
    rec.update({"waf_host_units": None, "waf_media_units": None, "waf_unit": None, "attributes": {},
                "missing": {}, "raw": {}})
    if reason:
        rec["reason"] = reason
    return rec


def _set(rec: dict, field: str, value, how: str, *, force: bool = False) -> None:
    key = _KEY.get(field, field)
    if value is None:
        return
    if rec.get(key) is None or force:
        rec[key] = value
        rec.setdefault("sources", {})[key] = how


def finish(rec: dict) -> dict:
    """Derive the pairs (used <-> remaining), mark what is missing and why, decide `available`."""
    if rec.get("percentage_used") is None and rec.get("lifetime_remaining") is not None:
        rec["percentage_used"] = max(0, 100 - rec["lifetime_remaining"])
        rec.setdefault("sources", {})["percentage_used"] = "100 - lifetime_remaining"
    if rec.get("lifetime_remaining") is None and rec.get("percentage_used") is not None:
        rec["lifetime_remaining"] = max(0, 100 - rec["percentage_used"])
    if rec.get("waf_host_units") is None and rec.get("media_written_bytes") is not None \
            and rec.get("host_written_bytes") is not None:
        rec["waf_host_units"], rec["waf_media_units"] = rec["host_written_bytes"], rec["media_written_bytes"]
        rec["waf_unit"] = "bytes"
    if rec["available"] and all(rec.get(k) is None for k in _REPORTED):
        rec["available"] = False
        rec["reason"] = rec.get("reason") or "the device reports no health counters ssdpts understands"
    why = rec.get("reason") or "not reported by this device"
    for k in [k for k in rec["missing"] if rec.get(k) is not None]:
        del rec["missing"][k]                       # a later source gave it after all
    for k in _REPORTED:
        if rec.get(k) is None and k not in rec["missing"]:
            rec["missing"][k] = why if not rec["available"] else _why_missing(rec, k)
    return rec


# what a missing counter is called in its "not available" line
_COUNTER_NAMES = {"percentage_used": "wear", "host_written_bytes": "written-bytes", "host_read_bytes": "read-bytes",
                  "media_written_bytes": "NAND-written-bytes"}


def _why_missing(rec: dict, key: str) -> str:
    """Why an available record lacks `key`: a hard disk has no wear; an SSD whose vendor attribute ssdpts does not
    know says so by model (never a guess from an attribute whose name declares no unit)."""
    model = rec.get("model") or "this drive"
    rpm = rec.get("rotation_rate")
    if key in ("percentage_used", "media_written_bytes") and isinstance(rpm, int) and rpm > 0:
        return f"not available: {model} is a hard disk ({rpm} rpm): it has no flash wear or NAND write counter"
    if key == "media_written_bytes" and rec.get("protocol") == "NVMe":
        return "not available: the NVMe health log has no NAND/media write counter (WAF needs one)"
    if key in _COUNTER_NAMES and rec.get("protocol") in ("ATA", "SCSI"):
        return f"not available: {model}'s {_COUNTER_NAMES[key]} attribute is not known"
    return "not available: not reported by this device"


# ------------------------------------------------------------------------------------------------
# smartctl -j -a

def smartctl_messages(doc: dict) -> list[str]:
    tool = doc.get("smartctl") if isinstance(doc.get("smartctl"), dict) else {}
    msgs = tool.get("messages")
    return [str(m.get("string", "")) for m in msgs if isinstance(m, dict)] if isinstance(msgs, list) else []


# smartctl(8), RETURN VALUES: the bits that say something is wrong now (5-7 are history: kept as warnings)
SMARTCTL_FAILURE_BITS = {0: "command line did not parse", 1: "device open failed or it did not identify",
                         2: "a SMART or other command to the device failed", 3: "SMART status: DISK FAILING",
                         4: "pre-fail attributes at or below threshold"}
SMARTCTL_WARNING_BITS = {5: "attributes were at or below threshold in the past",
                         6: "the device error log contains errors", 7: "the self-test log contains errors"}


def smartctl_failures(doc: dict) -> tuple[list[str], list[str]]:
    """(failures, warnings) from smartctl's exit status bits, SMART status and NVMe critical warning, each
    with smartctl's own message: recorded as failures, never dropped."""
    status = to_int((doc.get("smartctl") or {}).get("exit_status")) or 0
    msgs = "; ".join(m for m in smartctl_messages(doc) if m)
    tail = f" ({msgs})" if msgs else ""
    failures = [f"smartctl exit bit {b}: {what}{tail}" for b, what in SMARTCTL_FAILURE_BITS.items() if status >> b & 1]
    warnings = [f"smartctl exit bit {b}: {what}" for b, what in SMARTCTL_WARNING_BITS.items() if status >> b & 1]
    if (doc.get("smart_status") or {}).get("passed") is False and not status >> 3 & 1:
        failures.append(f"SMART overall-health self-assessment: FAILED{tail}")
    crit = to_int((doc.get("nvme_smart_health_information_log") or {}).get("critical_warning"))
    if crit:
        failures.append(f"NVMe critical warning 0x{crit:02x}")
    return failures, warnings


def _timestamp(doc: dict) -> float | None:
    lt = doc.get("local_time")
    t = lt.get("time_t") if isinstance(lt, dict) else None
    return float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) else None


def _family(model: str) -> dict | None:
    for fam in table()["family"]:
        if any(re.search(rx, model or "", re.I) for rx in fam["models"]):
            return fam
    return None


def _attr_value(a: dict, source: str, unit: str):
    raw = a.get("raw") or {}
    if source == "normalized":
        return to_num(a.get("value"))
    if unit in ("C", "hours"):           # packed raw values: "47 (Min/Max 20/48)", "19h+30m+10s"
        s = raw.get("string")
        n = to_num(s) if isinstance(s, str) else None
        if n is not None:
            return n
        v = to_int(raw.get("value"))
        return None if v is None else (v & 0xFF if unit == "C" else v & 0xFFFFFFFF)
    return to_int(raw.get("value"))


def _store_attr(rec: dict, entry: dict, a: dict, lba: int, how: str, waf: dict) -> None:
    field, unit, source = entry["field"], entry["unit"], entry.get("source", "raw")
    v = _attr_value(a, source, unit)
    if v is None:
        return
    raw = to_int((a.get("raw") or {}).get("value"))
    if entry.get("by_name") and source == "normalized" and unit == "%" and raw is not None and 0 < raw <= 100 \
            and raw != v:
        # a "% left" whose raw value is a different percentage (Phison's SSD_Life_Left, SMI's
        # Remaining_Lifetime_Perc): which of the two is the wear is not known, so neither is used
        rec["missing"].setdefault("percentage_used", (
            f"not available: {rec.get('model') or 'this drive'}'s wear attribute is not known ({a.get('name')} "
            f"says {v} normalized and {raw} raw: which one is the % left is not known)"))
        return
    rec["attributes"][str(a.get("id"))] = {"id": a.get("id"), "name": a.get("name"), "field": field,
                                           "value": v, "source": source, "unit": unit}
    for role in entry.get("waf", []):
        waf[role].append((v, unit))
    if field in ("waf_host", "waf_media"):
        return
    if unit in ("lba", "32MiB", "GiB", "bytes", "data_units"):
        b = unit_bytes(unit, lba)
        _set(rec, field, v * b if b else None, how)
    else:
        _set(rec, field, v, how)


def _waf_counters(rec: dict, waf: dict, lba: int) -> None:
    host, media = waf["host"], waf["media"]
    if not host or not media:
        return
    units = {u for _, u in host + media}
    if len(units) == 1:
        u = units.pop()
        rec["waf_host_units"] = sum(v for v, _ in host)
        rec["waf_media_units"] = sum(v for v, _ in media)
        b = unit_bytes(u, lba)
        rec["waf_unit"] = "bytes" if b == 1 else f"{u} ({b} bytes)" if b else u
        if b and b != 1:
            rec["waf_host_units"] *= b
            rec["waf_media_units"] *= b
            rec["waf_unit"] = "bytes"
        return
    sizes = [unit_bytes(u, lba) for u in units]
    if all(sizes):
        rec["waf_host_units"] = sum(v * unit_bytes(u, lba) for v, u in host)
        rec["waf_media_units"] = sum(v * unit_bytes(u, lba) for v, u in media)
        rec["waf_unit"] = "bytes"


def _trim_smartctl(doc: dict) -> dict:
    keep = ("json_format_version", "smartctl", "device", "model_family", "model_name", "serial_number",
            "firmware_version", "user_capacity", "logical_block_size", "physical_block_size", "rotation_rate",
            "smart_support", "smart_status", "local_time", "temperature", "power_on_time", "power_cycle_count",
            "nvme_smart_health_information_log", "endurance_used", "spare_available", "host_writes", "host_reads",
            "scsi_percentage_used_endurance_indicator", "scsi_model_name", "scsi_revision", "revision",
            "scsi_error_counter_log")
    out = {k: doc[k] for k in keep if k in doc}
    if isinstance(out.get("smartctl"), dict):
        out["smartctl"] = {k: v for k, v in out["smartctl"].items() if k in ("version", "argv", "exit_status", "messages")}
    tab = (doc.get("ata_smart_attributes") or {}).get("table")
    if isinstance(tab, list):
        out["ata_smart_attributes"] = {"table": [{k: a.get(k) for k in ("id", "name", "value", "worst", "thresh", "raw")}
                                                 for a in tab if isinstance(a, dict)]}
    pages = (doc.get("ata_device_statistics") or {}).get("pages")
    if isinstance(pages, list):
        out["ata_device_statistics"] = {"pages": [
            {"number": p.get("number"), "table": [{k: e.get(k) for k in ("offset", "name", "value")}
                                                  for e in p.get("table") or [] if isinstance(e, dict)]}
            for p in pages if isinstance(p, dict) and p.get("number") in (1, 5, 7)]}
    return out


def parse_smartctl(doc: dict, device: str | None = None) -> dict:
    """`smartctl -j -a DEV` (any version >= 7.0; ATA, NVMe, SCSI) -> record."""
    rec = empty_record("smartctl")
    if not isinstance(doc, dict):
        rec["reason"] = "smartctl output is not a JSON object"
        return finish(rec)
    rec["timestamp"] = _timestamp(doc) or rec["timestamp"]
    rec["raw"]["smartctl"] = _trim_smartctl(doc)
    dev = doc.get("device") if isinstance(doc.get("device"), dict) else {}
    rec["device"] = device or dev.get("name")
    rec["protocol"] = dev.get("protocol")
    from ..targets.identify import smartctl_identity   # here: reading a stored record needs no identify code

    ident = smartctl_identity(doc)
    rec["model"], rec["serial"], rec["firmware"] = ident.model, ident.serial, ident.firmware
    rec["capacity_bytes"], rec["rotation_rate"] = ident.capacity_bytes, ident.rotation_rate
    sv = (doc.get("smartctl") or {}).get("version")
    rec["smartctl_version"] = ".".join(map(str, sv)) if isinstance(sv, list) else None
    lba = to_int(doc.get("logical_block_size")) or 512
    status = to_int((doc.get("smartctl") or {}).get("exit_status")) or 0
    rec["failures"], rec["warnings"] = smartctl_failures(doc)
    hidden = raid_hidden(doc)
    if hidden:
        rec["reason"] = hidden
        return finish(rec)
    if status & 0b11 or (not rec["model"] and not dev):
        msgs = "; ".join(smartctl_messages(doc)) or f"smartctl exit status {status}"
        rec["reason"] = f"smartctl could not read the device: {msgs}"
        return finish(rec)
    support = doc.get("smart_support") or {}
    if isinstance(support, bool):           # some smartctl builds print smart_support: true/false
        support = {"available": support}
    if isinstance(support, dict) and (support.get("available") is False or support.get("enabled") is False):
        rec["reason"] = ("SMART is not supported by this device" if support.get("available") is False
                         else "SMART is disabled on this device (smartctl -s on enables it)")
    rec["available"] = True
    if not _HEALTH_KEYS.intersection(doc) and not rec.get("reason"):
        argv = (doc.get("smartctl") or {}).get("argv") if isinstance(doc.get("smartctl"), dict) else None
        args = " ".join(map(str, argv)) if isinstance(argv, list) and argv else "this smartctl command"
        rec["reason"] = (f"not available: the output of '{args}' holds no health counters, only the drive's "
                         "identity or status (save 'smartctl -j -a DEV')")

    # 1. NVMe health log
    log = doc.get("nvme_smart_health_information_log")
    if isinstance(log, dict):
        rec["protocol"] = rec["protocol"] or "NVMe"
        _nvme_fields(rec, log, "smartctl", "nvme_smart_health_information_log")
    # 2. vendor-neutral keys (7.5+: endurance_used / spare_available; 8.0: host_writes)
    for e in table()["neutral"]:
        v = _path(doc, e["path"])
        if isinstance(v, dict):
            v = v.get("value")
        v = to_num(v)
        _set(rec, e["field"], v, e["path"])
    for key, field in (("host_writes", "host_written"), ("host_reads", "host_read")):
        hw = doc.get(key)
        if isinstance(hw, dict):
            units, per = _exact(hw, "units"), to_int(hw.get("bytes_per_unit"))
            b = _exact(hw, "bytes")
            _set(rec, field, b if b is not None else (units * per if units is not None and per else None), key)
    # 3. ATA device statistics
    pages = {p.get("number"): p for p in (doc.get("ata_device_statistics") or {}).get("pages") or []
             if isinstance(p, dict)}
    for e in table()["devstat"]:
        entry = next((x for x in (pages.get(e["page"]) or {}).get("table") or []
                      if isinstance(x, dict) and to_int(x.get("offset")) == e["offset"]), None)
        if entry is None or (entry.get("flags") or {}).get("valid") is False:
            continue
        v = to_int(entry.get("value"))
        if v is not None and e["unit"] == "lba":
            v *= lba
        _set(rec, e["field"], v, f"devstat page {e['page']} offset {e['offset']:#05x}")
    # 4./5. ATA attributes: the family table, then by smartctl name
    attrs = [a for a in (doc.get("ata_smart_attributes") or {}).get("table") or [] if isinstance(a, dict)]
    if attrs:
        rec["protocol"] = rec["protocol"] or "ATA"
        fam = _family(rec["model"] or "")
        waf: dict = {"host": [], "media": []}
        if fam:
            rec["family"] = fam["name"]
            rec["waf_formula"] = fam.get("waf")
            for entry in fam["attributes"]:
                for a in attrs:
                    if a.get("id") == entry["id"] and (not entry.get("names") or a.get("name") in entry["names"]):
                        _store_attr(rec, entry, a, lba, f"attribute {entry['id']} ({fam['name']})", waf)
        for entry in table()["by_name"]:
            for a in attrs:
                if a.get("name") in entry["names"]:
                    if str(a.get("id")) in rec["attributes"] and rec["attributes"][str(a.get("id"))]["field"] == entry["field"]:
                        continue
                    e = dict(entry, id=a.get("id"), by_name=True)
                    _store_attr(rec, e, a, lba, f"attribute {a.get('id')} {a.get('name')}", {"host": [], "media": []})
        _waf_counters(rec, waf, lba)
    elif not isinstance(log, dict) and rec["protocol"] == "ATA":
        rec.setdefault("reason", "no SMART attribute table in the smartctl output")
    if rec["protocol"] == "SCSI":
        _scsi_fields(rec, doc)
    _drop_impossible_rates(rec)
    return finish(rec)


# the most a host interface carries, bytes/s: SATA 6 Gb/s after 8b/10b; SAS-4 22.5 Gb/s; PCIe 6.0 x16
INTERFACE_BYTES_PER_S = {"ATA": 600e6, "SCSI": 2.4e9, "NVMe": 128e9}


def _drop_impossible_rates(rec: dict) -> None:
    """An ATA attribute's host byte count larger than the interface could carry in the drive's powered-on hours is
    not in the unit its name declares (a Seagate ST8000NM017B's Total_LBAs_Read x 512 B would be 813 MB/s over
    SATA for 10,645 hours): it is dropped, with why, rather than shown wrong."""
    hours, top = rec.get("power_on_hours"), INTERFACE_BYTES_PER_S.get(rec.get("protocol") or "")
    if not hours or not top or not isinstance(hours, (int, float)):
        return
    for key in ("host_written_bytes", "host_read_bytes"):
        v, source = rec.get(key), (rec.get("sources") or {}).get(key, "")
        # only an ATA attribute's unit rests on its name; NVMe and SCSI units are the standards'
        if v is not None and source.startswith("attribute") and v > hours * 3600 * top:
            rec["missing"][key] = (f"not available: {rec.get('model') or 'this drive'}'s {source} gives {v:,} B in "
                                   f"{hours:,} power-on hours, more than {rec['protocol']} can carry "
                                   f"({top / 1e6:,.0f} MB/s): its unit is not the one its name declares")
            rec[key] = None
            rec["sources"].pop(key, None)


# smartctl -a keys that carry health counters; an output with none of them (-i, -H) identifies the drive only
_HEALTH_KEYS = frozenset({"ata_smart_attributes", "nvme_smart_health_information_log", "scsi_error_counter_log",
                          "power_on_time", "temperature", "ata_device_statistics", "endurance_used",
                          "scsi_percentage_used_endurance_indicator", "host_writes"})


def _scsi_fields(rec: dict, doc: dict) -> None:
    """SCSI/SAS: the error counter log pages (smartctl prints bytes processed in units of 10^9 B, as a decimal
    string with 3 decimals: exact to 1 MB) and the uncorrected errors."""
    log = doc.get("scsi_error_counter_log")
    if not isinstance(log, dict):
        return
    for direction, field in (("write", "host_written"), ("read", "host_read")):
        gb = (log.get(direction) or {}).get("gigabytes_processed")
        b = _decimal_bytes(gb, 10**9)
        _set(rec, field, b, f"scsi_error_counter_log.{direction}.gigabytes_processed (10^9 B)")
    errs = [to_int((log.get(d) or {}).get("total_uncorrected_errors")) for d in ("read", "write", "verify")]
    if any(e is not None for e in errs):
        _set(rec, "media_errors", sum(e for e in errs if e is not None),
             "scsi_error_counter_log.{read,write,verify}.total_uncorrected_errors")


def _decimal_bytes(v, unit: int) -> int | None:
    """'806.827' x 10^9 -> 806827000000, exactly (no float)."""
    if isinstance(v, bool) or v is None:
        return None
    m = re.fullmatch(r"\s*(\d+)(?:\.(\d+))?\s*", str(v))
    if not m:
        return None
    frac = m.group(2) or ""
    scale = 10 ** len(frac)
    n = int(m.group(1)) * scale + (int(frac) if frac else 0)
    return n * unit // scale if n * unit % scale == 0 else None


# smartctl's messages when a RAID controller stands between it and the drive (smartmontools os_linux.cpp)
_RAID_MESSAGE = re.compile(r"(-d\s+(megaraid|cciss|aacraid|areca|3ware|hpt)\b|megaraid controller|dell or megaraid)",
                           re.I)
# what a RAID controller's logical volume calls itself to SCSI INQUIRY
_RAID_VOLUME = re.compile(r"(raid\s*\d*\s*volume|logical volume|\bperc\b|megaraid|\bMR9\d{3}|smart array|"
                          r"\bRAID\b)", re.I)


def raid_hidden(doc: dict) -> str | None:
    """"not available: ... hides the drive" when smartctl reached a RAID controller, not the drive."""
    msgs = "; ".join(smartctl_messages(doc))
    m = _RAID_MESSAGE.search(msgs)
    if m:
        return (f"not available: a RAID controller hides the drive (smartctl: {msgs}); read each drive behind it "
                "with 'smartctl -j -a -d megaraid,N DEV' (or the -d type smartctl names)")
    model = doc.get("model_name") or doc.get("scsi_model_name") or ""
    dev = doc.get("device") if isinstance(doc.get("device"), dict) else {}
    if dev.get("protocol") == "SCSI" and _RAID_VOLUME.search(str(model)):
        return (f"not available: {model} is a RAID controller's logical volume: the controller hides the drives "
                "under it; read each drive with the -d type 'smartctl --scan-open' lists for it (megaraid,N, "
                "sat+megaraid,N, cciss,N ...)")
    return None


# ------------------------------------------------------------------------------------------------
# NVMe health log (smartctl's or nvme-cli's spelling)

def _temperature(v, unit: str) -> float | None:
    if isinstance(v, str):                 # some nvme-cli versions print "308 K" / "35 °C"
        n = to_num(v)
        if n is None:
            return None
        unit = "kelvin" if "K" in v and "°C" not in v else ("C" if "C" in v else unit)
        v = n
    v = to_num(v)
    if v is None:
        return None
    if unit == "kelvin" or v >= 200:       # no drive runs at 200 °C: such a value is Kelvin
        v = v - 273.15 if isinstance(v, float) else v - 273
    return v if v > -100 else None


def _nvme_fields(rec: dict, log: dict, flavour: str, how: str) -> None:
    for e in table()["nvme"]:
        key = e[flavour]
        if key not in log and f"{key}_s" not in log:
            continue
        if e["field"] == "temperature":
            v = _temperature(log.get(key), e.get("nvme_cli_unit", "C") if flavour == "nvme_cli" else "C")
        elif e["field"] == "critical_warning" and isinstance(log.get(key), dict):
            v = to_int(log[key].get("value"))
        else:
            v = _exact(log, key)
            if v is not None and e["unit"] == "data_units":
                v *= unit_bytes("data_units")
        _set(rec, e["field"], v, f"{how}.{key}")


def parse_nvme_cli(smart_log: dict, id_ctrl: dict | None = None, device: str | None = None) -> dict:
    """`nvme smart-log DEV -o json` (+ `nvme id-ctrl DEV -o json`) -> record. Temperatures are Kelvin."""
    rec = empty_record("nvme-cli")
    rec["device"] = device
    rec["protocol"] = "NVMe"
    if not isinstance(smart_log, dict) or not any(k in smart_log for k in ("data_units_written", "percent_used",
                                                                           "critical_warning")):
        rec["reason"] = "nvme smart-log output has no health log fields"
        return finish(rec)
    rec["available"] = True
    rec["raw"]["nvme_smart_log"] = smart_log
    _nvme_fields(rec, smart_log, "nvme_cli", "nvme smart-log")
    for key, name in _THERMAL.items():
        if key in smart_log:
            _set(rec, name, to_int(smart_log[key]), f"nvme smart-log.{key}")
    if isinstance(id_ctrl, dict):
        rec["model"] = (str(id_ctrl.get("mn") or "").strip() or None)
        rec["serial"] = (str(id_ctrl.get("sn") or "").strip() or None)
        rec["firmware"] = (str(id_ctrl.get("fr") or "").strip() or None)
        rec["raw"]["nvme_id_ctrl"] = {k: id_ctrl.get(k) for k in ("vid", "ssvid", "sn", "mn", "fr", "tnvmcap", "unvmcap",
                                                                  "wctemp", "cctemp", "endgidmax", "nn") if k in id_ctrl}
        cap = to_int(id_ctrl.get("tnvmcap"))
        if cap:
            rec["capacity_bytes"] = cap
    return finish(rec)


def merge(primary: dict, secondary: dict) -> dict:
    """smartctl's record completed by nvme-cli's (fields the first lacks), sources and raw kept from both."""
    if not primary.get("available"):
        if secondary.get("available"):
            secondary.setdefault("notes", []).append(f"smartctl: {primary.get('reason')}")
            secondary["raw"] = {**primary.get("raw", {}), **secondary.get("raw", {})}
        return secondary if secondary.get("available") else primary
    if not secondary.get("available"):
        return primary
    for k in list(FIELDS) + ["model", "serial", "firmware"]:
        if primary.get(k) is None and secondary.get(k) is not None:
            primary[k] = secondary[k]
            primary.setdefault("sources", {})[k] = "nvme-cli: " + secondary.get("sources", {}).get(k, k)
            primary["missing"].pop(k, None)
    primary["source"] = "smartctl+nvme-cli"
    primary["raw"].update(secondary.get("raw", {}))
    return primary


# ------------------------------------------------------------------------------------------------
# the simulated SSD

def from_sim_counters(c: dict, device: str | None = None, rated_pe: int | None = None) -> dict:
    """`SimTarget.counters()` -> record (exact host/NAND bytes, continuous wear, simulated clock)."""
    rec = empty_record("sim")
    rec.update(available=True, device=device, protocol="sim", family="sim")
    rec["host_written_bytes"] = to_int(c.get("host_write_bytes"))
    rec["host_read_bytes"] = to_int(c.get("host_read_bytes"))
    rec["media_written_bytes"] = to_int(c.get("nand_write_bytes"))
    rec["percentage_used"] = float(c.get("wear_percent") or 0.0)
    rec["erase_count_avg"] = float(c.get("erase_count_avg") or 0.0)
    rec["power_on_hours"] = (c.get("power_on_ns") or 0) / 3.6e12
    rec["clock_s"] = (c.get("clock_ns") or 0) / 1e9
    total, free = c.get("total_blocks"), c.get("free_blocks")
    if total:
        rec["free_blocks_percent"] = 100.0 * (free or 0) / total
    rec["media_errors"] = 0
    if rated_pe:
        rec["rated_pe_cycles"] = int(rated_pe)      # wear_percent = erase_count_avg / rated P/E
    rec["sources"] = {k: "simulator counters" for k in ("host_written_bytes", "host_read_bytes", "media_written_bytes",
                                                         "percentage_used", "erase_count_avg", "power_on_hours")}
    rec["missing"]["temperature_c"] = "the simulator models no temperature"
    rec["missing"]["available_spare"] = "the simulator reports free blocks (free_blocks_percent), not NVMe spare"
    rec["raw"]["sim"] = dict(c)
    return finish(rec)


# ------------------------------------------------------------------------------------------------
# saved files (offline analysis)

def parse_document(doc: Any, *, mtime: float | None = None, name: str = "") -> dict:
    """A saved smartctl JSON, nvme smart-log JSON, or an ssdpts health record -> record with a timestamp."""
    if isinstance(doc, dict) and "record_version" in doc and "available" in doc:
        rec = dict(doc)
    elif isinstance(doc, dict) and ("smartctl" in doc or "json_format_version" in doc or
                                    isinstance(doc.get("device"), dict)):
        try:
            rec = parse_smartctl(doc)
        except (TypeError, AttributeError, ValueError, KeyError) as e:    # a shape no smartctl version printed yet
            why = (f"not available: this smartctl output is not understood ({type(e).__name__}: {e}); save it "
                   "again with 'smartctl -j -a DEV' (smartmontools 7.0 or newer)")
            rec = finish(empty_record("smartctl", why))
        if _timestamp(doc) is None:
            rec["timestamp"] = mtime
            rec["timestamp_source"] = "file mtime"
        else:
            rec["timestamp_source"] = "local_time.time_t"
    elif isinstance(doc, dict):
        rec = parse_nvme_cli(doc)
        rec["timestamp"] = mtime
        rec["timestamp_source"] = "file mtime"
    else:
        rec = empty_record("unknown", "not a smartctl / nvme-cli / ssdpts health JSON document")
        rec["timestamp"] = mtime
        finish(rec)
    rec["file"] = name
    return rec
