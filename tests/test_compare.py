"""compare a reviewer can publish, and claims by basis: two tiny simulated runs (sim:client, sim:enterprise)
whose IOPS matrices differ on purpose (65/35 vs 70/30, an extra 64K row, another cell length).

The assertions read the typed records behind the tables (render.matching.Overlay, claim_rows), not HTML."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

from conftest import HERE, run_completed, ssdpts
from ssdpts.pts import registry
from ssdpts.pts.iops.render import iops_overlay
from ssdpts.pts.latency.render import LAT_STATS, latency_overlays
from ssdpts.pts.throughput.render import throughput_overlay
from ssdpts.report.claimed import claim_rows, info_rows, load_claims
from ssdpts.report.compare import compare_views, load_options, section_notes, series_names
from ssdpts.render.context import CompareContext
from ssdpts.render.matching import MIB_PER_MB, CompareOptions
from ssdpts.render.toolkit import Artifacts

pytestmark = pytest.mark.no_end_report    # reads no end-of-run report (tests/conftest.py)

PROFILES = HERE / "profiles"
SHARED = "iops,throughput,latency"          # compared; the claims' saturated and point bases read A's WSAT and DIRTH

SHEET = """
[drive]
model = "P3600"
[sequential]
block_size = "128k"
read_mb_s = 2600
[[random]]
block_size = "4k"
read_iops = 450000
mixed_iops = 160000
mixed_read_pct = 70
[latency]
block_size = "4k"
read_p99_99_us = 300
"""

CLAIMS = """
[[random]]
block_size = "4k"
write_iops = 150000
basis = "saturated"
[[random]]
block_size = "4k"
read_iops = 400000
basis = "fob"
[[random]]
block_size = "4k"
read_iops = 400000
mixed_iops = 100000
mixed_read_pct = 70
measured_read_pct = 65
[[latency_point]]
block_size = "8k"
read_pct = 100
queue_depth = 8
read_p99_99_us = 750
[[latency_point]]
block_size = "8k"
read_pct = 100
queue_depth = 128
read_p99_99_us = 750
[endurance]
tbw = 300
[info]
power_w = 25
temperature_range = "0-70 °C"
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    results = tmp_path_factory.mktemp("compare") / "results"
    a, store = run_completed("sim:client", results, str(PROFILES / "compare-a.toml"), SHARED + ",dirth,wsat",
                             "--label", "raw")
    b, _ = run_completed("sim:enterprise", results, str(PROFILES / "compare-b.toml"), SHARED)
    return store, [store.run(a), store.run(b)], results


@pytest.fixture
def sheet(tmp_path):
    p = tmp_path / "p3600.toml"
    p.write_text(SHEET)
    return p


def _ctx(runs, name, tmp_path, options=CompareOptions()):
    store, rr, _ = runs
    return CompareContext(name, registry.get(name), compare_views(store, rr, name), Artifacts(tmp_path), options)


def test_nearby_mixes_are_matched_only_when_asked_and_every_dropped_cell_is_stated(runs, tmp_path):
    ctx = _ctx(runs, "iops", tmp_path)
    a, b = (v.label for v in ctx.views)
    ov = iops_overlay(ctx)
    assert sorted(ov.keys) == [(4096, 0), (4096, 100), (8192, 0), (8192, 100)]
    assert ov.match.matched == []
    dropped = {(d.series, d.cell) for d in ov.match.dropped}
    assert {(a, "4K 65/35"), (b, "4K 70/30"), (b, "64K 100/0")} <= dropped
    ov = iops_overlay(_ctx(runs, "iops", tmp_path, load_options(match_mix=["65=70"])))
    assert (4096, 65) in ov.keys and (8192, 65) in ov.keys
    assert {(m.series, m.cell, m.compared_as) for m in ov.match.matched} >= {(b, "4K 70/30", "4K 65/35")}
    assert all(v is not None for row in ov.values.values() for v in row)
    assert "4K 70/30 compared as 4K 65/35 (--match-mix)" in ov.note()
    notes = section_notes(ctx.views)       # the cell length and matrix differ; the runs' seeds are not stated
    assert any(d.startswith("cell_runtime:") and "0.25" in d and "0.3" in d for d in notes.differing)
    assert any(d.startswith("mixes:") for d in notes.differing) and not any(d.startswith("seed") for d in notes.differing)


def test_a_spec_sheet_drive_joins_the_overlays_where_it_claims_a_cell(runs, tmp_path, sheet):
    options = load_options([str(sheet)], ["65=70"])
    label = "P3600 (spec sheet)"
    ov = iops_overlay(_ctx(runs, "iops", tmp_path, options))
    assert ov.spec_sheets == [label] and ov.series[-1] == label
    col = dict(zip(ov.keys, ov.column(label)))
    assert col[(4096, 100)] == 450000 and col[(4096, 65)] == 160000 and col[(8192, 100)] is None
    tp = throughput_overlay(_ctx(runs, "throughput", tmp_path, options))
    assert dict(zip(tp.keys, tp.column(label)))[(128 * 1024, "read")] == pytest.approx(2600 * MIB_PER_MB)
    lat = latency_overlays(_ctx(runs, "latency", tmp_path, options))
    assert list(lat) == [lab for lab, _ in LAT_STATS] == ["mean", "p99", "p99.9", "p99.99", "p99.999", "max"]
    p9999 = lat["p99.99"]
    assert dict(zip(p9999.keys, p9999.column(label)))[(4096, 100, "read")] == 300
    assert lat["mean"].spec_sheets == []                   # the sheet claims no mean latency: no series there
    for stat, ov in lat.items():                           # every run has every percentile of every shared cell
        assert all(v is not None and v > 0 for k in ov.keys for v in ov.values[k][:2]), stat


def test_claims_by_basis_points_endurance_and_informational_fields(runs, tmp_path):
    store, (a, _), _ = runs
    f = tmp_path / "claims.toml"
    f.write_text(CLAIMS)
    claims = load_claims(f)
    rows = claim_rows(store, a, claims)
    by = {(r["what"], r["basis_key"]): r for r in rows}
    wsat = registry.get("wsat").decode(next(t for t in store.tests(a["id"]) if t["name"] == "wsat")["summary"])
    sat = by[("RND 4K 0/100", "saturated")]
    assert sat["measured"] == wsat.workloads["rnd4k-write"].final_iops and "WSAT rnd4k-write" in sat["basis"]
    fob = by[("RND 4K 100/0", None)]                       # fob asked, no fresh-peak in the run
    assert fob["measured"] is None and "not measured" in fob["basis"]
    assert by[("RND 4K 100/0", "steady")]["measured"] > 0  # no basis: today's default (steady without fresh-peak)
    iops = registry.get("iops").decode(next(t for t in store.tests(a["id"]) if t["name"] == "iops")["summary"])
    assert by[("RND 4K 70/30 (compared at 65/35: measured_read_pct)", "steady")]["measured"] == iops.iops(4096, 65)
    dirth = registry.get("dirth").decode(next(t for t in store.tests(a["id"]) if t["name"] == "dirth")["summary"])
    point = next(p for p in dirth.points if p.tc * p.qd == 8)
    qd8 = by[("RND 8K 100/0 QD8 read latency p99.99", "point")]
    assert qd8["measured"] == point.read_lat.p("99.99") and "DIRTH point TC2/QD4" in qd8["basis"]
    assert by[("RND 8K 100/0 QD128 read latency p99.99", None)]["measured"] is None
    assert by[("Endurance (TBW)", None)]["basis"] == "not measured (no endurance result in this run)"
    assert info_rows(claims) == [("power_w", "25.0"), ("temperature_range", "0-70 °C")]


def test_compare_cli_with_spec_sheet_and_one_line_refusals(runs, tmp_path, sheet):
    _, (a, b), results = runs
    r = ["--results", str(results)]
    html = open(ssdpts("compare", a["id"], b["id"], "--out", str(tmp_path / "c"), "--spec-sheet", str(sheet),
                       "--match-mix", "65=70", *r).stdout.strip()).read()
    assert "P3600 (spec sheet)" in html and "report section failed" not in html
    # the page opens with its headline; the cells one run lacks are one folded line further down, by the table
    assert html.index('id="headline"') < html.index('class="compare-notes"')
    assert "dropped (not measured by every run)" in html and not re.search(
        r'<ul class="compare-notes">(?:(?!</ul>).)*dropped', html, re.S)      # only folded (<details><ul>)
    # latency bars: linear from zero, and a log axis anywhere says so in its label (SVG text)
    svg = (tmp_path / "c" / "plots" / "latency-mean.svg").read_text()
    assert "mean latency (µs)" in svg and "log scale" not in svg
    bad = tmp_path / "bad.toml"
    for text, message, args in (
            ('[[random]]\nread_iops = 1\nbasis = "peak"\n', "basis 'peak' is not one of",
             ["compare", a["id"], b["id"], "--out", str(tmp_path / "x"), "--spec-sheet", str(bad)]),
            ("[info]\ncolour = \"red\"\n", "unknown key 'colour' in [info]",
             ["report", a["id"], "--claimed", str(bad), "--out", str(tmp_path / "x")])):
        bad.write_text(text)
        p = ssdpts(*args, *r, check=False)
        lines = p.stderr.strip().splitlines()
        assert p.returncode != 0 and len(lines) == 1 and message in lines[0], p.stderr
        assert not (tmp_path / "x").exists()
    p = ssdpts("compare", a["id"], b["id"], "--out", str(tmp_path / "x"), "--match-mix", "65", *r, check=False)
    assert p.returncode != 0 and "--match-mix '65'" in p.stderr and "Traceback" not in p.stderr


def test_the_example_claims_by_basis_load():
    c = load_claims(HERE.parent / "docs" / "examples" / "claimed-by-basis.toml")
    assert c["random"][0]["basis"] == "saturated" and c["latency_point"][0]["queue_depth"] == 128
    assert c["endurance"]["dwpd"] == 3 and c["info"]["power_w"] == 40


def test_one_run_beside_spec_sheets_is_a_comparison(runs, tmp_path, sheet):
    """Seed 001-2 set two vendor generations' claims side by side: one measured run and spec sheets suffice."""
    from ssdpts.errors import SsdptsError
    from ssdpts.report.compare import write_compare

    store, (a, _), _ = runs
    path = write_compare(store, [a["id"]], tmp_path / "one", options=load_options([str(sheet)], []))
    assert "P3600 (spec sheet)" in path.read_text()
    with pytest.raises(SsdptsError, match="one run and a --spec-sheet"):
        write_compare(store, [a["id"]], tmp_path / "none")


def _svg_texts(path) -> list[str]:
    import xml.etree.ElementTree as ET

    return [t.strip() for e in ET.parse(path).iter() if e.tag.endswith("text") for t in e.itertext() if t.strip()]


def test_compare_names_the_series_and_keeps_the_ids_in_a_caption(runs, tmp_path):
    """Seed 001's "partition" vs "raw": `run --label` is stored with the run (show and list print it), `compare
    --label RUN=NAME` names another; the typed overlay, the plot's legend (SVG text), the CSV headers use the
    names, the run ids stay in the figures' stamp and the runs table."""
    store, (a, b), results = runs
    assert a["options"].label == "raw" and b["options"].label is None
    r = ["--results", str(results)]
    assert "“raw”" in ssdpts("show", a["id"], *r).stdout.splitlines()[0]
    assert [x["label"] for x in json.loads(ssdpts("list", "--json", *r).stdout)
            if x["id"] in (a["id"], b["id"])] == ["raw", None]
    given = [f"{b['id'][-6:]}=partition"]          # part of an id names the run, as everywhere else
    names = series_names(store, [a, b], given)
    assert names == {a["id"]: "raw", b["id"]: "partition"}
    ctx = CompareContext("throughput", registry.get("throughput"), compare_views(store, [a, b], "throughput", names),
                         Artifacts(tmp_path / "typed"))
    assert throughput_overlay(ctx).series == ["raw", "partition"]
    out = tmp_path / "named"
    html = open(ssdpts("compare", a["id"], b["id"], "--out", str(out), "--label", given[0], *r).stdout.strip()).read()
    texts = _svg_texts(out / "plots" / "throughput-bars.svg")
    assert {"raw", "partition"} <= set(texts) and not any(a["id"] in t and "·" in t for t in texts[:-1])
    assert any(a["id"] in t and b["id"] in t for t in texts)           # the stamp: "ssdpts runs A, B"
    header = (out / "tables" / "throughput-table.csv").read_text().splitlines()[0].split(",")
    assert header[2:] == ["raw MiB/s", "partition MiB/s", "Δ vs raw"]
    assert f"partition<br><small>{b['id']}</small>" in html
    # the command line overrides the stored name; a stored name shared by two runs keeps each id beside it
    assert series_names(store, [a, b], [f"{a['id']}=7 % spare", f"{b['id']}=27 % spare"]) == {
        a["id"]: "7 % spare", b["id"]: "27 % spare"}
    twin = {**b, "options": replace(b["options"], label="raw")}
    assert series_names(store, [a, twin]) == {a["id"]: f"raw · {a['id']}", b["id"]: f"raw · {b['id']}"}


@pytest.mark.parametrize("label, message", [
    ("partition", "is not RUN=NAME"),
    ("nosuchrun=x", "no run 'nosuchrun'"),
    ("{a}=", "is not RUN=NAME"),
    ("{a}=x\ny", "holds a control character"),
    ("{b}=raw", "gives 'raw' to several runs"),
])
def test_a_bad_compare_label_is_one_line_and_writes_nothing(runs, tmp_path, label, message):
    _, (a, b), results = runs
    given = label.replace("{a}", a["id"]).replace("{b}", b["id"])
    extra = [] if "{b}" not in label else ["--label", f"{a['id']}=raw"]
    p = ssdpts("compare", a["id"], b["id"], "--out", str(tmp_path / "x"), "--label", given, *extra,
               "--results", str(results), check=False)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and message in lines[0], p.stderr
    assert not (tmp_path / "x").exists()


def test_run_label_is_refused_in_one_line_before_a_run_exists(tmp_path):
    results = tmp_path / "results"
    for label, message in (("", "--label is empty"), ("a\nb", "holds a control character")):
        p = ssdpts("run", "sim:client", "--profile", "quick", "--tests", "iops", "--label", label, "--results",
                   str(results), "-q", check=False)
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 2 and len(lines) == 1 and message in lines[0], p.stderr
    assert not results.exists() or ssdpts("list", "--results", str(results)).stdout.strip() == "no runs yet"


def test_compare_plots_qd1_max_latency_per_drive_from_the_stored_rounds(runs, tmp_path, monkeypatch):
    """The seeds put each drive's QD1 max latency side by side (seed 004's latency table, seed 003's QD1 table):
    compare draws a max-latency bar per cell and direction, one bar per run. Each bar, read back from the saved
    figure, is the largest latency any stored round of the run's measurement window recorded in that direction
    (the rounds' own maxima, not the summary's), and the title names the load both runs ran at."""
    from plotted import capture
    from ssdpts.report.compare import write_compare

    store, (a, b), _ = runs
    plotted = capture(monkeypatch)
    write_compare(store, [a["id"], b["id"]], tmp_path / "c")
    chart = plotted["latency-max"]
    assert "max latency per cell at TC1/QD1, one series per run" in chart.title.replace("\n", " ")
    assert list(chart.bars)[0] == "raw" and b["id"] in list(chart.bars)[1]       # run a is named "raw"
    for run, heights in zip((a, b), chart.bars.values()):
        stored = next(t for t in store.tests(run["id"]) if t["name"] == "latency")
        window = registry.get("latency").decode(stored["summary"]).steady.window_rounds
        rounds = [r for r in store.rounds(run["id"], "latency") if r.round in window]
        truth = {}
        for r in rounds:
            for c, w in zip(r.cells, r.workloads):
                for d, stats in (("read", c.read), ("write", c.write)):
                    if stats.ios:
                        key = f"{w['bs'] // 1024}K {w['read_pct']}/{100 - w['read_pct']} {d}"
                        truth[key] = max(truth.get(key, 0.0), stats.lat_max_ns / 1000)
        assert len(heights) == len(chart.groups) >= 3
        assert heights == pytest.approx([truth[g] for g in chart.groups], rel=1e-9)
