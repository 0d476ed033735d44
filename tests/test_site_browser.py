"""The results site (docs/site.md) in a real browser: Debian's Chromium driven through Debian's chromedriver by
selenium (the `browser-test` extra). Open the index from file://, filter by model, select two runs, open their
comparison and check its tables against `ssdpts compare` of the same runs; screenshots kept for docs/. Also the
refusals: a non-empty folder not made by `ssdpts site`, a read-only folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.no_end_report, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
MODEL_CLIENT = "ssdpts simulated SSD (client)"     # the sim:client preset's model, as identify reports it


def ssdpts(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), SSDPTS_REPORT="0")
    return subprocess.run([sys.executable, "-m", "ssdpts", *args], capture_output=True, text=True, env=env,
                          timeout=timeout)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Three quick runs: two of the client preset (labels lab-a, lab-b), one of the enterprise preset."""
    d = tmp_path_factory.mktemp("site") / "results"
    ids = []
    for seed, (target, label) in enumerate((("sim:client", "lab-a"), ("sim:client", "lab-b"),
                                            ("sim:enterprise", "lab-a")), start=1):
        r = ssdpts("run", target, "--profile", "quick", "--tests", "iops", "--results", str(d), "-q",
                   "--label", label, "--seed", str(seed))
        assert r.returncode == 0, r.stderr
        ids.append(r.stdout.split()[-1])
    return d, ids


@pytest.fixture(scope="module")
def built(results):
    d, ids = results
    out = d.parent / "site"
    r = ssdpts("site", "--results", str(d), "--out", str(out), "-q")
    assert r.returncode == 0, r.stderr
    truth = d.parent / "compare-cli"
    r = ssdpts("compare", ids[0], ids[1], "--results", str(d), "--out", str(truth))
    assert r.returncode == 0, r.stderr
    return out, truth, ids


@pytest.fixture(scope="module")
def browser():
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium (pip install -e '.[browser-test]')")
    if CHROMIUM is None or CHROMEDRIVER is None:
        pytest.skip("Debian's chromium and chromium-driver are needed (make system-test)")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000",
              "--allow-file-access-from-files"):
        opts.add_argument(a)
    drv = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    yield drv
    drv.quit()


def table_cells(drv) -> list[list[str]]:
    """Every table of the open page, as the browser renders its cells' text."""
    return drv.execute_script(
        "return Array.from(document.querySelectorAll('table')).map(t => "
        "Array.from(t.querySelectorAll('th, td')).map(c => c.innerText.trim()));")


def test_filter_select_compare_in_chromium(built, browser, tmp_path_factory):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    out, truth, ids = built
    shots = tmp_path_factory.getbasetemp() / "site-screenshots"
    shots.mkdir(exist_ok=True)
    browser.get((out / "index.html").as_uri())
    rows = browser.find_elements(By.CSS_SELECTOR, "#runs tbody tr")
    assert sorted(r.get_attribute("data-id") for r in rows) == sorted(ids)
    Select(browser.find_element(By.ID, "f-model")).select_by_value(MODEL_CLIENT)
    shown = [r.get_attribute("data-id") for r in rows if r.is_displayed()]
    assert sorted(shown) == sorted(ids[:2])               # the enterprise run is filtered out
    assert browser.find_element(By.ID, "shown").text == "2 of 3 runs shown"
    link = browser.find_element(By.ID, "compare-link")
    assert link.get_attribute("class") == "off"
    for run_id in ids[:2]:
        browser.find_element(By.CSS_SELECTOR, f"input.pick[value='{run_id}']").click()
    assert link.get_attribute("class") == ""
    browser.save_screenshot(str(shots / "site-index.png"))
    link.click()
    assert browser.current_url.endswith("/compare.html")
    site_tables = table_cells(browser)
    browser.save_screenshot(str(shots / "site-compare.png"))
    browser.get((truth / "compare.html").as_uri())
    cli_tables = table_cells(browser)
    assert site_tables and site_tables == cli_tables
    flat = [c for t in site_tables for c in t]
    assert any(ids[0] in c for c in flat) and any(ids[1] in c for c in flat)
    # the run's own report opens from the index
    browser.get((out / "index.html").as_uri())
    browser.find_element(By.LINK_TEXT, ids[2]).click()
    assert browser.current_url.endswith(f"runs/{ids[2]}/report.html")
    assert ids[2] in browser.page_source


def test_bad_compare_set_refused_and_site_kept(built):
    """A --compare set of one run: one line, exit 2, and the site written before is left as it was."""
    out, _, ids = built
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    r = ssdpts("site", "--results", str(out.parent / "results"), "--out", str(out), "--compare", ids[0])
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "give two to 8 different runs" in r.stderr
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before


def test_out_not_made_by_site_refused(results, tmp_path):
    d, _ = results
    (tmp_path / "mine.txt").write_text("keep me")
    r = ssdpts("site", "--results", str(d), "--out", str(tmp_path))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "not empty and was not made by 'ssdpts site'" in r.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["mine.txt"]


def test_read_only_out_refused(results, tmp_path):
    d, _ = results
    ro = tmp_path / "ro"
    ro.mkdir()
    if os.geteuid() == 0:          # root writes through permissions: a read-only mount then
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(ro)]).returncode != 0:
            pytest.skip("cannot mount a read-only tmpfs here")
    else:
        ro.chmod(0o555)
    try:
        r = ssdpts("site", "--results", str(d), "--out", str(ro))
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert "--out" in r.stderr and str(ro) in r.stderr
    finally:
        if os.geteuid() == 0:
            subprocess.run(["umount", str(ro)], check=True)
        else:
            ro.chmod(0o755)
