"""ssdpts reads ≥ 100 real drives' smartctl outputs (tests/fixtures/drives/, SOURCES.md): identity, health
snapshot, wear, data written, temperature, media errors, spare and power-on hours, each equal to what the file
itself states in the unit its counter's name declares (drive_corpus.py: the truth, read without ssdpts's parser),
or "not available" with the reason. No exception on any file."""

from __future__ import annotations

import json

import pytest

import drive_corpus as corpus
from ssdpts.health import brief
from ssdpts.health.parse import parse_document
from ssdpts.health.projection import deltas
from ssdpts.health.record import HealthSnapshot
from ssdpts.targets.identify import ata_trim, sata_link, smartctl_identity

pytestmark = pytest.mark.no_end_report

ROWS = corpus.drives()
IDS = [r["file"] for r in ROWS]
CHECKED = ("percentage_used", "host_written_bytes", "host_read_bytes", "media_written_bytes", "temperature_c",
           "media_errors", "available_spare", "power_on_hours")
# the fastest a drive's host interface moves data (bytes/s): PCIe 5.0 x16; SAS-4 24 Gb/s; SATA 6 Gb/s
INTERFACE_MAX = {"NVMe": 64e9, "SCSI": 2.4e9, "ATA": 0.6e9}


def _faster_than_the_interface(doc: dict, field: str, v: int) -> bool:
    hours = (doc.get("power_on_time") or {}).get("hours")
    top = INTERFACE_MAX.get((doc.get("device") or {}).get("protocol") or "")
    return field in ("host_written_bytes", "host_read_bytes") and bool(hours and top) and v > hours * 3600 * top


@pytest.fixture(scope="module")
def records():
    return {r["file"]: parse_document(r["doc"], mtime=0.0, name=r["file"]) for r in ROWS}


def test_at_least_100_distinct_real_drives_of_every_interface():
    drives = corpus.distinct(ROWS)
    assert len(drives) >= 100, f"{len(drives)} distinct drives"
    kinds = {r["kind"] for r in ROWS}
    assert {"NVMe SSD", "SATA SSD", "SATA HDD", "SATA HDD via MegaRAID", "SAS/SCSI HDD"} <= kinds
    assert (corpus.CORPUS / "SOURCES.md").exists()
    listed = (corpus.CORPUS / "SOURCES.md").read_text()
    assert all(f"`{r['file']}`" in listed or f"`{r['file'].split('/')[0]}/`" in listed for r in ROWS)


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_every_figure_is_the_files_own_or_not_available(row, records):
    doc, rec = row["doc"], records[row["file"]]
    # identity: the record and the identify path (what `info` and a run's target record carry)
    ident = smartctl_identity(doc)
    for key, want in corpus.identity(doc).items():
        if isinstance(want, str):
            want = want.strip() or None
        assert rec.get(key) == want, (key, rec.get(key), want)
        assert getattr(ident, key) == want
    ata_trim(doc), sata_link(doc)
    snap = HealthSnapshot.from_dict(rec)
    assert snap.to_dict() == rec
    assert brief(snap)
    deltas(snap, snap)
    truth = corpus.stated(doc)
    for field in CHECKED:
        got, can = rec.get(field), truth.get(field, set())
        if got is not None:
            assert rec["available"], field
            assert got in can, f"{field} = {got}: the file states {sorted(can) or 'nothing'}"
        else:
            why = rec["missing"].get(field, "")
            assert why, f"{field} missing without a reason"
            if rec["available"]:
                # a counter the file states in a unit ssdpts knows must come out, unless it is more than the
                # interface could carry in the drive's hours (then its name's unit is not its unit)
                can = {v for v in can if not _faster_than_the_interface(doc, field, v)}
                assert not can, f"{field}: the file states {sorted(can)}"
                assert why.startswith("not available") or why == "not reported by this device" or \
                    field == "media_written_bytes", why


@pytest.mark.parametrize("row", [r for r in ROWS if r["kind"].endswith("SSD") and r["kind"] != "NVMe SSD"],
                         ids=lambda r: r["file"])
def test_an_ssd_whose_wear_or_written_attribute_is_unknown_says_so_by_model(row, records):
    rec = records[row["file"]]
    for field, word in (("percentage_used", "wear"), ("host_written_bytes", "written-bytes")):
        if rec.get(field) is None and rec["available"]:
            assert rec["missing"][field].startswith(f"not available: {rec['model'] or 'this drive'}'s {word} "
                                                    "attribute is not known"), rec["missing"][field]


def test_hard_disks_have_no_wear_and_say_why(records):
    hdds = [r for r in ROWS if "HDD" in r["kind"]]
    assert len(hdds) > 50
    for r in hdds:
        rec = records[r["file"]]
        if rec["available"]:
            assert rec["percentage_used"] is None
            assert rec["missing"]["percentage_used"] == (
                f"not available: {rec['model']} is a hard disk ({r['doc']['rotation_rate']} rpm): it has no flash "
                "wear or NAND write counter")


def test_no_drive_has_wear_or_written_bytes_in_a_wrong_unit(records):
    """Written bytes: the figure divided by the raw counter the record cites is exactly the unit that counter's
    name declares, and no drive wrote faster than its interface can carry over its powered-on hours. Wear: a
    percentage, at most 255 (the NVMe field's ceiling)."""
    wrong = []
    for r in ROWS:
        rec, truth = records[r["file"]], corpus.stated(r["doc"])
        for field in ("host_written_bytes", "host_read_bytes", "media_written_bytes"):
            v = rec.get(field)
            if v is None:
                continue
            if v not in truth.get(field, set()):
                wrong.append(f"{r['file']}: {field} {v} not in {sorted(truth.get(field, set()))}")
            if _faster_than_the_interface(r["doc"], field, v):
                wrong.append(f"{r['file']}: {field} {v} B in {hours} h is faster than the interface")
        w = rec.get("percentage_used")
        if w is not None and not (0 <= w <= 255 and w in truth.get("percentage_used", set())):
            wrong.append(f"{r['file']}: wear {w} % not in {sorted(truth.get('percentage_used', set()))}")
    assert not wrong, "\n".join(wrong)


def test_units_the_names_declare_are_used_on_the_drives_that_carry_them(records):
    """The named units, each on at least one real drive: 32 MiB (Intel), GiB (Kingston), LBAs (Micron,
    Samsung, Seagate), NVMe data units of 512,000 B, SCSI gigabytes processed (10^9 B)."""
    seen = set()
    for r in ROWS:
        rec, doc = records[r["file"]], r["doc"]
        src = (rec.get("sources") or {}).get("host_written_bytes", "")
        log = doc.get("nvme_smart_health_information_log") or {}
        if "data_units_written" in src:
            assert rec["host_written_bytes"] == log["data_units_written"] * 512_000
            seen.add("data units")
        for a in corpus._attrs(doc):
            if f"attribute {a['id']}" in src and a["name"] == "Host_Writes_32MiB":
                assert rec["host_written_bytes"] == a["raw"]["value"] * 33_554_432
                seen.add("32MiB")
            if f"attribute {a['id']}" in src and a["name"] == "Lifetime_Writes_GiB":
                assert rec["host_written_bytes"] == a["raw"]["value"] * 2**30
                seen.add("GiB")
            if f"attribute {a['id']}" in src and a["name"] == "Total_LBAs_Written":
                assert rec["host_written_bytes"] == a["raw"]["value"] * (doc.get("logical_block_size") or 512)
                seen.add("LBA")
        if "gigabytes_processed" in src:
            gb = doc["scsi_error_counter_log"]["write"]["gigabytes_processed"]
            whole, frac = gb.split(".")
            assert rec["host_written_bytes"] == int(whole) * 10**9 + int(frac) * 10**6
            seen.add("SCSI GB")
    assert seen == {"data units", "32MiB", "GiB", "LBA", "SCSI GB"}


def test_dell_s3520_whose_firmware_calls_32mib_counters_total_lbas_written():
    """Dell's S3520 (SSDSCKJB240G7R) names attributes 233 and 241 Total_LBAs_Written, with the same raw value as
    225 Host_Writes_32MiB: ssdpts reads the Host_Writes_32MiB attribute, never id 233 as Intel's wear."""
    row = next(r for r in ROWS if r["model"] == "SSDSCKJB240G7R")
    rec = parse_document(row["doc"], mtime=0.0)
    a = {x["id"]: x for x in corpus._attrs(row["doc"])}
    assert a[225]["name"] == "Host_Writes_32MiB" and a[233]["name"] == "Total_LBAs_Written"
    assert rec["host_written_bytes"] == a[225]["raw"]["value"] * 32 * 2**20
    assert rec["sources"]["percentage_used"] != "attribute 233 (intel)"


def test_the_drives_page_matches_the_corpus(records):
    assert corpus.DOC.read_text() == corpus.table(records), \
        "docs/drives.md is out of date: run python tests/health/drive_corpus.py"


def test_every_file_through_analyze_endurances_loader(tmp_path, records):
    """`ssdpts analyze endurance` reads saved files with load_snapshots: every corpus file, its figures as above."""
    from ssdpts.analyze.endurance import load_snapshots

    paths = []
    for r in ROWS:
        p = tmp_path / r["file"].replace("/", "--").removesuffix(".gz")
        p.write_text(json.dumps(r["doc"]))
        paths.append((p, r["file"]))
    loaded = {rec["file"]: rec for rec in load_snapshots([str(p) for p, _ in paths])}
    for p, name in paths:
        rec = loaded[str(p)]
        for field in CHECKED + ("model", "serial", "firmware", "capacity_bytes", "available"):
            assert rec.get(field) == records[name].get(field), (name, field)
