"""The reviewer profiles, each on the simulated drive its seed review tested (docs/reviews.md), with durations
scaled down (tests/profiles/review-NNN-scaled.toml). Every figure and table the review shows is asserted through the
typed summaries, not the HTML: seed 000 `review` on sim:client, 003 `review-dc` on sim:enterprise, 001
`review-consumer` on sim:sata-mlc, 002 `review-endurance` on sim:sata-tlc."""

from __future__ import annotations

import os

import pytest

from conftest import HERE, ssdpts
from ssdpts.conformance import check
from ssdpts.runresult.model import load_run
from ssdpts.pts import registry
from ssdpts.report.core import write_report
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
    wsat = s["wsat"].workloads["rnd4k-write"]                                      # 000-24/25: median .. max
    assert len(wsat.series) >= 4 and all(i.iops > 0 for i in wsat.series)
    assert all(0 < i.percentiles_us["50"] <= i.percentiles_us["99"] <= i.lat_max_us for i in wsat.series)
    hir = s["hir"]                                                                 # 000-27/28: after fixed WSAT
    assert hir.preconditioning.fixed_length and len(hir.wait_states) == 2
    for w in hir.wait_states.values():
        assert w.ab_iops_mean > 0 and ordered(w.ab_latency)
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
    for rw in ("read", "write", "randread", "randwrite"):
        buffered = var.variant("buffered", rw, 4096)
        assert buffered.direct is False and "page cache" in buffered.label and buffered.iops > 0
        small, large = var.variant("ws-small", rw, 4096), var.variant("ws-large", rw, 4096)
        assert (small.working_set_bytes, small.threads) == (64 * 2**20, 32) and large.working_set_bytes == 2**30
    end = s["endurance"]                                                           # 002-6/7/15/17
    assert end.polls and all(p.erase_count_avg is not None for p in end.series)
    assert end.erase_increments and end.erase_increments[0].count > 0
    assert len(end.loops) >= 2 and all(loop.duration_s > 0 for loop in end.loops)


def test_the_report_of_a_reviewer_run_renders(runs, tmp_path):
    path = write_report(runs["000"].store, runs["000"].id, tmp_path / "rep", strict=True)
    assert path.exists() and path.stat().st_size > 0


def test_a_histogram_percentile_is_never_above_the_measured_max():
    """fio's json+ bucket values are ~1.6 % wide: the bucket holding the slowest I/O can name a value above its
    measured max; the percentile is cut to the max (no I/O was slower)."""
    from ssdpts.engines.results import DirStats
    from ssdpts.pts.common import merged_latency

    stats = DirStats(ios=10_000, lat_mean_ns=10_000, lat_max_ns=10_600, percentiles={"99": 0, "99.99": 0},
                     bins={10_000: 9_990, 10_752: 10})
    lat = merged_latency([stats])
    assert lat.p("99") == 10.0 and lat.p("99.99") == lat.max_us == 10.6
