"""The results site (docs/site.md) in a real browser: Debian's Chromium driven through Debian's chromedriver by
selenium (the `browser-test` extra). Open the index from file://, filter by model, select two runs, open their
pre-generated comparison and check its tables against `ssdpts compare` of the same runs; tick two runs of two
models (no page pre-generated), open the comparison the browser draws and check its runs, key figures and overlays
against `ssdpts compare`'s own page and plots and the runs' reports; a ninth run refused; a label holding markup
shown as text. Screenshots kept for docs/. Also the refusals: a non-empty folder not made by `ssdpts site`, a
read-only folder."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.no_end_report, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
MODEL_CLIENT = "ssdpts simulated SSD (client)"     # the sim:client preset's model, as identify reports it
# a label a page must show as text: were it markup, the image's onerror would set window.pwned
HOSTILE = """lab-b <img src=x onerror="window.pwned=1"> & 'q'"""


def ssdpts(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), SSDPTS_REPORT="0")
    return subprocess.run([sys.executable, "-m", "ssdpts", *args], capture_output=True, text=True, env=env,
                          timeout=timeout)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Three quick runs: two of the client preset (labels lab-a and one holding markup), one of the enterprise
    preset (lab-a again: compared with the first, both keep their ids beside the label)."""
    d = tmp_path_factory.mktemp("site") / "results"
    ids = []
    for seed, (target, label) in enumerate((("sim:client", "lab-a"), ("sim:client", HOSTILE),
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
def two_models(results):
    """`ssdpts compare` of the first client run and the enterprise run: a set the site pre-generates no page for."""
    d, ids = results
    truth = d.parent / "compare-two-models"
    r = ssdpts("compare", ids[0], ids[2], "--results", str(d), "--out", str(truth))
    assert r.returncode == 0, r.stderr
    return truth


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
    browser.find_element(By.ID, "full-link").click()     # the pair of one model: its page is pre-generated
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


def wait_drawn(drv) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(drv, 30).until(lambda d: d.execute_script(
        "return document.querySelector('footer').textContent !== '' || !document.getElementById('error').hidden"))


def steady_csv(report: Path) -> dict[str, list[str]]:
    """The run report's steady-state table (rows by their first cell), as `ssdpts report` writes it."""
    with open(report / "tables" / "iops-steady-determination.csv", newline="", encoding="utf-8") as f:
        return {row[0]: row[1:] for row in csv.reader(f)}


def test_any_two_runs_compared_in_chromium(built, two_models, browser, tmp_path_factory):
    """Two runs of two drive models, for which the site pre-generates no page: the page the browser draws shows
    the runs and the key figures `ssdpts compare` shows for them (its own compare.html, read in the same browser),
    the command for the full overlays, and one series per run in each overlay, named as compare's own plot names
    them, with as many rounds as each run's report says it ran and the unit the report gives."""
    from selenium.webdriver.common.by import By

    out, _, ids = built
    pair = [ids[0], ids[2]]
    shots = tmp_path_factory.getbasetemp() / "site-screenshots"
    shots.mkdir(exist_ok=True)
    browser.get((out / "index.html").as_uri())
    for run_id in pair:
        browser.find_element(By.CSS_SELECTOR, f"input.pick[value='{run_id}']").click()
    assert not browser.find_elements(By.ID, "full-link")
    assert f"ssdpts compare {ids[0]} {ids[2]} --results" in browser.find_element(By.ID, "compare-note").text
    browser.find_element(By.ID, "compare-link").click()
    assert browser.current_url.endswith(f"compare.html?runs={ids[0]},{ids[2]}")
    wait_drawn(browser)
    assert browser.find_element(By.ID, "error").is_displayed() is False
    drawn = table_cells(browser)
    browser.set_window_size(1400, 1500)                  # the first screen and one overlay with its legend
    browser.save_screenshot(str(shots / "site-compare-any.png"))
    browser.set_window_size(1400, 1000)
    scope = browser.find_element(By.ID, "scope").text
    assert "does not show each test's own comparison plots" in scope
    command = browser.find_element(By.ID, "full-command").text
    assert command == f"ssdpts compare {ids[0]} {ids[2]} --results {out.parent / 'results'} --out DIR"
    overlays = browser.execute_script(
        "return Array.from(document.querySelectorAll('svg.overlay')).map(s => ({"
        "title: s.querySelector('title').textContent, y: s.querySelector('.y-label').textContent,"
        "x: s.querySelector('.x-label').textContent,"
        "series: Array.from(s.querySelectorAll('g.series')).map(g => ({run: g.dataset.run,"
        "  label: g.querySelector('title').textContent, points: g.querySelectorAll('circle').length})),"
        "legend: Array.from(s.querySelectorAll('text.legend')).map(t => t.textContent)}));")
    browser.get((two_models / "compare.html").as_uri())
    cli = table_cells(browser)
    # the first screen's two tables (runs with their labels and verdicts; key figures with Δ %), cell by cell
    assert drawn[:2] == cli[:2]
    assert any("(+" in c or "(-" in c for c in drawn[1])       # a Δ % stands beside the second run's figure
    # each run named as compare's own plot names its series (both runs are lab-a: each keeps its id beside it)
    plot_text = (two_models / "plots" / "iops-iops-vs-bs.svg").read_text(encoding="utf-8")
    names = [f"lab-a · {run_id}" for run_id in pair]
    assert all(n in plot_text for n in names)
    steady = [steady_csv(out / "runs" / run_id) for run_id in pair]
    variables = steady[0]["Steady-state determination"]
    assert len(overlays) == len(variables) == 3          # the iops test's three tracking variables, all shared
    for o in overlays:
        var = o["title"].split(" per round")[0]
        assert var in variables
        col = variables.index(var)
        assert [s["run"] for s in o["series"]] == pair
        assert [s["label"] for s in o["series"]] == o["legend"] == names
        assert o["x"] == "round" and o["y"] == steady[0]["Unit"][col]
        last = [int(re.search(r"rounds \d+–(\d+)", st["Measurement window"][col]).group(1)) for st in steady]
        assert [s["points"] for s in o["series"]] == last       # rounds 1 .. the window's last, one point each


def test_ninth_run_refused(built, browser, tmp_path):
    """The index refuses a ninth ticked run. The store holds three runs, so this uses a copy of the site whose
    index data (site-data.js) is given seven more entries, copies of the first run under made-up ids: only the
    index's limit is tested with them (their comparison is not opened)."""
    from selenium.webdriver.common.by import By

    out, _, ids = built
    copy = tmp_path / "site"
    shutil.copytree(out, copy)
    data_js = (copy / "site-data.js").read_text(encoding="utf-8")
    site = json.loads(data_js[data_js.index("=") + 1:].rstrip().rstrip(";"))
    first = next(r for r in site["runs"] if r["id"] == ids[0])
    site["runs"] += [{**first, "id": f"made-up-{i}"} for i in range(7)]
    (copy / "site-data.js").write_text("window.SSDPTS_SITE = " + json.dumps(site) + ";\n", encoding="utf-8")
    browser.get((copy / "index.html").as_uri())
    boxes = browser.find_elements(By.CSS_SELECTOR, "input.pick")
    assert len(boxes) == 10
    for box in boxes[:8]:
        box.click()
    link = browser.find_element(By.ID, "compare-link")
    picked = [b.get_attribute("value") for b in boxes[:8]]
    assert link.get_attribute("href").endswith("compare.html?runs=" + ",".join(picked))
    assert not browser.find_element(By.ID, "limit-note").is_displayed()
    boxes[8].click()
    assert not boxes[8].is_selected()
    note = browser.find_element(By.ID, "limit-note")
    assert note.is_displayed() and len(note.text.splitlines()) == 1
    assert note.text.startswith("At most 8 runs can be compared at once")
    assert link.get_attribute("href").endswith("compare.html?runs=" + ",".join(picked))
    assert link.get_attribute("class") == ""


def test_label_with_markup_shown_as_text(built, browser):
    """A label holding markup (`run --label`) is text on the index and the in-browser comparison: no element made
    from it, no script run; a malformed selection gets one line."""
    from selenium.webdriver.common.by import By

    out, _, ids = built
    browser.get((out / "index.html").as_uri())
    row = browser.find_element(By.CSS_SELECTOR, f"#runs tbody tr[data-id='{ids[1]}']")
    assert HOSTILE in row.text
    browser.get((out / "compare.html").as_uri() + f"?runs={ids[1]},{ids[2]}")
    wait_drawn(browser)
    assert browser.find_element(By.CSS_SELECTOR, "#run-lines tbody td b").text == \
        f"{HOSTILE} ({MODEL_CLIENT} · {ids[1]})"
    assert browser.find_elements(By.CSS_SELECTOR, "main img, svg image") == []
    assert browser.execute_script("return window.pwned === undefined")
    assert HOSTILE in browser.find_element(By.CSS_SELECTOR, "svg.overlay text.legend").text
    browser.get((out / "compare.html").as_uri() + f"?runs={ids[1]}")
    error = browser.find_element(By.ID, "error")
    assert error.is_displayed() and error.text.startswith("Give two to 8 different runs")


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
