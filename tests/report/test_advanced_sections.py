"""Report and compare sections of WSAT, HIR, XSR, DIRTH and CBW on runs of the simulated SSD.

Two tiny runs of the five tests (seconds each), then the report: every table equals the stored
summary (or, for percentiles of all I/Os, the stored window histograms), every plot is a valid PNG
+ SVG naming the run, and the HTML is self-contained. Then one comparison of the two runs.
"""

from __future__ import annotations


import pytest

from conftest import TINY, ssdpts
from report_checks import check_plot_dir, check_self_contained, check_svg, png_size, read_csv
from ssdpts.clock import SIMULATED
from ssdpts.engines.results import merge_bins, percentile_from_bins
from ssdpts.pts import registry
from ssdpts.report.compare import write_compare
from ssdpts.report.html import write_report
from ssdpts.store import Store

pytestmark = pytest.mark.no_end_report    # writes the report it checks (tests/conftest.py)

TESTS = ("wsat", "hir", "xsr", "dirth", "cbw")


def summaries(store, rid) -> dict:
    """test name -> its stored summary as the test's typed record."""
    return {t["name"]: registry.get(t["name"]).decode(t["summary"]) for t in store.tests(rid)}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    results = tmp_path_factory.mktemp("adv") / "results"
    ids = []
    for _ in range(2):
        p = ssdpts("run", "sim:client", "--profile", str(TINY), "--tests", ",".join(TESTS), "--results", str(results),
                   "-q")
        ids.append(p.stdout.strip().splitlines()[-1])
    return Store.in_dir(results), ids


@pytest.fixture(scope="module")
def report(runs, tmp_path_factory):
    store, ids = runs
    out = tmp_path_factory.mktemp("report")
    path = write_report(store, ids[0], out, strict=True)
    return store, ids[0], out, path, summaries(store, ids[0])


def _f(x: str) -> float | None:
    return None if x in ("", None) else float(x)


def _near(a, b):
    if b is None:
        return a is None
    return a == pytest.approx(b, rel=1e-12, abs=1e-12)


def test_files_and_html(report):
    store, rid, out, path, _ = report
    n = check_plot_dir(out, [rid])
    check_self_contained(path)
    html = path.read_text(encoding="utf-8")
    assert "report section failed" not in html
    for name in TESTS:
        assert registry.get(name).title in html
    expected = ["wsat-rnd4k-write-iops-vs-time", "wsat-rnd4k-write-iops-vs-tgbw", "wsat-rnd4k-write-latency-vs-time",
                "hir-preconditioning-convergence", "hir-preconditioning-window", "hir-iops-vs-time", "hir-ab-vs-c",
                "hir-latency-mean-vs-time", "hir-latency-p99_9-vs-time", "hir-latency-p99_99-vs-time",
                "hir-latency-max-vs-time",
                "xsr-throughput-vs-time", "xsr-latency-vs-time"]
    for t in ("dirth", "cbw"):
        expected += [f"{t}-steady-convergence", f"{t}-latency-vs-iops", f"{t}-iops-vs-qd", f"{t}-histograms"]
    for key in expected:
        png_size(out / "plots" / f"{key}.png")
        check_svg(out / "plots" / f"{key}.svg")
        assert f'id="fig-{key}"' in html, key
    assert n >= len(expected)
    # titles name the device model and the test
    svg = (out / "plots" / "xsr-throughput-vs-time.svg").read_text(encoding="utf-8")
    assert "simulated SSD" in svg and "Cross-Stimulus Recovery" in svg
    # CBW histograms: reads and writes drawn separately; DIRTH: all I/Os
    cbw = (out / "plots" / "cbw-histograms.svg").read_text(encoding="utf-8")
    assert "read (" in cbw and "write (" in cbw and "Max: TC" in cbw and "Min: TC" in cbw
    assert "all I/Os (" in (out / "plots" / "dirth-histograms.svg").read_text(encoding="utf-8")


def test_wsat_tables(report):
    _, _, out, _, summary = report
    s = summary["wsat"].workloads
    rows = read_csv(out / "tables" / "wsat-summary.csv")
    assert [r["Workload"] for r in rows] == list(s)
    for r in rows:
        w = s[r["Workload"]]
        assert _near(_f(r["Fresh IOPS (FOB, first interval)"]), w.fresh_iops)
        assert _near(_f(r["Final IOPS (mean of last 5 intervals)"]), w.final_iops)
        assert _near(_f(r["Final / fresh"]), w.final_iops / w.fresh_iops)
        assert _near(_f(r["TGBW (GB)"]), w.tgbw_gb)
        assert _near(_f(r["Drive fills"]), w.fills)
        assert int(r["Intervals"]) == w.rounds
        assert r["Stop reason"] == w.stop_reason
        iv = read_csv(out / "tables" / f"wsat-{r['Workload']}-intervals.csv")
        assert len(iv) == len(w.series) == w.rounds
        for row, x in zip(iv, w.series):
            assert _near(_f(row["IOPS"]), x.iops) and _near(_f(row["TGBW (GB)"]), x.tgbw_gb)
            assert _near(_f(row["p99.99 latency (µs)"]), x.percentiles_us["99.99"])
            assert _near(_f(row["max latency (µs)"]), x.lat_max_us)
            assert _near(_f(row["median latency (µs)"]), x.percentiles_us["50"])
            assert 0 < x.percentiles_us["50"] <= x.percentiles_us["99"]     # the median, measured every interval


def test_hir_tables(report):
    store, rid, out, _, summary = report
    s = summary["hir"]
    rows = read_csv(out / "tables" / "hir-wait-states.csv")
    assert [r["Wait state"] for r in rows] == list(s.wait_states)
    for r in rows:
        w = s.wait_states[r["Wait state"]]
        assert _near(_f(r["Idle (s, set)"]), w.idle_s)
        assert _near(_f(r["Mean AB burst IOPS"]), w.ab_iops_mean)
        assert _near(_f(r["Mean C IOPS"]), w.c_iops_mean)
        assert _near(_f(r["Recovery ratio (AB / C)"]), w.recovery_ratio)
        idle = w.idle_measured_ms
        assert _near(_f(r["Measured idle, mean (ms)"]), sum(idle) / len(idle))
        assert _near(_f(r["max (ms)"]), max(idle))
        assert _near(_f(r["Burst length, mean (s)"]), sum(w.burst_seconds) / len(w.burst_seconds))
    det = read_csv(out / "tables" / "hir-preconditioning-determination.csv")
    avg = next(r for r in det if r["Steady-state determination"] == "Average")
    tracker = s.steady.trackers[0]
    assert _near(_f(avg[tracker.key.label]), tracker.state.average)
    # the stored bursts are the ones the section plots (AB + C of every wait state)
    stored = sum(len(r.cells) for r in store.rounds(rid, "hir") if r.phase.startswith("ws="))
    assert stored == sum(len(w.ab_iops) + len(w.c_iops) for w in s.wait_states.values())
    # burst write latency: per wait state and segment, per burst, and every burst together (merged histograms)
    lat = {(r["Wait state"], r["Segment"]): r for r in read_csv(out / "tables" / "hir-latency.csv")}
    for label, w in s.wait_states.items():
        assert len(w.ab_burst_latency) == len(w.ab_iops) and len(w.c_burst_latency) == len(w.c_iops)
        ab = store.rounds(rid, "hir", f"ws={label}/AB")
        after_idle = [c.write for r in ab for c in r.cells][1:]
        bins = merge_bins(d.bins for d in after_idle)
        assert _near(w.ab_latency.max_us, max(d.lat_max_ns for d in after_idle) / 1000)
        # fio's bucket value, never above the measured max (pts.windows caps it there)
        assert _near(w.ab_latency.p("99.99"), min(percentile_from_bins(bins, 99.99) / 1000, w.ab_latency.max_us))
        for seg, x in (("AB (after idle)", w.ab_latency), ("C (continuous)", w.c_latency)):
            # histogram percentiles are fio's bucket values, capped at the max; a rare long stall can lift the mean
            # above p99.9, so the mean is only checked against the max
            assert x.max_us >= x.p("99.99") >= x.p("99.9") > 0 and x.max_us >= x.mean_us > 0
            row = lat[(label, seg)]
            for col, v in (("mean", x.mean_us), ("p99.9", x.p("99.9")), ("p99.99", x.p("99.99")), ("max", x.max_us)):
                assert _near(_f(row[f"{col} latency (µs)"]), v)
    assert _near(_f(lat[("all", "every burst (AB and C)")]["max latency (µs)"]), s.bursts_latency.max_us)
    assert s.bursts_latency.max_us >= max(w.ab_latency.max_us for w in s.wait_states.values())
    p = s.preconditioning
    assert (p.wipc_multiple, p.fixed_length, p.rounds_run, p.steady_reached) == (0.0, False, s.steady.rounds,
                                                                                 s.steady.reached)


def test_xsr_tables(report):
    _, _, out, path, summary = report
    s = summary["xsr"]
    rows = read_csv(out / "tables" / "xsr-groups.csv")
    assert len(rows) == 3
    for r, (g, d) in zip(rows, s.groups.items()):
        assert _near(_f(r["Mean MiB/s"]), d.mib_s_mean)
        assert _near(_f(r["Mean latency (µs)"]), d.lat_mean_us)
        assert _near(_f(r["Max latency (µs)"]), max(x.lat_max_us for x in d.series))
        assert int(r["Intervals"]) == d.intervals
    rec = {r["Quantity"]: r["Value"] for r in read_csv(out / "tables" / "xsr-recovery.csv")}
    assert _near(_f(rec["Group-1 average (MiB/s)"]), s.group1_average_mib_s)
    key = "Recovery time (s from the start of group 3)"
    if s.recovered:
        assert _near(_f(rec[key]), s.recovery_s)
    else:
        assert rec[key] == "not recovered" and "not recovered" in path.read_text(encoding="utf-8")
    assert len(read_csv(out / "tables" / "xsr-intervals.csv")) == sum(d.intervals for d in s.groups.values())


@pytest.mark.parametrize("test", ["dirth", "cbw"])
def test_demand_tables(report, test):
    store, rid, out, _, summary = report
    s = summary[test]
    window = set(s.steady.window_rounds)
    rounds = [r for r in store.rounds(rid, test, "") if r.round in window]
    ops = {n: k for k, n in s.operating_points.items()}
    rows = read_csv(out / "tables" / f"{test}-points.csv")
    assert [r["Point"] for r in rows] == [p.name for p in s.points]
    for r, p in zip(rows, s.points):
        assert (int(r["TC"]), int(r["QD"]), int(r["OIO"])) == (p.tc, p.qd, p.oio)
        assert _near(_f(r["IOPS"]), p.iops)
        assert _near(_f(r["Mean latency (µs)"]), p.lat_mean_us)
        assert _near(_f(r["Max latency (µs)"]), p.lat_max_us)
        cells = [c for rr in rounds for c in rr.cells if c.name == p.name]
        bins = merge_bins([c.read.bins for c in cells] + [c.write.bins for c in cells])
        for q in ("99", "99.9", "99.99"):
            assert _near(_f(r[f"p{q} (µs)"]), percentile_from_bins(bins, float(q)) / 1000)
        if p.name in ops:
            assert ops[p.name].capitalize() in r["Operating point"]
        else:
            assert r["Operating point"] == ""
    d = {(r["Point"], r["Direction"]): r for r in read_csv(out / "tables" / f"{test}-directions.csv")}
    for p in s.points:
        for direction, lat in (("read", p.read_lat), ("write", p.write_lat)):
            r = d[(p.name, direction)]
            assert _near(_f(r["Mean (µs)"]), lat.mean_us) and _near(_f(r["Max (µs)"]), lat.max_us)
            for q in ("99", "99.9", "99.99", "99.999"):
                assert _near(_f(r[f"p{q} (µs)"]), lat.p(q))


@pytest.fixture(scope="module")
def compared(runs, tmp_path_factory):
    """The comparison of the two runs (written once, read by several tests)."""
    store, ids = runs
    return write_compare(store, ids, tmp_path_factory.mktemp("cmp") / "cmp", strict=True)


def test_compare(runs, compared):
    store, ids = runs
    path = compared
    out = path.parent
    check_self_contained(path)
    check_plot_dir(out, ids)
    html = path.read_text(encoding="utf-8")
    assert "report section failed" not in html
    for key in ("wsat-rnd4k-write-iops-vs-tgbw", "hir-recovery-ratio", "xsr-throughput-vs-time",
                "wsat-rnd4k-write-latency-max-vs-time", "wsat-rnd4k-write-latency-p99_99-vs-tgbw",
                "wsat-rnd4k-write-latency-mean-vs-time", "hir-ab-latency-p99_99", "hir-ab-latency-max",
                "dirth-latency-vs-iops", "cbw-latency-vs-iops"):
        png_size(out / "plots" / f"{key}.png")
    per_run = [summaries(store, r) for r in ids]
    labels = [f"{r['target'].model} · {r['id']}" if r["target"].model else None for r in (store.run(i) for i in ids)]
    for test in ("dirth", "cbw"):
        rows = read_csv(out / "tables" / f"{test}-iops.csv")
        assert len(rows) == len(per_run[0][test].points)
        for r, p0, p1 in zip(rows, per_run[0][test].points, per_run[1][test].points):
            vals = [_f(v) for k, v in r.items() if k.endswith(" IOPS")]
            assert vals == pytest.approx([p0.iops, p1.iops], rel=1e-12)
    rows = read_csv(out / "tables" / "hir-recovery-ratio.csv")
    for r in rows:
        vals = [_f(v) for k, v in r.items() if k.endswith("recovery ratio")]
        assert vals == pytest.approx([s["hir"].wait_states[r["Wait state"]].recovery_ratio for s in per_run])
    for r in read_csv(out / "tables" / "hir-ab-latency-max.csv"):
        vals = [_f(v) for k, v in r.items() if k.endswith("AB max latency (µs)")]
        assert vals == pytest.approx([s["hir"].wait_states[r["Wait state"]].ab_latency.max_us for s in per_run])
    rows = read_csv(out / "tables" / "wsat-summary.csv")
    fresh = next(r for r in rows if r["Quantity"] == "fresh IOPS")
    assert [_f(v) for k, v in fresh.items() if k.endswith(" value")] == pytest.approx(
        [s["wsat"].workloads["rnd4k-write"].fresh_iops for s in per_run])
    assert all(lab is None or lab in html for lab in labels)


def test_show_lines_and_headlines(report):
    """`show` prints each test's own lines; the headline figures are the summary's values."""
    _, _, _, _, summary = report
    for name in TESTS:
        spec = registry.get(name)
        assert spec.text(summary[name], SIMULATED), name
    h = {x.key: x for x in registry.get("wsat").headline(summary["wsat"])}
    w = summary["wsat"].workloads["rnd4k-write"]
    assert h["wsat_rnd4k_write_fresh_iops"].value == w.fresh_iops
    assert h["wsat_rnd4k_write_final_iops"].value == w.final_iops
    h = {x.key: x for x in registry.get("hir").headline(summary["hir"])}
    assert h["hir_0_3s_recovery_ratio"].value == summary["hir"].wait_states["0.3s"].recovery_ratio
    h = {x.key: x for x in registry.get("xsr").headline(summary["xsr"])}
    xsr = summary["xsr"]
    assert h["xsr_recovery_s"].value == (xsr.recovery_s if xsr.recovered else None)
    for name in ("dirth", "cbw"):
        s = summary[name]
        h = {x.key: x for x in registry.get(name).headline(s)}
        for k, point in s.operating_points.items():
            assert h[f"{name}_{k}_iops"].value == s.point(point).iops
            assert h[f"{name}_{k}_iops"].steady is s.steady.reached
    lines = registry.get("hir").text(summary["hir"], SIMULATED)
    assert any(line.split()[0] == "0.6s" and f"{summary['hir'].wait_states['0.6s'].ab_iops_mean:,.0f}" in line
               for line in lines if line.split())


def test_demand_latency_statistics_charts(report, compared):
    """DIRTH (65/35) and CBW (40/60): mean, p99, p99.9, p99.99 and max vs IOPS per direction, in the report and
    overlaid in compare (the reviewers' charts, shared with lat-iops)."""
    store, rid, out, path, summary = report
    html = path.read_text(encoding="utf-8")
    cmp = compared.parent
    for test in ("dirth", "cbw"):
        for d in ("read", "write"):
            # not p99.99 >= mean: one I/O stalled for seconds (a loaded machine) lifts the mean above p99.99
            lats = [getattr(p, f"{d}_lat") for p in summary[test].points]
            assert all(lat.max_us >= lat.p("99.99") >= lat.p("99") > 0 and lat.max_us >= lat.mean_us > 0
                       for lat in lats)
            assert f'id="fig-{test}-latency-stats-{d}"' in html
            png_size(out / "plots" / f"{test}-latency-stats-{d}.png")
            png_size(cmp / "plots" / f"{test}-latency-stats-{d}.png")
