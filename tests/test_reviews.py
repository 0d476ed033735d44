"""The reviewer profiles, each on the simulated drive its seed review tested (docs/reviews.md), with durations
scaled down (tests/profiles/review-NNN-scaled.toml). Every figure and table the review shows is asserted through the
typed summaries, not the HTML: seed 000 `review` on sim:client, 003 `review-dc` on sim:enterprise, 001
`review-consumer` on sim:sata-mlc, 002 `review-endurance` on sim:sata-tlc."""

from __future__ import annotations

import json
import os

import pytest

from conftest import HERE, ssdpts
from ssdpts.clock import SIMULATED
from ssdpts.conformance import check
from ssdpts.runresult.model import load_run
from ssdpts.pts import registry
from ssdpts.pts.lat_iops.summary import STATISTICS, SATURATION_GAIN
from ssdpts.report.html import write_report
from ssdpts.report.headline import headlines_of_run
from ssdpts.store import Store

SEEDS = {"000": "sim:client", "003": "sim:enterprise", "001": "sim:sata-mlc", "002": "sim:sata-tlc"}


class Run:
    """One scaled reviewer run: its store, id and typed summaries by test name."""

    def __init__(self, results, seed: str):
        # the HTML report is written once, by the last test (its charts cost more than the scaled runs)
        out = ssdpts("run", SEEDS[seed], "--profile", str(HERE / "profiles" / f"review-{seed}-scaled.toml"),
                     "--results", str(results), "-q", env={**os.environ, "SSDPTS_REPORT": "0"})
        self.store = Store.in_dir(results)
        self.id = out.stdout.strip().splitlines()[-1]
        self.tests = {t["name"]: t for t in self.store.tests(self.id)}
        self.summary = {name: registry.decode_stored(name, t["summary"]) for name, t in self.tests.items()}

    def headlines(self):
        return {h.test: h for h in headlines_of_run(self.store, self.store.run(self.id),
                                                       check(load_run(self.store, self.id), self.store))}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return {seed: Run(tmp_path_factory.mktemp(f"review{seed}"), seed) for seed in SEEDS}


def ordered(lat) -> bool:
    """mean <= p99 <= p99.9 <= p99.99 <= max, all > 0 (percentiles are never above the measured max)."""
    values = [lat.mean_us, lat.p("99"), lat.p("99.9"), lat.p("99.99"), lat.max_us]
    return all(v is not None and v > 0 for v in values) and values[1:] == sorted(values[1:])


def assert_reviewers_chart(lat_iops, tc: int, qds: list[int]) -> None:
    """The reviewers' chart (seed 003: "for the chosen thread count, latency (99 %, 99.99 %, mean) vs IOPS for
    all blocks and R/W ratios"): per statistic a line for every block size x mix x direction at `tc`, its points
    the stored window averages of that family's TC x QD cells, QD rising; a line marked saturated did stop
    gaining IOPS there."""
    expected = {(f"RND {bs} {r}/{100 - r} {d}", bs_b, r, d) for bs, bs_b in (("4K", 4096), ("8K", 8192))
                for r in (100, 70, 0) for d in ("read", "write") if (d == "read" and r) or (d == "write" and r < 100)}
    assert lat_iops.chart_tc == tc
    for stat, key in STATISTICS.items():
        curves = lat_iops.curves(stat)
        assert {(c.label, c.block_size, c.read_pct, c.direction) for c in curves} == expected, stat
        for c in curves:
            family = lat_iops.family(c.block_size, c.read_pct)
            assert c.tc == tc and c.statistic == stat and [p.qd for p in c.points] == qds
            for p in c.points:
                point = family.point(tc, p.qd)
                lat = point.read_lat if c.direction == "read" else point.write_lat
                truth = lat.mean_us if key == "mean" else lat.max_us if key == "max" else lat.p(key)
                assert (p.iops, p.latency_us) == (point.iops, truth) and truth > 0
            if c.saturated_from_qd is not None:
                i = qds.index(c.saturated_from_qd)
                before, at = c.points[i - 1], c.points[i]
                assert at.iops < before.iops * (1 + SATURATION_GAIN) and at.latency_us > before.latency_us


def test_every_reviewer_profile_completes_every_test_with_a_headline(runs):
    for seed, run in runs.items():
        assert all(t["status"] == "completed" for t in run.tests.values()), (seed, run.tests)
        heads = run.headlines()
        assert set(heads) == set(run.tests)
        assert all(h.figures for h in heads.values()), seed


def test_seed_000_review_on_the_client_drive(runs):
    s = runs["000"].summary
    assert set(s) == {"iops", "throughput", "latency", "lat-iops", "wsat", "hir", "cbw", "slc-cache", "fresh-peak"}
    iops = s["iops"]                                    # 000-12/13/14: 7 BS (no 0.5 KiB) x 7 mixes at AR 75 %
    assert iops.block_sizes == [1048576, 131072, 65536, 32768, 16384, 8192, 4096]
    assert iops.mixes == [100, 95, 65, 50, 35, 5, 0]
    assert all(c.workload.range_size == 0.75 and c.workload.threads == 24 and c.workload.iodepth == 32
               for c in iops.cells.values())
    assert all(ordered(c_lat) for c_lat in (c.read_lat or c.write_lat for c in iops.cells.values()))
    assert iops.series and all(len(x.t_s) > 1 for x in iops.series.values())      # consistency inside a cell
    peak = {r.rw: r for r in s["fresh-peak"].results}                             # 000-15: FOB vs steady
    assert peak["randread"].iops > 0 and peak["randwrite"].fresh_over_steady > 0
    assert {b.block_size for b in s["throughput"].block_sizes} == {131072, 1048576}          # 000-16
    lat = s["latency"]                                                             # 000-19: 8/4 KiB x 100/70/0
    assert (lat.block_sizes, lat.mixes) == ([8192, 4096], [100, 70, 0])
    lat_iops = s["lat-iops"]                                                       # 000-20/21/22
    assert [(f.block_size, f.read_pct) for f in lat_iops.families] == [
        (bs, pct) for bs in (4096, 8192) for pct in (100, 70, 0)]
    assert lat_iops.preconditioning and lat_iops.purge is not None                # the seed's WIPC first
    for f in lat_iops.families:
        assert {p.tc for p in f.points} == {1, 4} and {p.qd for p in f.points} == {1, 8, 32}
        for p in f.points:
            assert all(ordered(p.read_lat if d == "read" else p.write_lat) for d in f.directions), (f.prefix, p.name)
    assert_reviewers_chart(lat_iops, tc=4, qds=[1, 8, 32])                        # 000-20: at up to 4 threads
    wsat = s["wsat"].workloads["rnd4k-write"]                                      # 000-24/25: median .. max
    assert len(wsat.series) >= 4 and all(i.iops > 0 for i in wsat.series)
    assert all(0 < i.percentiles_us["50"] <= i.percentiles_us["99"] <= i.lat_max_us for i in wsat.series)
    hir = s["hir"]                                                                 # 000-27/28: after fixed WSAT
    assert hir.preconditioning.fixed_length and len(hir.wait_states) == 2
    for w in hir.wait_states.values():
        assert w.ab_iops_mean > 0 and ordered(w.ab_latency)
    # HIR at the review's own load (000 §WSAT: TC8/QD16, HIR's preconditioning), not the IOPS test's TC24/QD32:
    # every burst the engine was given, and the load the summary and its headline state
    bursts = [w for w in runs["000"].store.first_round_workloads(runs["000"].id, "hir")]
    assert bursts and {(w["threads"], w["iodepth"]) for w in bursts} == {(8, 16)}
    assert (hir.threads, hir.iodepth, hir.load()) == (8, 16, "TC8/QD16 (128 I/Os outstanding)")
    cbw = s["cbw"]                                                                 # 000-29/30/31: read vs write
    assert all(p.read_lat and p.write_lat for p in cbw.points)
    slc = s["slc-cache"]                                                           # 000-18: size and share
    assert slc.cache_bytes > 0 and 0 < slc.share_percent < 100 and slc.native_share_percent > slc.share_percent


def test_seed_003_review_dc_on_the_enterprise_drive(runs):
    s = runs["003"].summary
    assert set(s) == {"iops", "throughput", "latency", "lat-iops", "wsat", "hir"}
    assert all(c.workload.threads == 16 and c.workload.iodepth == 16 for c in s["iops"].cells.values())   # 003-11
    tp = s["throughput"].block_sizes                                               # 003-15: SEQ 128K TC1/QD128
    assert [b.block_size for b in tp] == [131072]
    lat_iops = s["lat-iops"]                                                       # 003-19/20/21: QD up to 128
    for f in lat_iops.families:
        p = f.point(4, 128)
        assert p is not None and p.iops > 0
        assert all(ordered(p.read_lat if d == "read" else p.write_lat) for d in f.directions)
    assert_reviewers_chart(lat_iops, tc=4, qds=[1, 16, 128])                      # 003: "при четырёх потоках"
    wsat = s["wsat"].workloads["rnd4k-write"]                                      # 003-23/24
    assert wsat.final_iops > 0 and all("99.99" in i.percentiles_us for i in wsat.series)
    assert all(ordered(w.ab_latency) for w in s["hir"].wait_states.values())       # 003-26


def test_seed_001_review_consumer_on_the_sata_mlc_drive(runs):
    s = runs["001"].summary
    scan = s["surface-scan"]                                                       # 001-6
    assert scan.errors == 0 and len(scan.regions) == 16 and all(r.mib_s > 0 for r in scan.regions)
    sweep = s["bs-sweep"]                                                          # 001-15..19: fresh and used
    assert {(c.state, c.block_size) for c in sweep.cells} >= {("fresh", 512), ("used", 1048576)}
    assert all(c.iops > 0 for c in sweep.cells)
    rwot = s["rw-over-time"]                                                       # 001-21/23
    assert [b.block_size for b in rwot.block_sizes] == [4096, 16384]
    assert all(len(b.series) >= 5 and b.final_mb_s > 0 for b in rwot.block_sizes)
    assert [a.active_range_percent for a in s["op-study"].active_ranges] == [100, 50]          # 001-24
    methods = {m.method: m for m in s["purge-study"].methods}                      # 2b: do wipes restore FOB?
    assert methods["purge"].percent_of_reference == 100 and methods["none"].mean_iops > 0
    assert not methods["zero-fill"].snia_purge
    span = s["span-sweep"]                                                         # 001-25
    assert [round(p.span_fraction, 1) for p in span.points] == [0.1, 0.5, 1.0]
    assert all(p.read.iops > 0 for p in span.points)


def test_seed_002_review_endurance_on_the_sata_tlc_drive(runs):
    s = runs["002"].summary
    assert {(c.rw, c.block_size) for c in s["bs-sweep"].cells} >= {("randwrite", 4096), ("read", 4096)}   # 002-9
    var = s["variants"]                                                            # 002-11..13: four jobs each
    assert [(w.rw, w.block_size) for w in var.all_workloads] == [
        ("read", 4096), ("write", 4096), ("randread", 4096), ("randwrite", 4096)]
    ran = {w["name"]: w for w in runs["002"].store.first_round_workloads(runs["002"].id, "variants")}
    text = "\n".join(registry.get("variants").text(var, SIMULATED))
    for rw in ("read", "write", "randread", "randwrite"):
        buffered = var.variant("buffered", rw, 4096)
        assert buffered.direct is False and "page cache" in buffered.label and buffered.iops > 0
        small, large = var.variant("ws-small", rw, 4096), var.variant("ws-large", rw, 4096)
        assert (small.working_set_bytes, small.threads) == (64 * 2**20, 32) and large.working_set_bytes == 2**30
        # 002 §working sets ran after "direct 1 -> 0": through the page cache, labelled so, at their own jobs
        for v, jobs in ((small, 32), (large, 2)):
            cell = ran[f"v_{v.variant.replace('-', '_')}_{rw}_4K"]         # what the engine was given to run
            assert (cell["direct"], cell["threads"], v.direct, v.threads) == (False, jobs, False, jobs)
            assert v.label.endswith("(page cache, not the drive)") and v.iodepth == cell["iodepth"]
            assert f"{v.label:<48} {f'TC{jobs}/QD{v.iodepth}':>10}" in text
    end = s["endurance"]                                                           # 002-6/7/15/17
    assert end.polls and all(p.erase_count_avg is not None for p in end.series)
    assert end.erase_increments and end.erase_increments[0].count > 0
    assert len(end.loops) >= 2 and all(loop.duration_s > 0 for loop in end.loops)


def docs_not_held(preset: str) -> list[str]:
    """The review figures docs/simulator.md's calibration table marks *not held* for a preset (its review column)."""
    rows = [r.split("|") for r in (HERE.parent / "docs" / "simulator.md").read_text().splitlines()
            if r.startswith(f"| `{preset}` |") and "not held" in r]
    return [r[4].strip() for r in rows]


def test_the_report_of_a_reviewer_run_opens_with_its_headline_page(runs, tmp_path):
    """The first screen of seed 000's report on sim:client: the verdict as `check` gives it (conformance and the
    lab's criteria), one key figure per test as the test states it, the reviewers' p99.99 chart first, and that
    the drive is simulated: which review figures its preset does not hold (docs/simulator.md's table) and its
    times simulated beside the wall clock."""
    run = runs["000"]
    results = run.store.path.parent
    rules = HERE.parent / "src" / "ssdpts" / "criteria" / "examples" / "datacenter.toml"
    checked = ssdpts("check", run.id, "--results", str(results), "--criteria", str(rules), check=False)
    out = ssdpts("report", run.id, "--results", str(results), "--out", str(tmp_path / "rep"), "--criteria",
                 str(rules)).stdout.strip()
    html = open(out).read()
    assert html.index('id="headline"') < html.index('id="summary"') < html.index('id="test-iops"')
    page = json.loads((tmp_path / "rep" / "results.json").read_text())["headline_page"]
    verdicts = [v["text"] for v in page["verdicts"]]
    assert verdicts[0].startswith("NOT conformant to PTS 2.0.1 as modified by seed 000")   # the seed's deviations
    criteria = next(v for v in page["verdicts"] if v["text"].startswith("Criteria "))
    assert criteria["ok"] == (checked.returncode == 0) and checked.stdout.split("(")[1].split(")")[0] in \
        criteria["text"]                                   # "(8 of 11 rules hold)", as check printed it
    heads = run.headlines()
    for f in page["figures"]:
        stated = {(g.label, g.value, g.unit) for g in heads[f["test"]].figures}
        assert (f["label"], f["value"], f["unit"]) in stated and f["basis"]
    assert len({f["test"] for f in page["figures"]}) == len(page["figures"]) == 8
    assert page["charts"][0] == "lat-iops-reviewers-p99_99" and len(page["charts"]) == 3
    sim = page["simulated"]
    assert sim["preset"] == "client" and sim["imitates"].startswith("Kingston KC2000")
    not_held = [f for f in sim["figures"] if not f["held"]]
    shown = [f"{f['review_value']:,.0f} {f['unit']}" for f in not_held]
    assert [x.replace(" ", "") for x in shown] == [x.replace(" ", "") for x in docs_not_held("client")]
    assert sim["simulated_s"] > sim["wall_s"] > 0
    assert "Times in this report are <b>simulated</b>" in html and "s simulated (wall" in html


def test_a_histogram_percentile_is_never_above_the_measured_max():
    """fio's json+ bucket values are ~1.6 % wide: the bucket holding the slowest I/O can name a value above its
    measured max; the percentile is cut to the max (no I/O was slower)."""
    from ssdpts.engines.results import DirStats
    from ssdpts.pts.windows import merged_latency

    stats = DirStats(ios=10_000, lat_mean_ns=10_000, lat_max_ns=10_600, percentiles={"99": 0, "99.99": 0},
                     bins={10_000: 9_990, 10_752: 10})
    lat = merged_latency([stats])
    assert lat.p("99") == 10.0 and lat.p("99.99") == lat.max_us == 10.6


def test_the_example_criteria_judge_hir_at_the_load_they_name(runs):
    """docs/examples/write-heavy-server.toml: its HIR latency bounds are judged at the load the review ran HIR at;
    the evidence is the run's own headline figures (merged fio histograms of every burst)."""
    from ssdpts.criteria import load_criteria
    from ssdpts.criteria.judge import judge

    run = runs["000"]
    loaded = load_run(run.store, run.id)
    outcome = judge(loaded, load_criteria(HERE.parent / "docs" / "examples" / "write-heavy-server.toml"),
                    check(loaded, run.store))
    by = {j.rule.name: j for j in outcome.judgements}
    hir = run.summary["hir"]
    assert by["HIR judged at the review's load"].value == 128 and by["HIR judged at the review's load"].ok
    assert by["HIR burst p99.9 latency"].value == hir.bursts_latency.p("99.9")
    assert by["HIR burst max latency"].value == hir.bursts_latency.max_us
    assert "TC8/QD16" in by["HIR burst max latency"].where


def test_the_reviews_totals_are_the_rows_counted():
    """docs/reviews.md's totals table is the count of its rows' statuses (Y, P, B) and out-of-scope items: a row
    changed without its total (or the reverse) fails here."""
    import re
    text = (HERE.parent / "docs" / "reviews.md").read_text()
    totals = {m[0]: tuple(int(x) for x in m[1:]) for m in re.findall(
        r"^\| (\d{3}) \S+ \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|$", text, flags=re.M)}
    assert sorted(totals) == ["000", "001", "002", "003", "004"]
    for seed, (rows, y, p, b, n, out) in totals.items():
        section = text.split(f"## Seed {seed}")[1].split("\n## ")[0] + "\n\n"
        status = [line.split("|")[-2].strip()[:1] for line in section.splitlines()
                  if re.match(rf"\| {seed}-\d+ \|", line)]
        [scope] = re.findall(r"^Out of scope: (.*?)\n\n", section, flags=re.M | re.S)
        counted = (status.count("Y"), status.count("P"), status.count("B"), status.count("N"))
        assert counted == (y, p, b, n) and len(re.findall(rf"{seed}-\d+", scope)) == out, seed
        assert rows == len(status) + out and set(status) <= {"Y", "P", "B", "N"}, seed
