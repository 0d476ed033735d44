"""Projection and WAF on snapshot series with known answers; the offline analyzer on saved files."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from conftest import ssdpts
from ssdpts.health.projection import DAY, TB, deltas, project, rated_tbw, summary_lines, wear_fit
from ssdpts.health.record import HealthSnapshot

FIX = Path(__file__).parent / "fixtures"


def rec(t, wear=None, host=None, media=None, temp=None, **kw) -> HealthSnapshot:
    return HealthSnapshot.from_dict({"available": True, "t": t, "timestamp": t, "percentage_used": wear,
                                     "host_written_bytes": host, "media_written_bytes": media, "temperature_c": temp,
                                     **kw})


def test_linear_wear_series_gives_exact_rates_and_days_to_end_of_life():
    # 0.5 %/day from 10 %, 2 TB/day host, WAF 3, 10 days, one snapshot every 6 h
    pts = [rec(i * DAY / 4, 10 + 0.5 * i / 4, int(100 * TB + 2 * TB * i / 4), int(300 * TB + 6 * TB * i / 4),
               40 + (i % 3)) for i in range(41)]
    p = project(pts, rated_tbw_tb=600)
    assert p["available"] and p["points"] == 41 and p["duration_days"] == pytest.approx(10)
    assert p["wear_per_day"] == pytest.approx(0.5) and p["wear_fit_time"]["method"] == "least squares"
    assert p["wear_end"] == pytest.approx(15)
    assert p["days_to_eol"] == pytest.approx(85 / 0.5)                # (100 - 15) / 0.5
    assert p["wear_per_tb"] == pytest.approx(0.25)                     # 0.5 %/day at 2 TB/day
    assert p["tb_to_eol"] == pytest.approx(85 / 0.25)
    assert p["projected_tbw_tb"] == pytest.approx(400)                 # 100 % / 0.25 %/TB
    assert p["host_tb_per_day"] == pytest.approx(2)
    assert p["waf"] == pytest.approx(3) and all(w["waf"] == pytest.approx(3, rel=1e-6) for w in p["waf_series"])
    assert p["host_written_tb_lifetime"] == pytest.approx(120)
    assert p["tbw_used_percent"] == pytest.approx(20)                  # 120 of 600 TB
    assert p["days_to_rated_tbw"] == pytest.approx(480 / 2)
    assert p["temperature_c"] == {"min": 40, "max": 42, "mean": pytest.approx(41, abs=0.05), "last": 41}
    assert p["wear_per_day_recent"] == pytest.approx(0.5)
    labels = dict(summary_lines(p))
    assert labels["WAF"] == "3.000" and "170.0 days" in labels["days to end of life"]
    # without a rated figure the drive's own wear per TB still projects its TBW (a TBW claim is judged on it);
    # only what needs the rated figure is missing
    unrated = project(pts)
    assert unrated["projected_tbw_tb"] == pytest.approx(400) and unrated["rated_tbw_tb"] is None
    assert unrated["tbw_used_percent"] is None and unrated["days_to_rated_tbw"] is None


def test_whole_percent_staircase_is_fitted_on_its_steps():
    # true wear 0.3 + 1 %/day, reported as whole percents, sampled hourly for 4 days
    hours = range(0, 4 * 24 + 1)
    pts = [rec(h * 3600.0, float(math.floor(0.3 + h / 24)), host=h * 10**12) for h in hours]
    p = project(pts)
    assert p["wear_fit_time"]["steps"] == 4 and p["wear_fit_time"]["method"].startswith("step points")
    assert p["wear_per_day"] == pytest.approx(1.0)                     # exact despite the staircase
    assert p["days_to_eol"] == pytest.approx((100 - 4) / 1.0)
    assert p["wear_per_tb"] == pytest.approx(1 / 24)                   # 24 TB per day
    # plain least squares on the staircase would be biased; the step fit is not
    ls = wear_fit([q.t for q in pts[:30]], [q.percentage_used + 0.5 for q in pts[:30]])
    assert ls["method"] == "least squares"


def test_no_wear_change_gives_a_lower_bound_not_a_number():
    pts = [rec(h * 3600.0, 2, host=h * 10**11) for h in range(0, 25)]   # 1 day at 2 %
    p = project(pts)
    assert p["days_to_eol"] is None and p["wear_per_day"] is None
    assert p["days_to_eol_min"] == pytest.approx(97.0)                # < 1 %/day -> more than 97 days
    assert any("did not change" in n for n in p["notes"])
    assert ">=" in dict(summary_lines(p))["days to end of life"]


def test_seed_002_mx300_two_snapshots():
    from ssdpts.health.parse import loads, parse_smartctl

    b = parse_smartctl(loads((FIX / "ata-micron-mx300-before.json").read_text()))
    a = parse_smartctl(loads((FIX / "ata-micron-mx300-after.json").read_text()))
    for r in (b, a):
        r["t"] = r["timestamp"]
    p = project([HealthSnapshot.from_dict(b), HealthSnapshot.from_dict(a)], dwpd=0.3, warranty_years=5, capacity_bytes=1050214588416)
    assert p["waf"] == pytest.approx(3.51, abs=0.005)
    assert p["wear_per_day"] == pytest.approx(3 / (97 / 24))           # 0.74 %/day, one coarse step
    assert p["days_to_eol"] == pytest.approx(97 / 24 * 97 / 3)         # ~131 days (the blog: "about 100")
    assert any("coarse" in n for n in p["notes"])
    assert p["host_written_bytes"] == (32351612002 - 3941471) * 512
    assert p["rated_tbw_tb"] == pytest.approx(0.3 * 1050214588416 * 365 * 5 / 1e12)
    assert p["temperature_c"]["max"] == 47


def test_waf_needs_both_counters_and_missing_data_is_said():
    p = project([rec(0, 1, host=0), rec(3600, 1, host=10**12)])
    assert p["waf"] is None and p["waf_series"] == [] and any("WAF unknown" in n for n in p["notes"])
    assert project([rec(0, 1)])["available"] is False
    assert project([rec(5, 1), rec(5, 2)])["available"] is False
    d = deltas(HealthSnapshot.from_dict({"available": False, "reason": "loop"}), rec(1, 1))
    assert d == {"available": False, "reason": "loop"}


def test_rated_tbw():
    assert rated_tbw(300) == 300
    assert rated_tbw(None, dwpd=1, warranty_years=5, capacity_bytes=10**12) == pytest.approx(1825)
    assert rated_tbw(None, dwpd=1, warranty_years=None, capacity_bytes=10**12) is None


def test_analyze_endurance_on_saved_files(tmp_path):
    p = ssdpts("analyze", "endurance", str(FIX / "ata-micron-mx300-after.json"),
               str(FIX / "ata-micron-mx300-before.json"), "--json")
    doc = json.loads(p.stdout)
    proj = doc["projection"]
    assert doc["model"] == "Crucial_CT1050MX300SSD1" and doc["capacity_bytes"] == 1050214588416
    assert proj["waf"] == pytest.approx(3.51, abs=0.005) and proj["days_to_eol"] == pytest.approx(97 / 24 * 97 / 3)
    text = ssdpts("analyze", "endurance", str(FIX / "ata-micron-mx300-before.json"),
                  str(FIX / "ata-micron-mx300-after.json"), "--rated-tbw", "360").stdout
    assert "WAF" in text and "3.51" in text and "days to end of life" in text and "rated TBW" in text
    # nvme-cli files carry no timestamp: the file's mtime is used; counters > 2^53 survive --json
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    log = json.loads((FIX / "nvme-cli-smart-log.json").read_text())
    a.write_text(json.dumps(log))
    log["data_units_written"] += 2_000_000          # +1.024 TB
    log["percent_used"] += 1
    b.write_text(json.dumps(log))
    os.utime(a, (1_700_000_000, 1_700_000_000))
    os.utime(b, (1_700_000_000 + 86400, 1_700_000_000 + 86400))
    doc = json.loads(ssdpts("analyze", "endurance", str(a), str(b), "--json").stdout)
    assert doc["projection"]["host_written_bytes"] == 2_000_000 * 512000
    assert doc["snapshots"][1]["host_written_bytes"] == (2**55 + 3 + 2_000_000) * 512000
    assert doc["projection"]["wear_per_day"] == pytest.approx(1.0)
    # errors: one line, exit 2
    bad = ssdpts("analyze", "endurance", str(a), check=False)
    assert bad.returncode == 2 and "at least two" in bad.stderr
    nos = ssdpts("analyze", "endurance", str(FIX / "no-smart-loop.json"), str(FIX / "no-smart-usb.json"), check=False)
    assert nos.returncode == 2 and "skipped" in nos.stderr and "fewer than two" in nos.stderr
