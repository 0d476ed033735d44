"""A real run on a loop device (tiny profile), then its report: numbers, files, browser."""

from __future__ import annotations

from pathlib import Path

import pytest

import chromium
from conftest import requires_devices, ssdpts
from report_checks import check_plot_dir, check_self_contained, read_csv
from ssdpts.pts import registry
from ssdpts.store import Store


@requires_devices
def test_report_of_a_real_loop_run(loopdev, results, tiny, tmp_path):
    p = ssdpts("run", loopdev, "--profile", tiny, "--destroy-data", "--purge", "trim", "--results", str(results), "-q")
    rid = p.stdout.strip().splitlines()[-1]
    p = ssdpts("report", rid, "--results", str(results))
    path = Path(p.stdout.strip())
    assert path == results / "reports" / rid / "report.html"
    assert "warning" not in p.stderr
    store = Store.in_dir(results)
    out = path.parent
    check_plot_dir(out, [rid])
    check_self_contained(path)
    html = path.read_text()
    assert "trim (not a SNIA purge)" in html and "fio-" in html and loopdev in html

    # IOPS table = window averages of the stored cells
    summary = {t["name"]: registry.get(t["name"]).decode(t["summary"]) for t in store.tests(rid)}
    window = summary["iops"].steady.window_rounds
    rounds = [r for r in store.rounds(rid, "iops") if r.round in window]
    for row in read_csv(out / "tables" / "iops-table.csv"):
        for mix in ("65/35", "0/100"):
            name = f"rnd_{row['Block size']}_{mix.replace('/', '-')}"
            assert float(row[mix]) == pytest.approx(sum(r.cell(name).iops for r in rounds) / len(rounds), rel=1e-9)
    tp = read_csv(out / "tables" / "throughput-table.csv")[0]
    seq = summary["throughput"].at(128 * 1024)
    tp_rounds = [r for r in store.rounds(rid, "throughput", "bs=128K") if r.round in seq.steady.window_rounds]
    read_mib_s = sum(r.cell(seq.read_cell).read.bw_bytes for r in tp_rounds) / len(tp_rounds) / 2**20
    assert seq.read_mib_s == pytest.approx(read_mib_s, rel=1e-9)
    assert float(tp["Read MiB/s"]) == pytest.approx(seq.read_mib_s, rel=1e-9)
    assert float(tp["Write MB/s"]) == pytest.approx(seq.write_mib_s * 2**20 / 1e6, rel=1e-9)
    lat = {(r["Cell"], r["Direction"]): r for r in read_csv(out / "tables" / "latency-percentiles.csv")}
    w = summary["latency"].cells["rnd_4K_0-100"].write_lat
    assert float(lat[("rnd_4K_0-100", "write")]["p99.99 (µs)"]) == pytest.approx(w.p("99.99"), rel=1e-9)
    assert ("rnd_4K_0-100", "read") not in lat      # a write-only cell has no read latency row
    if summary["iops"].steady.reached:
        assert "Steady state reached in round" in html
    else:
        assert "Steady state NOT reached" in html

    if chromium.chromium_binary() is None:
        pytest.skip("chromium is not installed (Debian: apt-get install chromium); browser check skipped")
    r = chromium.load(path)
    assert r["errors"] == [] and r["images"]
    assert all(i["complete"] and i["width"] > 0 for i in r["images"])
