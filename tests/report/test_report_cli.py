"""The report-stage commands on synthetic databases: report --claimed, compare, export."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import ssdpts, ssdpts_here
from report_checks import check_plot_dir, check_self_contained, read_csv
from ssdpts.errors import SsdptsError
from ssdpts.pts import registry
from ssdpts.report.claimed import load_claims
from synthetic import build
from ssdpts.units import parse_size

DOCS = Path(__file__).resolve().parents[2] / "docs"


def summaries(store, run_id: str) -> dict:
    """name -> typed summary of every registered test of a run."""
    return {t["name"]: registry.get(t["name"]).decode(t["summary"]) for t in store.tests(run_id)
            if registry.find(t["name"]) is not None}


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("two") / "results"
    store, a = build(d, model="Drive A", iops_rounds=8, wsat_rounds=30, seed=1, bins=False)
    store, b = build(d, model="Drive B", iops_rounds=8, wsat_rounds=30, seed=2, speed=1.3, bins=False)
    return d, store, a, b


@pytest.fixture(scope="module")
def default_report(two_runs):
    """`ssdpts report A` as a user runs it (a real process: its stderr is checked), written once: the HTML export
    below is compared with it."""
    d, _, a, _ = two_runs
    return ssdpts("report", a, "--results", str(d))


def test_report_command_default_dir(two_runs, default_report):
    d, store, a, _ = two_runs
    p = default_report
    path = Path(p.stdout.strip())
    assert path == d / "reports" / a / "report.html" and path.exists()
    assert p.stderr == ""


def test_claimed_vs_measured(two_runs, tmp_path):
    d, store, a, _ = two_runs
    out = tmp_path / "claimed"
    ssdpts_here("report", a, "--results", d, "--claimed", DOCS / "examples" / "claimed.toml", "--out", out)
    rows = {r["claim"]: r for r in read_csv(out / "tables" / "claimed-vs-measured.csv")}
    s = summaries(store, a)
    seq = rows["SEQ 128K read"]
    tp = s["throughput"].at(128 * 1024)
    assert float(seq["claimed"]) == pytest.approx(5000e6 / 2**20)          # 4768.37 MiB/s
    assert float(seq["measured"]) == pytest.approx(tp.read_mib_s, rel=1e-12)
    assert float(seq["measured_mb_s"]) == pytest.approx(tp.read_mib_s * 2**20 / 1e6, rel=1e-12)
    assert float(seq["ratio"]) == pytest.approx(float(seq["measured"]) / float(seq["claimed"]))
    iops = rows["RND 4K 65/35"]
    assert float(iops["measured"]) == pytest.approx(s["iops"].cells["rnd_4K_65-35"].iops, rel=1e-12)
    lat = rows["RND 4K write latency p99.99"]
    assert float(lat["claimed"]) == 4700
    assert float(lat["measured"]) == pytest.approx(s["latency"].cells["rnd_4K_0-100"].write_lat.p("99.99"), rel=1e-12)
    assert float(rows["RND 4K read latency mean"]["measured"]) == pytest.approx(
        s["latency"].cells["rnd_4K_100-0"].read_lat.mean_us, rel=1e-12)
    assert lat["better"] == "lower"
    html = (out / "report.html").read_text()
    m = float(seq["measured"])
    assert f"{m:,.1f} MiB/s (claimed 4,768.4)" in html
    assert "MB/s (claimed 5,000.0)" in html and "Intel DC P3608" in html
    check_self_contained(out / "report.html")


def test_claims_of_tests_not_run_are_not_measured(tmp_path):
    d = tmp_path / "results"
    store, rid = build(d, tests=("latency",), wsat_rounds=0, bins=True)
    out = tmp_path / "claimed"
    ssdpts_here("report", rid, "--results", d, "--claimed", DOCS / "examples" / "claimed.toml", "--out", out)
    rows = {r["claim"]: r for r in read_csv(out / "tables" / "claimed-vs-measured.csv")}
    for claim in ("SEQ 128K read", "SEQ 128K write", "RND 4K 100/0", "RND 8K 0/100"):
        assert rows[claim]["measured"].startswith("not measured") and rows[claim]["meets_claim"] == "not measured"
    lat = summaries(store, rid)["latency"].cells["rnd_4K_100-0"].read_lat
    assert float(rows["RND 4K read latency p99"]["measured"]) == pytest.approx(lat.p("99"), rel=1e-12)
    assert float(rows["RND 4K read latency mean"]["measured"]) == pytest.approx(lat.mean_us, rel=1e-12)


@pytest.mark.parametrize("text, msg", [
    ("[sequential]\nread_mb_s = -5\n", "must be a positive number"),
    ("[sequential]\nread_mbs = 5000\n", "unknown key 'read_mbs' in [sequential]"),
    ("[seq]\nread_mb_s = 5000\n", "unknown section [seq]"),
    ("[random]\nmixed_iops = 5\n", "mixed_iops and mixed_read_pct go together"),
    ("[random]\nblock_size = \"4q\"\nread_iops = 5\n", "bad [random] block_size"),
    ("[latency\nread_mean_us = 5\n", "not valid TOML"),
    ("[drive]\nmodel = \"x\"\n", "no claims"),
])
def test_claims_are_validated(tmp_path, two_runs, text, msg):
    f = tmp_path / "c.toml"
    f.write_text(text)
    with pytest.raises(SsdptsError, match=None) as e:
        load_claims(f)
    assert msg in str(e.value)
    d, _, a, _ = two_runs
    p = ssdpts("report", a, "--results", str(d), "--claimed", str(f), "--out", str(tmp_path / "o"), check=False)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and msg in p.stderr
    assert not (tmp_path / "o" / "report.html").exists()


def test_example_claims_file_is_valid():
    c = load_claims(DOCS / "examples" / "claimed.toml")
    assert c["sequential"][0]["read_mb_s"] == 5000 and len(c["random"]) == 2


def test_compare_overlays_runs_with_deltas(two_runs, tmp_path):
    d, store, a, b = two_runs
    out = tmp_path / "cmp"
    path = Path(ssdpts_here("compare", a, b, "--out", out, "--results", d).stdout.strip())
    assert path == out / "compare.html"
    check_self_contained(path)
    check_plot_dir(out, [a])
    rows = read_csv(out / "tables" / "iops-table.csv")
    sa = summaries(store, a)["iops"].cells
    sb = summaries(store, b)["iops"].cells
    assert len(rows) == 56
    for r in rows:
        name = f"rnd_{r['Block size']}_{r['R/W mix'].replace('/', '-')}"
        va, vb = float(r[f"Drive A · {a} IOPS"]), float(r[f"Drive B · {b} IOPS"])
        assert va == pytest.approx(sa[name].iops, rel=1e-12) and vb == pytest.approx(sb[name].iops, rel=1e-12)
        assert float(r[f"Δ vs {a}"]) == pytest.approx((vb - va) / va * 100)
    tp = read_csv(out / "tables" / "throughput-table.csv")
    assert {(r["Block size"], r["Direction"]) for r in tp} == {("128K", "read"), ("128K", "write"),
                                                               ("1024K", "read"), ("1024K", "write")}
    ta, tb = summaries(store, a)["throughput"], summaries(store, b)["throughput"]
    for r in tp:
        ra, rb = ta.at(parse_size(r["Block size"])), tb.at(parse_size(r["Block size"]))
        want = (ra.read_mib_s, rb.read_mib_s) if r["Direction"] == "read" else (ra.write_mib_s, rb.write_mib_s)
        assert (float(r[f"Drive A · {a} MiB/s"]), float(r[f"Drive B · {b} MiB/s"])) == pytest.approx(want, rel=1e-12)
    lat = read_csv(out / "tables" / "latency-p99.99.csv")
    la, lb = summaries(store, a)["latency"], summaries(store, b)["latency"]
    assert len(lat) == 12   # 3 block sizes x (100/0: read, 65/35: read and write, 0/100: write)
    for r in lat:
        cells = [x.cells[f"rnd_{r['Block size']}_{r['R/W mix'].replace('/', '-')}"] for x in (la, lb)]
        want = [(c.read_lat if r["Direction"] == "read" else c.write_lat).p("99.99") for c in cells]
        assert [float(r[f"Drive A · {a} p99.99 µs"]), float(r[f"Drive B · {b} p99.99 µs"])] == pytest.approx(want)
    html = path.read_text()
    assert "Drive A" in html and "Drive B" in html and "report section failed" not in html
    assert (out / "plots" / "wsat-_rnd_4K_0-100_iops.png").exists() or any((out / "plots").glob("wsat-*.png"))


def test_compare_refuses_runs_without_shared_test(tmp_path):
    d = tmp_path / "results"
    _, a = build(d, tests=("latency",), wsat_rounds=0, bins=False)
    _, b = build(d, tests=("throughput",), wsat_rounds=0, bins=False)
    p = ssdpts("compare", a, b, "--out", str(tmp_path / "o"), "--results", str(d), check=False)
    assert p.returncode == 2
    assert len(p.stderr.strip().splitlines()) == 1 and "share no test" in p.stderr
    p = ssdpts("compare", a, "--out", str(tmp_path / "o"), "--results", str(d), check=False)
    assert p.returncode == 2 and "at least two runs" in p.stderr


def test_export_json_and_csv(two_runs, tmp_path):
    d, store, a, _ = two_runs
    p = ssdpts_here("export", a, "--format", "json", "--out", tmp_path / "j", "--results", d)
    doc = json.loads(Path(p.stdout.strip()).read_text())
    assert doc["schema"] == "ssdpts.results/3" and doc["run"]["id"] == a
    assert [t["name"] for t in doc["tests"]] == ["iops", "throughput", "latency", "wsat"]
    p = ssdpts_here("export", a, "--format", "csv", "--out", tmp_path / "c", "--results", d)
    files = [Path(x) for x in p.stdout.split()]
    names = {f.name for f in files}
    assert {"iops-table.csv", "throughput-table.csv", "latency-percentiles.csv", "wsat-summary.csv"} <= names
    assert not list((tmp_path / "c").rglob("*.png"))
    rows = read_csv(next(f for f in files if f.name == "iops-table.csv"))
    s = summaries(store, a)["iops"].cells
    assert float(rows[-1]["0/100"]) == pytest.approx(s["rnd_0.5K_0-100"].iops, rel=1e-12)
    tp = summaries(store, a)["throughput"]
    assert [t["summary"] for t in doc["tests"]][1] == registry.get("throughput").encode(tp)


def test_export_html_writes_what_report_writes(two_runs, default_report, tmp_path):
    """One exporter behind both commands: the same files, byte for byte (but the footer's generation time)."""
    d, _, a, _ = two_runs
    reported = Path(default_report.stdout.strip()).parent          # `ssdpts report A`'s folder
    listed = ssdpts_here("export", a, "--format", "html", "--out", tmp_path / "e", "--results", d).stdout.split()
    assert Path(listed[0]) == tmp_path / "e" / "report.html"
    written = sorted(p.relative_to(tmp_path / "e") for p in (tmp_path / "e").rglob("*") if p.is_file())
    assert sorted(Path(p).relative_to(tmp_path / "e") for p in listed) == written
    assert written == sorted(p.relative_to(reported) for p in reported.rglob("*") if p.is_file())
    assert {"report.html", "results.json"} <= {p.name for p in written} and any(p.suffix == ".csv" for p in written)
    for rel in written:
        report, export = (reported / rel).read_bytes(), (tmp_path / "e" / rel).read_bytes()
        if rel.name == "report.html":     # "Generated by ssdpts V on DATE TIME from ...": the one line that differs
            report, export = (re.sub(rb"<footer>.*?</footer>", b"", x) for x in (report, export))
        assert report == export, rel


def test_every_export_format_is_an_exporter():
    """Each row of the one format table names a class whose `write` is the Exporter's (export/exporter.py)."""
    import importlib
    import inspect

    from ssdpts.commands.report import EXPORT_FORMATS
    from ssdpts.export.exporter import Exporter

    want = list(inspect.signature(Exporter.write).parameters)
    for name, fmt in EXPORT_FORMATS.items():
        cls = getattr(importlib.import_module(f"ssdpts.{fmt.module}"), fmt.exporter)
        assert list(inspect.signature(cls.write).parameters) == want, name
        required = [p for p in inspect.signature(cls).parameters.values() if p.default is p.empty]
        assert [p.name for p in required] == (["store"] if fmt.reads_store else []), name   # how `make` builds it


def test_export_text_writes_what_show_prints(two_runs, tmp_path):
    """`show`'s text is one exporter too: `export --format text` writes exactly what `show` printed."""
    d, _, a, _ = two_runs
    shown = ssdpts_here("show", a, "--results", d).stdout
    listed = ssdpts_here("export", a, "--format", "text", "--out", tmp_path / "t", "--results", d).stdout.split()
    assert listed == [str(tmp_path / "t" / f"{a}.txt")]
    assert Path(listed[0]).read_text() == shown and f"run {a}" in shown
