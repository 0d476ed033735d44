"""lat-iops (the reviewers' latency-vs-IOPS sweep) on the simulated client SSD: two tiny runs (quick's
[tests.lat-iops]: 4K/8K x 100/70 % reads x TC 1,2 x QD 1,4, 0.05 s warm-up + 0.2 s, 3 rounds, last 2 averaged),
the typed summary against the stored rounds, the report's charts and table, compare, plan and a refusal."""

from __future__ import annotations

import json

import pytest

from conftest import TINY, ssdpts
from report_checks import png_size, read_csv
from ssdpts.clock import SIMULATED
from ssdpts.pts import registry
from ssdpts.pts.windows import window_summary
from ssdpts.report.compare import write_compare
from ssdpts.report.html import write_report
from ssdpts.store import Store

pytestmark = pytest.mark.no_end_report    # writes the report it checks (tests/conftest.py)

SPEC = registry.get("lat-iops")


def profile(path, **keys) -> str:
    """tiny with [tests.lat-iops] keys set."""
    path.write_text(f'[profile]\nextends = "{TINY}"\n[tests.lat-iops]\n'
                    + "".join(f"{k} = {json.dumps(v)}\n" for k, v in keys.items()))
    return str(path)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two runs: as quick has it (no preconditioning), then with a 200 ms fixed-length RND write first."""
    tmp = tmp_path_factory.mktemp("latiops")
    results = tmp / "results"
    ids = [ssdpts("run", "sim:client", "--profile", prof, "--tests", "lat-iops", "--results", str(results),
                  "-q").stdout.strip().splitlines()[-1]
           for prof in (str(TINY), profile(tmp / "pc.toml", precondition_time="200ms"))]
    store = Store.in_dir(results)
    return store, ids, [SPEC.decode(next(t["summary"] for t in store.tests(i) if t["name"] == "lat-iops"))
                        for i in ids]


def test_every_point_is_the_window_mean_per_direction(runs):
    store, ids, (s, _) = runs
    assert [(f.block_size, f.read_pct) for f in s.families] == [(4096, 100), (4096, 70), (8192, 100), (8192, 70)]
    assert s.rounds == 3 and s.window_rounds == [2, 3]
    assert (s.cell_runtime_s, s.warmup_s, s.preconditioning, s.purge) == (0.2, 0.05, [], None)
    assert any("no preconditioning" in n for n in s.notes)
    rounds = store.rounds(ids[0], "lat-iops", "")
    assert [r.round for r in rounds] == [1, 2, 3] and all(len(r.cells) == 16 for r in rounds)
    assert all(w["ramp_s"] == 0.05 and w["runtime_s"] == 0.2 for w in rounds[0].workloads)
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
                # percentiles in order and capped at the max; the mean only below the max (one long stall can
                # lift it above p99)
                assert lat.max_us >= lat.p("99.99") >= lat.p("99.9") >= lat.p("99") > 0, (p.name, d)
                assert lat.max_us >= lat.mean_us > 0, (p.name, d)
                assert lat.max_us >= lat.mean_us
        # more demand, more IOPS: TC2/QD4 beats TC1/QD1
        assert f.point(2, 4).iops > f.point(1, 1).iops


def test_report_charts_table_and_show(runs, tmp_path):
    store, ids, (s, pre) = runs
    path = write_report(store, ids[0], tmp_path / "rep", strict=True)
    html = path.read_text(encoding="utf-8")
    assert "report section failed" not in html and "no preconditioning: the sweep ran on the drive as it was" in html
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
    text = "\n".join(SPEC.text(s, SIMULATED))
    assert "RND 8K 70/30 (R/W)" in text and "mean of rounds 2–3" in text
    # the second run's fixed-length preconditioning, as it ran, is stated
    (pc,) = pre.preconditioning
    assert (pc.block_size, pc.threads, pc.iodepth, pc.seconds) == (4096, 2, 4, pytest.approx(0.2))
    assert pc.bytes_written > 0 and not pre.notes
    assert "Preconditioned first, no steady-state judgement: RND 4K writes for 0.2 s" in "\n".join(SPEC.text(pre, SIMULATED))
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
    assert plan["total"]["seconds_min"] == plan["total"]["seconds_max"] == pytest.approx(3 * 16 * (0.2 + 0.05))
    (phase,) = plan["tests"][0]["phases"]
    assert (phase["rounds_min"], phase["rounds_max"], len(phase["cells"])) == (3, 3, 16)
    assert "16 points" in phase["what"] and all(c["ramp_s"] == 0.05 for c in phase["cells"])
    # the seeds' way: purge, WIPC, then the sweep
    plan = json.loads(ssdpts("plan", "sim:client", "--profile", profile(tmp_path / "w.toml", wipc_first=True),
                             "--tests", "lat-iops", "--json").stdout)
    assert [p["name"] for p in plan["tests"][0]["phases"]] == ["purge", "precondition", "rounds"]


def test_average_rounds_beyond_rounds_is_one_line(tmp_path):
    p = ssdpts("plan", "sim:client", "--profile", profile(tmp_path / "p.toml", rounds=3, average_rounds=4),
               "--tests", "lat-iops", check=False)
    assert p.returncode != 0 and "Traceback" not in p.stderr
    assert "average_rounds = 4 is more than rounds = 3" in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_a_high_qd_latency_claim_is_judged_against_the_lat_iops_point(runs, tmp_path):
    """`report --claimed` [[latency_point]]: QD8 = TC2 x QD4 of the 4K 70/30 family, per direction."""
    from ssdpts.report.claimed import claim_rows, load_claims
    store, ids, (s, _) = runs
    f = tmp_path / "claims.toml"
    f.write_text('[[latency_point]]\nblock_size = "4k"\nread_pct = 70\nqueue_depth = 8\n'
                 'read_p99_99_us = 100\nwrite_p99_99_us = 100\n')
    rows = {r["what"]: r for r in claim_rows(store, store.run(ids[0]), load_claims(f))}
    p = s.family(4096, 70).point(2, 4)
    assert rows["RND 4K 70/30 QD8 read latency p99.99"]["measured"] == p.read_lat.p("99.99")
    assert rows["RND 4K 70/30 QD8 write latency p99.99"]["measured"] == p.write_lat.p("99.99")
    assert "lat-iops point TC2/QD4" in rows["RND 4K 70/30 QD8 read latency p99.99"]["basis"]
