"""lat-iops (the reviewers' latency-vs-IOPS sweep) on the simulated client SSD: two tiny runs (quick's
[tests.lat-iops]: 4K/8K x 100/70 % reads x TC 1,2 x QD 1,4, 0.1 s warm-up + 0.3 s, 3 rounds, last 2 averaged),
the typed summary against the stored rounds, the report's charts and table, compare, plan and a refusal."""

from __future__ import annotations

import json

import pytest

from conftest import TINY, ssdpts
from report_checks import png_size, read_csv
from ssdpts.pts import registry
from ssdpts.pts.common import window_summary
from ssdpts.report.compare import write_compare
from ssdpts.report.core import write_report
from ssdpts.store import Store

SPEC = registry.get("lat-iops")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    results = tmp_path_factory.mktemp("latiops") / "results"
    ids = [ssdpts("run", "sim:client", "--profile", str(TINY), "--tests", "lat-iops", "--results", str(results),
                  "-q").stdout.strip().splitlines()[-1] for _ in range(2)]
    store = Store.in_dir(results)
    return store, ids, [SPEC.decode(next(t["summary"] for t in store.tests(i) if t["name"] == "lat-iops"))
                        for i in ids]


def test_every_point_is_the_window_mean_per_direction(runs):
    store, ids, (s, _) = runs
    assert [(f.block_size, f.read_pct) for f in s.families] == [(4096, 100), (4096, 70), (8192, 100), (8192, 70)]
    assert s.rounds == 3 and s.window_rounds == [2, 3]
    assert (s.cell_runtime_s, s.warmup_s, s.preconditioning) == (0.3, 0.1, None)
    assert any("no preconditioning" in n for n in s.notes)
    rounds = store.rounds(ids[0], "lat-iops", "")
    assert [r.round for r in rounds] == [1, 2, 3] and all(len(r.cells) == 16 for r in rounds)
    assert all(w["ramp_s"] == 0.1 and w["runtime_s"] == 0.3 for w in rounds[0].workloads)
    averages = window_summary(rounds, [2, 3])
    for f in s.families:
        assert [(p.tc, p.qd) for p in f.points] == [(2, 4), (2, 1), (1, 4), (1, 1)]
        assert f.directions == (["read"] if f.read_pct == 100 else ["read", "write"])
        for p in f.points:
            w = averages[p.name]
            assert p.iops == pytest.approx(w.iops) and p.iops > 0
            assert p.iops == pytest.approx(sum(c.iops for r in rounds[1:] for c in r.cells if c.name == p.name) / 2)
            assert (p.write_lat is None) == (f.read_pct == 100)
            for d in f.directions:
                lat = p.read_lat if d == "read" else p.write_lat
                assert lat.p("99.99") >= lat.p("99.9") >= lat.p("99") >= lat.mean_us > 0, (p.name, d)
                assert lat.max_us >= lat.mean_us
        # more demand, more IOPS: TC2/QD4 beats TC1/QD1
        assert f.point(2, 4).iops > f.point(1, 1).iops


def test_report_charts_table_and_show(runs, tmp_path):
    store, ids, (s, _) = runs
    path = write_report(store, ids[0], tmp_path / "rep", strict=True)
    html = path.read_text(encoding="utf-8")
    assert "report section failed" not in html and "Not preconditioned" not in html
    for f in s.families:
        for d in f.directions:
            png_size(path.parent / "plots" / f"lat-iops-{f.prefix}-{d}.png")
        rows = read_csv(path.parent / "tables" / f"lat-iops-{f.prefix}.csv")
        assert len(rows) == len(f.points) * len(f.directions)
        for r in rows:
            p = f.point(int(r["TC"]), int(r["QD"]))
            lat = p.read_lat if r["Direction"] == "read" else p.write_lat
            assert float(r["p99.99 (µs)"]) == pytest.approx(lat.p("99.99"))
            assert float(r["IOPS (read + write)"]) == pytest.approx(p.iops)
    text = "\n".join(SPEC.text(s))
    assert "RND 8K 70/30 (R/W)" in text and "mean of rounds 2–3" in text
    heads = {h.key: h for h in SPEC.headline(s)}
    assert heads["lat_iops_rnd_4k_70-30_write_tc2_qd4_p99_99_us"].value == s.family(4096, 70).point(2, 4).write_lat.p(
        "99.99")


def test_compare_overlays_each_family(runs, tmp_path):
    store, ids, summaries = runs
    path = write_compare(store, ids, tmp_path / "cmp", strict=True)
    html = path.read_text(encoding="utf-8")
    assert "report section failed" not in html and "One colour per run, one line style per TC" in html
    for f in summaries[0].families:
        for d in f.directions:
            png_size(path.parent / "plots" / f"lat-iops-{f.prefix}-{d}.png")


def test_plan_counts_cells_and_time(tmp_path):
    plan = json.loads(ssdpts("plan", "sim:client", "--profile", str(TINY), "--tests", "lat-iops", "--json").stdout)
    text = json.dumps(plan)
    assert "16 points" in text and "3 sweep rounds" in text
    test = next(t for t in plan["tests"] if t["test"] == "lat-iops") if "tests" in plan else plan[0]
    assert test["seconds_min"] == test["seconds_max"] == pytest.approx(3 * 16 * (0.3 + 0.1))


def test_average_rounds_beyond_rounds_is_one_line(tmp_path):
    prof = tmp_path / "p.toml"
    prof.write_text(f'[profile]\nextends = "{TINY}"\n[tests.lat-iops]\nrounds = 3\naverage_rounds = 4\n')
    p = ssdpts("plan", "sim:client", "--profile", str(prof), "--tests", "lat-iops", check=False)
    assert p.returncode != 0 and "Traceback" not in p.stderr
    assert "average_rounds = 4 is more than rounds = 3" in p.stderr and len(p.stderr.strip().splitlines()) == 1
