"""The real drives' smartctl outputs under tests/fixtures/drives/ (SOURCES.md) and what each file itself states.

The expected figures are read here from the file, in the unit each counter's NAME declares (the table below,
written from smartmontools' attribute names and the NVMe / ATA / SCSI specifications), never by calling ssdpts's
parser. test_drive_corpus.py compares ssdpts's health record with them; `python tests/health/drive_corpus.py`
rewrites docs/drives.md (the families and the figures each yields), and a test checks the page matches.
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "fixtures" / "drives"
DOC = ROOT / "docs" / "drives.md"

MIB32 = 32 * 2**20
GIB = 2**30
NVME_DATA_UNIT = 1000 * 512        # NVMe base spec: Data Units Read/Written are thousands of 512-byte units
LBA = "lba"                         # x the file's own logical_block_size

# ATA attribute name -> (record field, unit the name declares)
NAMED = {
    "Total_LBAs_Written": ("host_written_bytes", LBA), "Host_Writes_32MiB": ("host_written_bytes", MIB32),
    "Host_Writes_GiB": ("host_written_bytes", GIB), "Lifetime_Writes_GiB": ("host_written_bytes", GIB),
    "Total_LBAs_Read": ("host_read_bytes", LBA), "Host_Reads_32MiB": ("host_read_bytes", MIB32),
    "Host_Reads_GiB": ("host_read_bytes", GIB), "Lifetime_Reads_GiB": ("host_read_bytes", GIB),
    "NAND_Writes_1GiB": ("media_written_bytes", GIB), "Flash_Writes_GiB": ("media_written_bytes", GIB),
    "NAND_Writes_32MiB": ("media_written_bytes", MIB32), "TLC_Writes_32MiB": ("media_written_bytes", MIB32),
    "Lifetime_Wts_To_Flsh_GB": ("media_written_bytes", GIB),
}
# vendor knowledge the name alone does not carry: Samsung's NAND_Writes counts 512-byte sectors and its
# Wear_Leveling_Count's normalized value is the % of life left (Samsung SATA SSD SMART attribute notes)
SAMSUNG = re.compile(r"^(samsung|mz7)", re.I)
SAMSUNG_NAMED = {"NAND_Writes": ("media_written_bytes", LBA)}
# wear: names whose normalized value is the % of rated life LEFT, and names whose raw value is the % USED
LEFT_NORMALIZED = {"Media_Wearout_Indicator", "SSD_Life_Left", "Percent_Life_Remaining", "Remaining_Lifetime_Perc"}
USED_RAW = {"Percent_Lifetime_Used", "Perc_Rated_Life_Used", "Percent_Lifetime_Remain"}   # Micron: raw = % used
UNCORRECTED = {"Reported_Uncorrect", "Uncorrectable_Error_Cnt"}
RAID_VOLUME = re.compile(r"raid\s*\d*\s*volume|logical volume|\bperc\b|megaraid", re.I)


def files() -> list[Path]:
    return sorted(CORPUS.glob("*/*.json.gz"))


def load(path: Path) -> dict:
    return json.loads(gzip.decompress(path.read_bytes()))


def _int(v) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _attrs(doc: dict) -> list[dict]:
    return [a for a in (doc.get("ata_smart_attributes") or {}).get("table") or [] if isinstance(a, dict)]


def _devstat(doc: dict, page: int, name: str) -> int | None:
    for p in (doc.get("ata_device_statistics") or {}).get("pages") or []:
        if p.get("number") == page:
            for e in p.get("table") or []:
                if e.get("name") == name and (e.get("flags") or {}).get("valid", True):
                    return _int(e.get("value"))
    return None


def _gigabytes(s) -> int | None:
    m = re.fullmatch(r"(\d+)\.(\d{3})", str(s)) if s is not None else None
    return (int(m.group(1)) * 1000 + int(m.group(2))) * 10**6 if m else None


def identity(doc: dict) -> dict:
    cap = doc.get("user_capacity")
    return {"model": doc.get("model_name") or doc.get("scsi_model_name"), "serial": doc.get("serial_number"),
            "firmware": doc.get("firmware_version") or doc.get("scsi_revision") or doc.get("revision"),
            "capacity_bytes": cap.get("bytes") if isinstance(cap, dict) else None}


def stated(doc: dict) -> dict[str, set]:
    """Each figure the file states, by record field: every value a source in the file gives for it."""
    out: dict[str, set] = defaultdict(set)
    lbs = _int(doc.get("logical_block_size")) or 512
    model = doc.get("model_name") or ""
    log = doc.get("nvme_smart_health_information_log")
    if isinstance(log, dict):
        for key, field, unit in (("data_units_written", "host_written_bytes", NVME_DATA_UNIT),
                                 ("data_units_read", "host_read_bytes", NVME_DATA_UNIT),
                                 ("percentage_used", "percentage_used", 1), ("available_spare", "available_spare", 1),
                                 ("media_errors", "media_errors", 1), ("power_on_hours", "power_on_hours", 1),
                                 ("temperature", "temperature_c", 1)):
            if _int(log.get(key)) is not None:
                out[field].add(log[key] * unit)
    temp = (doc.get("temperature") or {}).get("current")
    if _int(temp) is not None:
        out["temperature_c"].add(temp)
    hours = (doc.get("power_on_time") or {}).get("hours")
    if _int(hours) is not None:
        out["power_on_hours"].add(hours)
    for page, name, field, unit in ((1, "Logical Sectors Written", "host_written_bytes", lbs),
                                    (1, "Logical Sectors Read", "host_read_bytes", lbs),
                                    (7, "Percentage Used Endurance Indicator", "percentage_used", 1),
                                    (1, "Power-on Hours", "power_on_hours", 1)):
        v = _devstat(doc, page, name)
        if v is not None:
            out[field].add(v * unit)
    scsi = doc.get("scsi_error_counter_log")
    if isinstance(scsi, dict):
        for direction, field in (("write", "host_written_bytes"), ("read", "host_read_bytes")):
            b = _gigabytes((scsi.get(direction) or {}).get("gigabytes_processed"))
            if b is not None:
                out[field].add(b)
        errs = [_int((scsi.get(d) or {}).get("total_uncorrected_errors")) for d in ("read", "write", "verify")]
        if any(e is not None for e in errs):
            out["media_errors"].add(sum(e or 0 for e in errs))
    if _int(doc.get("scsi_percentage_used_endurance_indicator")) is not None:
        out["percentage_used"].add(doc["scsi_percentage_used_endurance_indicator"])
    named = {**NAMED, **(SAMSUNG_NAMED if SAMSUNG.match(model) else {})}
    for a in _attrs(doc):
        name, norm, raw = a.get("name"), _int(a.get("value")), _int((a.get("raw") or {}).get("value"))
        if name in named and raw is not None:
            field, unit = named[name]
            out[field].add(raw * (lbs if unit == LBA else unit))
        left = name in LEFT_NORMALIZED or (name == "Wear_Leveling_Count" and SAMSUNG.match(model))
        if left and norm is not None and not (raw is not None and 0 < raw <= 100 and raw != norm
                                              and name != "Wear_Leveling_Count"):
            out["percentage_used"].add(100 - norm)
        if name in USED_RAW and raw is not None:
            out["percentage_used"].add(raw)
        if name in UNCORRECTED and raw is not None:
            out["media_errors"].add(raw)
        if name == "Power_On_Hours" and raw is not None:
            out["power_on_hours"].add(raw & 0xFFFFFFFF)
        if name in ("Temperature_Celsius", "Airflow_Temperature_Cel", "Temperature_Case") and raw is not None:
            out["temperature_c"].add(raw & 0xFF)
    return dict(out)


def kind(doc: dict) -> str:
    """NVMe, SATA SSD, SATA HDD, SATA via MegaRAID, SAS/SCSI HDD, SAS/SCSI SSD, RAID volume, other."""
    dev = doc.get("device") if isinstance(doc.get("device"), dict) else {}
    proto, rpm, dtype = dev.get("protocol"), doc.get("rotation_rate"), str(dev.get("type") or "")
    if proto == "SCSI" and RAID_VOLUME.search(doc.get("model_name") or doc.get("scsi_model_name") or ""):
        return "RAID logical volume (drives hidden)"
    if proto == "NVMe":
        return "NVMe SSD"
    if proto == "ATA":
        via = " via MegaRAID" if "megaraid" in dtype else ""
        media = "SSD" if rpm == 0 else "HDD" if isinstance(rpm, int) and rpm > 0 else "drive (rotation not stated)"
        return f"SATA {media}{via}"
    if proto == "SCSI":
        return f"SAS/SCSI {'SSD' if rpm == 0 else 'HDD'}"
    return "no drive identified"


def family(doc: dict) -> str:
    """smartctl's drive database family when the file has it, else the vendor word of the model."""
    fam = doc.get("model_family")
    if fam:
        return str(fam)
    model = (doc.get("model_name") or doc.get("scsi_model_name") or "").strip()
    vendor = next((v for rx, v in VENDORS if re.match(rx, model, re.I)), None)
    return f"{vendor} (vendor from the model name)" if vendor else "unidentified"


# the vendor a model name starts with (or its part-number prefix), for drives smartctl's database does not know
VENDORS = ((r"intel|ssdp", "Intel"), (r"samsung|mz", "Samsung"), (r"micron|mtfd", "Micron"), (r"ct\d", "Crucial"),
           (r"kxg|toshiba|mg0|hdw", "Toshiba/Kioxia"), (r"kcd", "Kioxia"), (r"husmr|hgst|hus|huh", "HGST/WD"),
           (r"hitachi", "Hitachi"), (r"wdc|wd\d|wu[hs]", "WD"), (r"seagate|st\d", "Seagate"),
           (r"force", "Corsair"), (r"hp |mb\d", "HP"), (r"kingston", "Kingston"))


def drives() -> list[dict]:
    """One row per file: its identity, kind, family and what it states."""
    rows = []
    for p in files():
        doc = load(p)
        rows.append({"file": p.relative_to(CORPUS).as_posix(), "doc": doc, "kind": kind(doc), "family": family(doc),
                     **identity(doc)})
    return rows


def distinct(rows: list[dict]) -> set:
    """Distinct real drives: model with serial where the source kept it; the redacted sources keep no serial, so
    there one model counts once (several files of one model may be several drives: counted as one)."""
    keep = set()
    for r in rows:
        if not r["model"] or r["kind"].startswith("RAID"):       # a RAID volume is no drive
            continue
        masked = not r["serial"] or "REDACTED" in str(r["serial"]) or set(str(r["serial"])) <= set("X")
        serial = "" if masked else r["serial"]
        keep.add((r["model"], serial))
    return keep


FIGURES = (("percentage_used", "wear"), ("host_written_bytes", "written"), ("media_written_bytes", "NAND written"),
           ("temperature_c", "temp."), ("media_errors", "media errors"), ("available_spare", "spare"),
           ("power_on_hours", "power-on h"))


def table(records: dict[str, dict]) -> str:
    """docs/drives.md from the corpus and ssdpts's records of it (file -> record)."""
    rows = drives()
    by: dict[tuple, list] = defaultdict(list)
    for r in rows:
        by[(r["kind"], r["family"])].append(r)
    kinds = Counter(r["kind"] for r in rows)
    lines = ["# Real drives ssdpts has read", "",
             "Generated by `python tests/health/drive_corpus.py` from the smartctl outputs of real drives in",
             "`tests/fixtures/drives/` (sources and licences: `tests/fixtures/drives/SOURCES.md`);",
             "`tests/health/test_drive_corpus.py` fails when this page and the corpus differ. Each figure is checked",
             "there against the value the file itself states, in the unit its counter's name declares.", "",
             f"{len(rows)} files, {len(distinct(rows))} distinct drives (model + serial; one per model where the "
             "source redacted the serial).", "",
             "| kind | files |", "|---|---|"]
    lines += [f"| {k} | {n} |" for k, n in sorted(kinds.items())]
    lines += ["", "A cell counts the files of the family whose health record has the figure (`n/m`); `-`: none "
              "has it, and the record says why (`not available: ...`: a hard disk has no wear, a model whose "
              "wear or written-bytes attribute ssdpts does not know says so by model, never a guess).", "",
              "| kind | family (smartctl database) | files | " + " | ".join(t for _, t in FIGURES) + " |",
              "|---|---|---|" + "---|" * len(FIGURES)]
    for (k, fam), group in sorted(by.items()):
        cells = []
        for field, _ in FIGURES:
            n = sum(1 for r in group if records[r["file"]].get(field) is not None)
            cells.append(f"{n}/{len(group)}" if n else "-")
        lines.append(f"| {k} | {fam.replace('|', '/')} | {len(group)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def records() -> dict[str, dict]:
    from ssdpts.health.parse import parse_document

    return {r["file"]: parse_document(r["doc"], mtime=0.0, name=r["file"]) for r in drives()}


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    DOC.write_text(table(records()))
    print(f"wrote {DOC}")
