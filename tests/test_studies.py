"""The reviewer studies end to end: on a loop device (real fio) and on the simulated SSD (sim:client)."""

import pytest

from conftest import requires_devices, run_completed, ssdpts
from ssdpts.commands.plan import build_plans
from ssdpts.pts import registry
from ssdpts.report.html import write_report
from ssdpts.store import Store
from ssdpts.targets import open_target
from ssdpts.targets.sim import SimTarget, open_sim_target
from ssdpts.units import bs_label

pytestmark = pytest.mark.no_end_report    # writes the report it checks (tests/conftest.py)

STUDIES = "slc-cache,bs-sweep,rw-over-time,op-study,variants,fresh-peak"


run = run_completed


def summaries(store, rid):
    """Every test's stored summary, read back as its typed record through the registry."""
    return {t["name"]: registry.get(t["name"]).decode(t["summary"]) for t in store.tests(rid)}


def sim_slc_capacity_after_purge() -> int:
    target = open_sim_target("sim:client")
    assert isinstance(target, SimTarget)
    target.drive.purge()
    return int(target.drive.counters()["slc_capacity_bytes"])


@pytest.fixture(scope="module")
def sim_run(tmp_path_factory):
    """All six studies in one run on the simulated client SSD (its report is written by the test below)."""
    results = tmp_path_factory.mktemp("sim-studies")
    from conftest import TINY

    rid, store = run("sim:client", results, str(TINY), STUDIES)
    return rid, store, results


def test_slc_cache_on_the_simulated_ssd(sim_run):
    rid, store, _ = sim_run
    s = summaries(store, rid)["slc-cache"]
    truth = sim_slc_capacity_after_purge()
    assert s.reference.slc_capacity_bytes == truth
    assert s.drop_detected and s.cache_bytes == pytest.approx(truth, rel=0.05)
    # the client preset's three steps: SLC speed -> direct-to-TLC -> folding while writing
    steps = s.steps
    assert len(steps) == 3
    assert steps[0].mib_s > 2 * steps[1].mib_s
    assert steps[1].mib_s > 1.3 * steps[2].mib_s
    assert steps[0].bytes / 2**30 == pytest.approx(s.cache_gib, rel=0.05)
    # stored intervals: one continuous sequential write of the whole capacity, bandwidth per interval
    rounds = store.rounds(rid, "slc-cache", "seq")
    assert sum(r.cells[0].write.bytes for r in rounds) == s.written_bytes == s.capacity_bytes
    assert all(r.tracking["mib_s"] > 0 and r.cells[0].read.ios == 0 for r in rounds)
    ends = [r.tracking["end_s"] for r in rounds]
    assert all(b > a for a, b in zip(ends, ends[1:])) and ends[-1] == pytest.approx(s.elapsed_s)


def test_op_study_iops_rise_as_the_active_range_shrinks(sim_run):
    rid, store, _ = sim_run
    s = summaries(store, rid)["op-study"].active_ranges
    assert [a.active_range_percent for a in s] == [100, 75, 50, 25]
    iops = [a.iops for a in s]
    assert all(b > a for a, b in zip(iops, iops[1:])), iops
    assert iops[-1] > 3 * iops[0]
    for a in s:
        k = f"{a.active_range_percent:g}"
        rounds = store.rounds(rid, "op-study", f"ar={k}")
        assert a.rounds == a.steady.rounds == len(rounds) >= 5 and len(a.iops_per_round) == len(rounds)
        pre = store.rounds(rid, "op-study", f"ar={k}", kind="precondition")
        assert len(pre) == 1 and pre[0].workloads[0]["range_size"] == pytest.approx(int(k) / 100)
        assert rounds[0].workloads[0]["range_size"] == pytest.approx(int(k) / 100)


def test_other_studies_on_the_simulated_ssd(sim_run):
    rid, store, _ = sim_run
    s = summaries(store, rid)
    # bs-sweep: 0.5K skipped (4 KiB logical block), fresh and used, MB/s grows with the block size for reads
    b = s["bs-sweep"]
    assert b.block_sizes == [4096, 65536, 2**20] and any("0.5K skipped" in n for n in b.notes)
    for state in ("fresh", "used"):
        for rw in ("read", "randread", "write", "randwrite"):
            assert all(b.cell(state, rw, k).mb_s > 0 for k in b.block_sizes)
        assert b.cell(state, "randread", 2**20).mb_s > b.cell(state, "randread", 4096).mb_s
    assert b.cell("used", "write", 2**20).mb_s < b.cell("fresh", "write", 2**20).mb_s
    assert store.rounds(rid, "bs-sweep", "used/precondition")[0].workloads[0]["bs"] == 65536
    # rw-over-time: a purge per block size, intervals of MB/s
    r = s["rw-over-time"]
    assert [b.label for b in r.block_sizes] == ["4K", "128K"] and any("2K skipped" in n for n in r.notes)
    assert all(v.intervals >= 3 and len(v.series) == v.intervals and v.first_mb_s > 0 for v in r.block_sizes)
    assert all(v.purge.method == "sim-purge" for v in r.block_sizes)
    assert all(v.level_band_pct == 10 and (v.stable_after_s is None or 0 <= v.stable_after_s <= r.duration_s)
               for v in r.block_sizes)
    assert {st["key"] for st in store.steps(rid, "rw-over-time") if st["kind"] == "purge"} >= {"purge:bs=4K",
                                                                                              "purge:bs=128K"}
    # variants: the working set is sized against this run's slc-cache estimate
    v = s["variants"]
    assert v.cache_source == "slc-cache estimate of this run" and v.cache_bytes == int(s["slc-cache"].cache_bytes)
    assert [x.variant for x in v.variants] == ["random", "compress50", "zero", "dsync", "ws-small", "ws-large", "buffered"]
    assert v.variant("ws-small").working_set_bytes < v.cache_bytes < v.variant("ws-large").working_set_bytes
    assert v.variant("buffered").label == "buffered: page cache, not the drive"
    assert v.variant("buffered").direct is False and v.variant("dsync").sync is True
    assert v.variant("random").vs_baseline == 1.0
    assert any("simulated drive models neither" in n for n in v.notes)
    # fresh-peak: the FOB write peak is far above the steady state the op-study reached at AR 100 %
    f = s["fresh-peak"]
    assert f.result("randread").iops > 0 and f.result("randwrite").iops > 5 * s["op-study"].at(100).iops
    assert f.result("randwrite").latency.mean_us > 0 and f.result("randwrite").latency.p("99") > 0
    assert f.result("randwrite").steady is None          # no IOPS test or WSAT in this run


def test_report_has_the_study_sections_and_charts(sim_run, monkeypatch):
    from plotted import capture

    rid, store, results = sim_run
    plotted = capture(monkeypatch)
    path = write_report(store, rid, results / "report-out", strict=True)
    html = path.read_text()
    for test, chart in [("slc-cache", "mib-vs-time"), ("bs-sweep", "mb-vs-bs"), ("rw-over-time", "mb-vs-time"),
                        ("op-study", "iops-vs-ar"), ("variants", "variants"), ("fresh-peak", "fresh-vs-steady")]:
        assert f'id="test-{test}"' in html or f"test-{test}" in html
        assert f'id="fig-{test}-{chart}"' in html, (test, chart)
        assert (path.parent / "plots" / f"{test}-{chart}.png").stat().st_size > 1000
    assert "SLC cache estimate" in html and "page cache, not the drive" in html
    assert "report section failed" not in html
    # seed 001 Fig 13: random-write MB/s over time, one line per active range; every point is one stored round
    # (its write bandwidth), the time axis the rounds' measured run times back to back
    lines = plotted["op-study-mb-vs-time"].lines
    op = summaries(store, rid)["op-study"]
    assert len(lines) == len(op.active_ranges) == 4
    for a in op.active_ranges:
        (t, mb_s), = [xy for (_, label), xy in lines.items() if label.startswith(f"AR {a.active_range_percent:g} %")]
        rounds = store.rounds(rid, "op-study", f"ar={a.active_range_percent:g}")
        cells = [r.cells[0] for r in rounds]
        assert len(mb_s) == len(rounds) == a.rounds
        assert mb_s == pytest.approx([c.write.bw_bytes / 1e6 for c in cells], rel=1e-9)
        # the bytes written over the whole-ms run time agree within its rounding
        assert mb_s == pytest.approx([c.write.bytes / (c.runtime_ms / 1000) / 1e6 for c in cells], rel=0.02)
        assert t == pytest.approx([sum(c.runtime_ms for c in cells[:i + 1]) / 1000 for i in range(len(cells))])


def test_show_text_and_headlines_of_the_studies(sim_run):
    rid, store, results = sim_run
    text = ssdpts("show", rid, "--results", str(results)).stdout
    s = summaries(store, rid)
    assert f"SLC cache estimate: {s['slc-cache'].cache_gib:.2f} GiB" in text
    assert "fresh  SEQ read" in text and "used   RND write" in text            # bs-sweep table rows
    assert "NOT REACHED" in text or "reached after" in text                      # op-study verdict per range
    assert "buffered: page cache, not the drive" in text and "FOB IOPS" in text
    for name, summary in s.items():
        heads = registry.get(name).headline(summary)
        assert heads and all(h.value is None or h.value > 0 for h in heads), name
    assert [h.value for h in registry.get("op-study").headline(s["op-study"])] == [
        a.iops for a in s["op-study"].active_ranges]


def test_the_plan_of_every_study_is_what_the_run_did(sim_run):
    """`ssdpts plan` builds each study's cells with the functions its run uses: the same cells, TC, QD, sizes."""
    from conftest import TINY

    rid, store, _ = sim_run
    names = STUDIES.split(",")
    _, plans = build_plans(open_target("sim:client"), str(TINY), names)
    for name, (_, plan) in zip(names, plans):
        planned = {(c.name, c.rw, c.block_size, c.threads, c.iodepth) for ph in plan.phases for c in ph.cells}
        ran = {(w["name"], w["rw"], bs_label(w["bs"]), w["threads"], w["iodepth"])
               for kind in ("precondition", "round") for r in store.rounds(rid, name, kind=kind)
               for w in r.workloads}
        assert planned == ran, name
        assert plan.phases[0].name == "purge"


def test_fresh_peak_beside_the_iops_steady_state_of_the_same_run(tmp_path):
    from conftest import TINY

    rid, store = run("sim:client", tmp_path / "results", str(TINY), "iops,fresh-peak")
    s = summaries(store, rid)
    iops, fresh = s["iops"], s["fresh-peak"]
    for rw, read_pct in (("randread", 100), ("randwrite", 0)):
        r = fresh.result(rw)
        steady = iops.iops(4096, read_pct)
        if steady is None:            # the profile's IOPS matrix lacks this mix: no reference, none invented
            assert r.steady is None and r.fresh_over_steady is None
            continue
        assert r.steady.iops == steady and r.steady.source.startswith("IOPS test, RND 4K")
        assert r.fresh_over_steady == r.iops / steady
    assert fresh.result("randwrite").steady is not None


def test_slc_cache_and_rw_over_time_on_two_drives_at_once(tmp_path, tiny):
    """A parallel run writes every drive: the stored bytes are sums, planned and fills say so."""
    files = [str(tmp_path / f"d{i}.img") for i in (1, 2)]
    p = ssdpts("run", *files, "--size", "64M", "--profile", tiny, "--tests", "slc-cache,rw-over-time", "--destroy-data",
               "--results", str(tmp_path / "results"), "-q")
    rid = p.stdout.strip().splitlines()[-1]
    s = summaries(Store.in_dir(tmp_path / "results"), rid)
    c = s["slc-cache"]
    assert c.drives == 2 and c.planned_bytes == 2 * c.capacity_bytes == c.written_bytes
    assert c.stop_reason == "planned bytes written" and "2 drives written at once" in c.notes[0]
    for b in s["rw-over-time"].block_sizes:
        assert b.fills == pytest.approx(b.written_bytes / (2 * c.capacity_bytes))


@requires_devices
def test_studies_on_a_loop_device(loop_factory, tmp_path, tiny):
    dev = loop_factory(128 * 2**20)
    results = tmp_path / "results"
    rid, store = run(dev, results, tiny, STUDIES, "--purge", "trim")
    s = summaries(store, rid)
    cap = store.run(rid)["target"].size_bytes
    # slc-cache: the whole capacity written sequentially in 1 MiB writes, intervals stored
    c = s["slc-cache"]
    rounds = store.rounds(rid, "slc-cache", "seq")
    assert rounds and "rw=write" in rounds[0].job_text and "bs=1048576" in rounds[0].job_text
    # every byte of the write is stored: the job writes the capacity (io_size); the tail after fio's last 100 ms
    # status document was once lost (tests/test_stream_slices.py; test_streaming.py checks this write's shape
    # against fio's final document and the block layer)
    assert c.written_bytes == sum(r.cells[0].write.bytes for r in rounds) == cap
    assert c.stop_reason == "planned bytes written"
    assert c.steps and c.reference is None
    # bs-sweep: 0.5 KiB runs on a 512-byte-sector loop device; aligned random I/O at QD from the profile
    b = s["bs-sweep"]
    assert b.block_sizes == [512, 4096, 65536, 2**20] and b.notes == []
    assert all(b.cell(st, rw, k).mb_s > 0 for st in ("fresh", "used") for rw in b.workloads for k in b.block_sizes)
    job = store.rounds(rid, "bs-sweep", "fresh")[0].job_text
    assert "bs=512" in job and "iodepth=4" in job
    # rw-over-time: every size (2K too) from its own purge
    r = s["rw-over-time"].block_sizes
    assert [v.label for v in r] == ["2K", "4K", "128K"] and all(v.intervals >= 2 and v.first_mb_s > 0 for v in r)
    # op-study: a steady-state loop per active range
    o = s["op-study"].active_ranges
    assert [v.active_range_percent for v in o] == [100, 75, 50, 25] and all(v.iops > 0 and v.rounds >= 5 for v in o)
    assert f"size={int(cap * 0.25) // 4096 * 4096}" in store.rounds(rid, "op-study", "ar=25")[0].job_text
    # variants: fio options of each variant; working-set variants skipped (cache size unknown)
    v = s["variants"]
    assert {x.variant for x in v.variants} == {"random", "compress50", "zero", "dsync", "buffered"}
    assert any("ws-small skipped" in n for n in v.notes)
    job = store.rounds(rid, "variants", "variants")[0].job_text
    for opt in ("buffer_compress_percentage=50", "zero_buffers=1", "sync=dsync", "direct=0", "scramble_buffers=0"):
        assert opt in job
    # fresh-peak
    f = s["fresh-peak"]
    assert f.result("randread").iops > 0 and f.result("randwrite").iops > 0
    assert "numjobs=2" in store.rounds(rid, "fresh-peak", "fob")[0].job_text


def test_op_study_marks_the_active_ranges_that_never_reached_steady_state(tmp_path):
    """The op-study plot's axis read "steady-state IOPS" where AR 100 % and 75 % never reached steady state
    (only the table said so). A short run on the 1 GiB simulated drive: AR 100 % with 0.2 x the range of
    preconditioning is still falling after its 6 rounds, AR 50 % levels. Which range reached steady state is
    judged here by `ssdpts steady-state` on each range's stored per-round IOPS; the plot marks exactly the others
    hollow, names them in its legend and title, and its axis does not say "steady-state IOPS"."""
    from conftest import HERE, tiny_with
    from ssdpts.pts.op_study.render import iops_vs_ar
    from ssdpts.render.toolkit import Artifacts

    profile = tiny_with(tmp_path / "op.toml", '[tests.op-study]\nactive_ranges = [100, 50]\n'
                        'precondition_multiple = 0.2\nwipc_first = false\ncell_runtime = "200ms"\n')
    results = tmp_path / "results"
    rid, store = run(f"sim:{HERE / 'profiles' / 'sim-small.toml'}", results, profile, "op-study")
    unreached = set()
    for ar in (100, 50):
        iops = [r.cells[0].iops for r in store.rounds(rid, "op-study", f"ar={ar}")]
        judged = ssdpts("steady-state", *map(repr, iops), check=False)
        if "NOT REACHED" in judged.stdout:
            unreached.add(ar)
    assert unreached == {100}, unreached              # the case: one range not reached, one reached
    s = summaries(store, rid)["op-study"]
    fig = Artifacts(tmp_path / "plots", embed=False).figure((8.0, 4.2))
    title = iops_vs_ar(fig, {"RND 4K W": s.active_ranges})
    ax = fig.axes[0]
    hollow = [line for line in ax.get_lines() if line.get_markerfacecolor() == "white"]
    assert len(hollow) == 1 and set(hollow[0].get_xdata()) == unreached
    assert list(hollow[0].get_ydata()) == [s.at(100).iops]
    assert "steady-state" not in ax.get_ylabel() and "NOT reached at AR 100 %" in title
    assert "steady state NOT reached (AR 100 %)" in [t.get_text() for t in ax.get_legend().get_texts()]
    path = write_report(store, rid, tmp_path / "report", strict=True)
    svg = (path.parent / "plots" / "op-study-iops-vs-ar.svg").read_text()
    assert "steady state NOT reached at AR 100 %" in svg and "steady-state IOPS" not in svg
