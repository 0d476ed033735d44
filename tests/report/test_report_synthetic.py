"""Reports from a synthetic full PTS-E database: every section, numbers checked against the database."""

from __future__ import annotations

import pytest

from report_checks import check_plot_dir, check_self_contained, read_csv
from ssdpts.engines.results import merge_bins, percentile_from_bins
from ssdpts.pts import registry
from ssdpts.report.html import write_report
from synthetic import build
from ssdpts.steady import evaluate


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    d = tmp_path_factory.mktemp("synth")
    store, rid = build(d / "results", iops_rounds=25, wsat_rounds=600)
    path = write_report(store, rid, strict=True)
    return store, rid, path


def _window(store, rid, test, phase=""):
    s = registry.get(test).decode(next(t["summary"] for t in store.tests(rid) if t["name"] == test))
    steady = s.steady if test != "throughput" else next(r.steady for r in s.block_sizes if r.phase == phase)
    rounds = [r for r in store.rounds(rid, test, phase) if r.round in steady.window_rounds]
    assert len(rounds) == 5
    return rounds


def test_default_location_and_files(synth):
    store, rid, path = synth
    assert path == store.path.parent / "reports" / rid / "report.html"
    out = path.parent
    assert (out / "results.json").exists()
    n = check_plot_dir(out, [rid])
    assert n >= 14
    html = path.read_text()
    assert "report section failed" not in html
    assert "Synthetic NVMe 1.6TB" in html and rid in html


def test_html_is_self_contained(synth):
    _, _, path = synth
    refs = check_self_contained(path)
    imgs = [v for t, a, v in refs.refs if t == "img"]
    assert imgs and all(v.startswith("data:image/png;base64,") for v in imgs)


def test_header_has_snia_columns_and_purge(synth):
    _, _, path = synth
    html = path.read_text()
    for h in ("Test Platform", "Device Under Test", "Set-up Parameters", "Test Parameters", "Purge method",
              "nvme-format", "fio-3.33", "Synthetic CPU", "SEQ 128K W, TC1/QD32", "Active range"):
        assert h in html, h


def test_iops_table_equals_database(synth):
    store, rid, path = synth
    rounds = _window(store, rid, "iops")
    rows = read_csv(path.parent / "tables" / "iops-table.csv")
    assert [r["Block size"] for r in rows] == ["1024K", "128K", "64K", "32K", "16K", "8K", "4K", "0.5K"]
    assert list(rows[0])[1:] == ["100/0", "95/5", "65/35", "50/50", "35/65", "5/95", "0/100"]
    for row in rows:
        for mix, v in list(row.items())[1:]:
            name = f"rnd_{row['Block size']}_{mix.replace('/', '-')}"
            expect = sum(r.cell(name).read.iops + r.cell(name).write.iops for r in rounds) / 5
            assert float(v) == pytest.approx(expect, rel=1e-12)
    html = path.read_text()
    assert "IOPS (read + write)" in html


def test_steady_state_determination_equals_evaluate(synth):
    store, rid, path = synth
    all_rounds = store.rounds(rid, "iops", with_cells=False)
    rows = {r["Steady-state determination"]: r for r in read_csv(path.parent / "tables" / "iops-steady-determination.csv")}
    for label in ("rnd_4K_0-100 iops", "rnd_64K_65-35 iops", "rnd_1024K_100-0 iops"):
        values = [r.tracking[label] for r in all_rounds]
        st = evaluate(values, rounds=[r.round for r in all_rounds])
        assert float(rows["Average"][label]) == pytest.approx(st.average, rel=1e-12)
        assert float(rows["Measured maximum data excursion"][label]) == pytest.approx(st.range_measured, rel=1e-12)
        assert float(rows["Allowed maximum slope excursion"][label]) == pytest.approx(0.1 * st.average, rel=1e-12)
        assert float(rows["Measured maximum slope excursion"][label]) == pytest.approx(st.slope_excursion_measured,
                                                                                       rel=1e-9)
        assert rows["Least-squares linear fit formula"][label].startswith(f"y = {st.slope:.4g} * R")
    html = path.read_text()
    assert "Steady state NOT reached" in html          # the synthetic IOPS loop never settles
    assert "Steady state reached (bs=128K)" in html     # throughput does


def test_throughput_table_equals_database(synth):
    store, rid, path = synth
    rows = {r["Block size"]: r for r in read_csv(path.parent / "tables" / "throughput-table.csv")}
    assert set(rows) == {"128K", "1024K"}
    for bs, row in rows.items():
        rounds = _window(store, rid, "throughput", f"bs={bs}")
        rd = sum(r.cell(f"seq_{bs}_100-0").read.bw_bytes for r in rounds) / 5
        wr = sum(r.cell(f"seq_{bs}_0-100").write.bw_bytes for r in rounds) / 5
        assert float(row["Read MiB/s"]) == pytest.approx(rd / 2**20, rel=1e-12)
        assert float(row["Write MiB/s"]) == pytest.approx(wr / 2**20, rel=1e-12)
        assert float(row["Read MB/s"]) == pytest.approx(rd / 1e6, rel=1e-12)
        assert float(row["Write MB/s"]) == pytest.approx(wr / 1e6, rel=1e-12)


def test_latency_tables_equal_database(synth):
    store, rid, path = synth
    rounds = _window(store, rid, "latency")
    rows = read_csv(path.parent / "tables" / "latency-percentiles.csv")
    assert {(r["Block size"], r["R/W mix"], r["Direction"]) for r in rows} >= {("4K", "100/0", "read"),
                                                                             ("4K", "65/35", "write"),
                                                                             ("0.5K", "0/100", "write")}
    for row in rows:
        cells = [r.cell(row["Cell"]) for r in rounds]
        d = [getattr(c, row["Direction"]) for c in cells]
        ios = sum(x.ios for x in d)
        assert float(row["mean (µs)"]) == pytest.approx(sum(x.lat_mean_ns * x.ios for x in d) / ios / 1000, rel=1e-12)
        assert float(row["max (µs)"]) == pytest.approx(max(x.lat_max_ns for x in d) / 1000, rel=1e-12)
        bins = merge_bins(x.bins for x in d)
        for p in ("99", "99.9", "99.99", "99.999"):
            assert float(row[f"p{p} (µs)"]) == pytest.approx(percentile_from_bins(bins, float(p)) / 1000, rel=1e-12)
        assert float(row["p99 (µs)"]) <= float(row["p99.9 (µs)"]) <= float(row["p99.99 (µs)"])
    avg = {r["Block size"]: r for r in read_csv(path.parent / "tables" / "latency-average.csv")}
    c = [r.cell("rnd_8K_65-35") for r in rounds]
    n = sum(x.read.ios + x.write.ios for x in c)
    assert float(avg["8K"]["65/35"]) == pytest.approx(sum(x.lat_mean_ns * (x.read.ios + x.write.ios) for x in c) / n / 1000,
                                                      rel=1e-12)


def test_wsat_section_shows_every_stored_interval(synth):
    store, rid, path = synth
    rows = read_csv(path.parent / "tables" / "wsat-rnd4k-write-intervals.csv")
    rounds = store.rounds(rid, "wsat", "rnd4k-write", with_cells=False)
    assert len(rows) == len(rounds) == 600
    assert [float(r["IOPS"]) for r in rows] == pytest.approx([r.tracking["iops"] for r in rounds], rel=1e-12)
    assert [float(r["TGBW (GB)"]) for r in rows] == pytest.approx([r.tracking["tgbw_gb"] for r in rounds], rel=1e-12)
    assert (path.parent / "plots" / "wsat-rnd4k-write-iops-vs-tgbw.png").exists()
    assert 'id="test-wsat"' in path.read_text()


def test_unfinished_run_still_reports(tmp_path):
    store, rid = build(tmp_path / "r", tests=("iops",), iops_rounds=6, wsat_rounds=0, bins=False)
    store.set_test(rid, "iops", "running", None)           # as if interrupted before the summary
    store.db.execute("UPDATE tests SET summary_json='{}' WHERE run_id=?", (rid,))
    store.set_run_status(rid, "interrupted", "interrupted by the user")
    path = write_report(store, rid, tmp_path / "out", strict=True)
    html = path.read_text()
    assert "no summary yet" in html and "6 stored rounds" in html
    # no summary: no steady-state verdict is claimed, the stored rounds' tracking values are plotted
    assert (tmp_path / "out" / "plots" / "iops-tracking.png").exists()
    assert not (tmp_path / "out" / "plots" / "iops-steady-convergence.png").exists()
