"""The written pages in headless Chromium: no console errors, every image loaded, nothing fetched remotely."""

from __future__ import annotations

import pytest

import chromium
from ssdpts.report.compare import write_compare
from ssdpts.report.html import write_report
from synthetic import build

requires_chromium = pytest.mark.skipif(chromium.chromium_binary() is None,
                                       reason="chromium is not installed (Debian: apt-get install chromium)")


def check_in_browser(path) -> dict:
    r = chromium.load(path)
    assert r["errors"] == [], r["errors"]
    assert r["images"], "no images"
    bad = [i for i in r["images"] if not (i["complete"] and i["width"] > 0 and i["height"] > 0)]
    assert bad == [], bad
    assert all(u.startswith(("file:", "data:")) for u in r["requests"]), [u[:80] for u in r["requests"]]
    return r


@requires_chromium
def test_report_and_compare_load_cleanly(tmp_path):
    d = tmp_path / "results"
    store, a = build(d, model="Drive A", iops_rounds=8, wsat_rounds=60, seed=3)
    _, b = build(d, model="Drive B", iops_rounds=8, wsat_rounds=60, seed=4, speed=0.7)
    r = check_in_browser(write_report(store, a, strict=True))
    assert len(r["images"]) >= 14
    check_in_browser(write_compare(store, [a, b], tmp_path / "cmp", strict=True))


@requires_chromium
def test_browser_check_catches_broken_pages(tmp_path):
    page = tmp_path / "bad.html"
    page.write_text('<img src="missing.png"><script>console.error("boom")</script>')
    r = chromium.load(page)
    assert any("boom" in e for e in r["errors"]) and r["images"][0]["width"] == 0
