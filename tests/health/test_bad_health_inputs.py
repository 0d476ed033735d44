"""Bad health snapshot files through `ssdpts analyze endurance` (the command that reads saved snapshots): a
truncated smartctl JSON, one from a newer smartctl with keys this ssdpts does not know, a drive without SMART,
a drive a RAID controller hides. Each is one line or "not available" with the reason, never a traceback. The
drives are real ones from tests/fixtures/drives/ (SOURCES.md)."""

from __future__ import annotations

import copy
import json

import pytest

import drive_corpus as corpus
from conftest import ssdpts

pytestmark = pytest.mark.no_end_report

KIOXIA = [corpus.load(corpus.CORPUS / "smartctl_exporter" / f"KXG60ZNV512G_TOSHIBA_{n}.json.gz") for n in (2, 8)]
# the source's two files of this model carry one local_time; as two snapshots they are placed apart by their
# own power-on hours (12,173 h and 12,728 h), so a projection has time between them
for _d in KIOXIA:
    _d["local_time"]["time_t"] = 1_600_000_000 + _d["power_on_time"]["hours"] * 3600
# smartmontools' own message (os_linux.cpp) when `smartctl -a /dev/sda` meets a MegaRAID volume without -d
MEGARAID = {"json_format_version": [1, 0],
            "smartctl": {"version": [7, 3], "argv": ["smartctl", "-j", "-a", "/dev/sda"], "exit_status": 2,
                         "messages": [{"string": "Smartctl open device: /dev/sda failed: DELL or MegaRaid controller, "
                                                 "please try adding '-d megaraid,N'", "severity": "error"}]},
            "local_time": {"time_t": 1740483986, "asctime": "Tue Feb 25 11:46:26 2025 GMT"}}


def _write(tmp_path, name, doc_or_text):
    p = tmp_path / name
    p.write_text(doc_or_text if isinstance(doc_or_text, str) else json.dumps(doc_or_text))
    return str(p)


def _one_line_error(p, *words):
    assert p.returncode != 0
    assert "Traceback" not in p.stderr + p.stdout
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ssdpts: error:"), p.stderr
    assert all(w in lines[0] for w in words), lines[0]


def test_truncated_smartctl_json_is_one_line(tmp_path):
    text = json.dumps(KIOXIA[0], indent=1)
    cut = _write(tmp_path, "cut.json", text[: len(text) // 2])
    whole = _write(tmp_path, "whole.json", KIOXIA[1])
    _one_line_error(ssdpts("analyze", "endurance", cut, whole, check=False), "cut.json")


def test_a_newer_smartctl_with_unknown_keys_is_read(tmp_path):
    """smartctl 8.x adds keys (and could bump json_format_version): what this ssdpts knows is still read, the
    rest is ignored; the figures are the file's own."""
    files = []
    for i, d in enumerate(KIOXIA):
        d = copy.deepcopy(d)
        d["json_format_version"] = [1, 9]
        d["smartctl"]["version"] = [8, 9]
        d["nvme_future_log_page_0xd0"] = {"table": [{"id": 1, "value": 42}], "note": "not known to ssdpts"}
        d["nvme_smart_health_information_log"]["future_counter"] = {"value": 7, "unit": "widgets"}
        d["temperature"]["future_sensor"] = 12
        files.append(_write(tmp_path, f"new{i}.json", d))
    p = ssdpts("analyze", "endurance", *files, "--json", check=False)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    out = json.loads(p.stdout)
    assert out["model"] == "KXG60ZNV512G TOSHIBA"
    got = sorted(s["host_written_bytes"] for s in out["snapshots"])
    assert got == sorted(d["nvme_smart_health_information_log"]["data_units_written"] * 512_000 for d in KIOXIA)


def test_a_drive_without_smart_says_not_available(tmp_path):
    """A USB bridge that passes no SMART (smartctl's own message), twice: no projection, one line saying why."""
    no_smart = corpus.ROOT / "tests" / "health" / "fixtures" / "no-smart-usb.json"
    a, b = _write(tmp_path, "a.json", no_smart.read_text()), _write(tmp_path, "b.json", no_smart.read_text())
    _one_line_error(ssdpts("analyze", "endurance", a, b, check=False), "SMART is not supported")


@pytest.mark.parametrize("doc, words", [
    (MEGARAID, ("not available: a RAID controller hides the drive", "-d megaraid,N")),
    (corpus.load(corpus.CORPUS / "scrutiny" / "smart-raid.json.gz"),
     ("not available: Intel Raid 1 Volume is a RAID controller's logical volume",)),
], ids=["megaraid-without-d", "intel-rst-volume"])
def test_a_raid_hidden_drive_says_which_layer_hides_it(tmp_path, doc, words):
    a, b = _write(tmp_path, "a.json", doc), _write(tmp_path, "b.json", doc)
    _one_line_error(ssdpts("analyze", "endurance", a, b, check=False), *words)


def test_a_good_drive_beside_a_bad_file_goes_on_with_a_warning(tmp_path):
    good = [_write(tmp_path, f"good{i}.json", d) for i, d in enumerate(KIOXIA)]
    raid = _write(tmp_path, "raid.json", MEGARAID)
    p = ssdpts("analyze", "endurance", *good, raid, check=False)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    warn = [line for line in p.stderr.splitlines() if "raid.json" in line]
    assert len(warn) == 1 and "a RAID controller hides the drive" in warn[0]
