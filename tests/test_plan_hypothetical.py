"""`ssdpts plan` for drives you do not have: --capacity (decimal TB as sold), --write-speed or a claims file
timing the size-bound writes, totals in days and hours, WSAT bounds from its end conditions, one-line refusals.

In-process through the CLI's own entry point (click's runner): nothing here touches a disk."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ssdpts import cli
from ssdpts.units import format_duration, format_long_duration, parse_capacity, parse_rate

TB = 10**12
CAP = 3_840_000_000_000             # a "3.84 TB" drive: marketing (decimal) terabytes
ROUNDS_MIN, ROUNDS_MAX, CELL_S = 5, 25, 60     # pts-enterprise: steady window, round limit, 1-minute cells


def plan(*args: str, ok: bool = True):
    r = CliRunner().invoke(cli.main, ["plan", *args])
    if ok:
        assert r.exit_code == 0, r.output
    return r


def plan_json(*args: str) -> dict:
    return json.loads(plan(*args, "--json").stdout)


def by_test(data: dict) -> dict:
    return {t["test"]: t for t in data["tests"]}


def test_units_are_explicit_decimal_or_binary():
    assert parse_capacity("3.84T") == parse_capacity("3.84TB") == CAP
    assert parse_capacity("3.5TiB") == int(3.5 * 2**40) and parse_capacity("960G") == 960 * 10**9
    assert parse_rate("2GB/s") == 2e9 and parse_rate("1.5GiB/s") == 1.5 * 2**30 and parse_rate("500 MB/s") == 5e8


def test_long_durations_read_in_days_and_hours():
    assert format_long_duration(175 * 3600 + 35 * 60) == "7 d 07 h 35 min"
    assert format_long_duration(3840) == "1 h 04 min" and format_long_duration(600) == "10 min"
    assert format_long_duration(605) == "10 min 05 s" and format_long_duration(45) == "45 s"
    # the compact form keeps its short outputs; a day or more reads in days there too
    assert (format_duration(14700), format_duration(605), format_duration(86400)) == ("4h05m", "10m05s",
                                                                                     "1 d 00 h 00 min")


def test_a_3_84_tb_drive_at_2_gb_s():
    data = plan_json("--capacity", "3.84T", "--write-speed", "2GB/s", "--tests", "iops,wsat")
    assert (data["hypothetical"], data["size_bytes"], data["logical_block_size"]) == (True, CAP, 512)
    assert data["write_speed"] == {"bytes_per_s": 2e9, "source": "--write-speed 2GB/s"}
    iops, wsat = by_test(data)["iops"], by_test(data)["wsat"]
    # preconditioning: 2 x 3.84 TB of SEQ 128K writes (whole blocks per thread) at 2 GB/s = 3840 s
    (wipc,) = iops["phases"][1]["cells"]
    assert wipc["io_bytes"] == pytest.approx(2 * CAP, abs=wipc["threads"] * 128 * 1024)
    precondition_s = wipc["io_bytes"] / 2e9
    assert precondition_s == pytest.approx(3840, abs=1)
    cells = len(iops["phases"][2]["cells"])
    assert cells == 7 * 8                          # 512-byte blocks: 0.5K is measured too
    assert iops["estimate"]["seconds_min"] == pytest.approx(precondition_s + ROUNDS_MIN * cells * CELL_S)
    assert iops["estimate"]["seconds_max"] == pytest.approx(precondition_s + ROUNDS_MAX * cells * CELL_S)
    # WSAT ends at 4x the capacity written (at 2 GB/s: 7680 s), the 24 h limit or 1440 one-minute rounds
    assert wsat["phases"][1]["bytes_written"] == 4 * CAP == wsat["bytes_written_known"]
    assert (wsat["estimate"]["seconds_min"], wsat["estimate"]["seconds_max"]) == (pytest.approx(7680), 86400)
    assert data["total"]["untimed_bytes"] == 0
    assert data["total"]["seconds_max"] == pytest.approx(iops["estimate"]["seconds_max"] + 86400)


def test_the_text_totals_in_days_and_hours():
    out = plan("--capacity", "3.84T", "--write-speed", "2GB/s", "--tests", "iops,wsat").stdout
    # least: 3840 s + 5 x 56 min + WSAT's 7680 s = 28320 s; most: 3840 s + 25 x 56 min + 24 h = 174240 s
    assert "total: 7 h 52 min – 2 d 00 h 24 min; purge times not included" in out
    assert "hypothetical drive of 3.84 TB (3.49 TiB) in 512-byte logical blocks" in out
    assert "1 × 1 cell: 1 h 04 min" in out and "1–1440 × 1 cell: 2 h 08 min – 1 d 00 h 00 min" in out


def test_without_a_write_speed_size_bound_writes_are_not_estimated():
    out = plan("--capacity", "3.84T", "--tests", "iops,wsat").stdout
    assert "at the drive's speed (not estimated: give --write-speed or --claims)" in out
    assert "up to 1 d 00 h 00 min; at the least the time to write 15.36 TB" in out
    assert "+ writing" not in out
    assert out.rstrip().endswith("without the time to write 23.04 TB in size-bound phases (not estimated: give "
                                 "--write-speed or --claims); purge times not included")
    data = plan_json("--capacity", "3.84T", "--tests", "wsat")
    assert data["write_speed"] is None and data["total"]["untimed_bytes"] == 4 * CAP


def test_4k_format_and_the_claims_file_speed(tmp_path):
    claims = tmp_path / "claims.toml"
    claims.write_text("[sequential]\nblock_size = \"128k\"\nwrite_mb_s = 2000\n")
    data = plan_json("--capacity", "3.84T", "--logical-block-size", "4096", "--claims", str(claims), "--tests", "iops")
    iops = by_test(data)["iops"]
    assert data["logical_block_size"] == 4096 and len(iops["phases"][2]["cells"]) == 7 * 7
    assert "0.5K skipped" in iops["notes"][0]
    assert data["write_speed"]["bytes_per_s"] == 2e9 and "claims.toml" in data["write_speed"]["source"]
    assert iops["estimate"]["seconds_min"] == pytest.approx(3840 + ROUNDS_MIN * 49 * CELL_S, abs=1)


def test_a_file_larger_than_the_free_space_is_planned_and_not_created(tmp_path):
    data = plan_json(str(tmp_path / "x.img"), "--size", "1024T", "--tests", "iops")
    assert data["size_bytes"] == 1024 * 2**40 and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args, names", [
    (["--capacity", "-1T"], "greater than zero"),
    (["--capacity", "0"], "greater than zero"),
    (["--capacity", "100"], "smaller than one 512-byte logical block"),
    (["--capacity", "3.84X"], "bad --capacity '3.84X'"),
    (["--capacity", "3.84T", "--write-speed", "2Gb/s"], "bits per second"),
    (["--capacity", "3.84T", "--write-speed", "2GB"], "bad --write-speed '2GB'"),
    (["--capacity", "3.84T", "--write-speed", "0MB/s"], "greater than zero"),
    (["sim:client", "--capacity", "1T"], "drop TARGET"),
    (["--logical-block-size", "4096"], "add --capacity"),
    (["--capacity", "3.84T", "--write-speed", "2GB/s", "--claims", "docs/examples/claimed.toml"], "not both"),
])
def test_bad_input_is_one_line_and_exit_2(args, names):
    r = plan(*args, ok=False)
    assert r.exit_code == 2 and r.stdout == ""
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("ssdpts: error:") and names in line, line


def test_a_claims_file_without_a_write_speed_is_refused(tmp_path):
    claims = tmp_path / "claims.toml"
    claims.write_text("[sequential]\nread_mb_s = 7000\n")
    r = plan("--capacity", "3.84T", "--claims", str(claims), ok=False)
    assert r.exit_code == 2 and "names no sequential write speed" in r.stderr and len(r.stderr.splitlines()) == 1
