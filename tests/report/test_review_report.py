"""A report that reads like a review (issue 20 item 12), asserted through typed records on a tiny run of the
simulated SSD: the Summary's headline per test, latency percentiles of every IOPS cell, IOPS and latency per
interval inside the logged cells (with their coefficient of variation), the 3-D bar view; fio's interval logs
parsed from a recorded fixture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import TINY, ssdpts
from ssdpts.conformance import check
from ssdpts.engines.fiolog import intervals_from_logs
from ssdpts.runresult.model import load_run
from ssdpts.pts import registry
from ssdpts.pts.iops.summary import IopsSummary, cell_series
from ssdpts.report.html import write_report
from ssdpts.report.headline import headlines_of_run
from ssdpts.store import Store

pytestmark = pytest.mark.no_end_report    # writes the report it checks (tests/conftest.py)

FIXTURES = Path(__file__).parent.parent / "fixtures" / "fio-interval-logs"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    base = tmp_path_factory.mktemp("review")
    prof = base / "tiny-logged.toml"
    prof.write_text(f'[profile]\nname = "tiny-logged"\nextends = "{TINY}"\n\n'
                    '[tests.iops]\ninterval_cells = [["4k", 0], ["64k", 65]]\ninterval_points = 20\n')
    results = base / "results"
    p = ssdpts("run", "sim:client", "--profile", str(prof), "--tests", "iops", "--results", str(results),
               "-q")
    rid = p.stdout.strip().splitlines()[-1]
    store = Store.in_dir(results)
    out = base / "report"
    write_report(store, rid, out, strict=True)
    iops = registry.get("iops").decode(next(t for t in store.tests(rid) if t["name"] == "iops")["summary"])
    return store, rid, out, iops


def test_headline_per_test_typed_and_in_results_json(run):
    store, rid, out, _ = run
    heads = headlines_of_run(store, store.run(rid), check(load_run(store, rid), store))
    assert [h.test for h in heads] == ["iops"]
    for h in heads:
        assert h.figures and all(f.value is not None and f.value > 0 for f in h.figures), h
        assert h.steady and h.steady_reached is not None
        assert h.deviations      # tiny cells are never conformant: said in the summary, not only below
    doc = json.loads((out / "results.json").read_text())
    assert [h["test"] for h in doc["headline"]] == ["iops"]
    assert doc["headline"][0]["figures"][0]["value"] == heads[0].figures[0].value
    html = (out / "report.html").read_text()
    assert html.index('id="headline"') < html.index('id="conformance"') < html.index('id="test-iops"')


def test_latency_percentiles_of_every_iops_cell(run):
    *_, s = run
    rows = s.latencies()
    assert {r.cell for r in rows} == set(s.cells)
    assert {(r.cell, r.direction) for r in rows if r.read_pct == 65} == {
        (n, d) for n in s.cells if n.endswith("65-35") for d in ("read", "write")}
    for r in rows:
        assert r.p99_us is not None and r.p99_9_us is not None and r.p99_99_us is not None
        assert 0 < r.mean_us <= r.max_us and r.p99_us <= r.p99_9_us <= r.p99_99_us <= r.max_us


def test_iops_and_latency_over_time_inside_the_logged_cells(run):
    _, _, out, s = run
    assert set(s.series) == {"rnd_4K_0-100", "rnd_64K_65-35"}
    for name, v in s.series.items():
        assert v.source == "simulator" and v.round == s.steady.window_rounds[-1]
        assert v.interval_s == pytest.approx(0.010)        # 200 ms / 20 points
        assert len(v.t_s) > 1 and len(v.t_s) == len(v.iops) == len(v.lat_mean_us)
        assert all(b > a for a, b in zip(v.t_s, v.t_s[1:])) and all(x > 0 for x in v.iops)
        assert v.iops_cv is not None and v.iops_cv >= 0 and v.lat_cv is not None
    for key in ("iops-over-time", "iops-bars-3d", "iops-heatmap"):
        assert (out / "plots" / f"{key}.png").stat().st_size > 1000
    assert (out / "tables" / "iops-latency.csv").exists() and (out / "tables" / "iops-over-time.csv").exists()


def test_old_iops_summary_without_series_still_decodes(run):
    store, rid, _, _ = run
    data = dict(next(t for t in store.tests(rid) if t["name"] == "iops")["summary"])
    data.pop("series")
    old = registry.get("iops").decode(data)
    assert isinstance(old, IopsSummary) and old.series == {} and old.latencies()


def test_fio_interval_logs_two_threads():
    # recorded: fio 3.33, RND 4K writes, numjobs 2, log_avg_msec 200, write_iops_log + write_lat_log, 1 s
    logs = {p.name: p.read_text() for p in FIXTURES.glob("*.log")}
    iv = intervals_from_logs(logs, "rnd_4K_0-100", 200)
    assert [i["t_ns"] for i in iv] == [200_000_000, 400_000_000, 600_000_000, 800_000_000]
    assert iv[0]["write_ios"] == pytest.approx((49600 + 46547) * 0.2) and iv[0]["read_ios"] == 0
    # each thread's mean latency weighted by its IOPS in the interval (an I/O-weighted mean)
    assert iv[0]["lat_mean_ns"] == pytest.approx((72097 * 49600 + 76255 * 46547) / (49600 + 46547))
    # the lat log's closing entries (no IOPS interval beside them, one of 49 ms) are not an interval
    assert max(i["lat_mean_ns"] for i in iv) < 1_000_000
    series = cell_series("rnd_4K_0-100", 3, 0.2, "fio log_avg_msec", iv)
    assert series.iops[0] == pytest.approx(49600 + 46547) and len(series.t_s) == 4 and series.iops_cv > 0
    assert intervals_from_logs(logs, "other_cell", 200) == []
