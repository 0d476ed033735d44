"""SNIA procedures as ssdpts runs them: the order, TC/QD, streams, seeds and alignment of what is submitted.

Real-profile procedures are read from what a test submits to a recording engine (tests/recording.py);
stream continuation, seeds and alignment are also checked on real fio (loop devices).
"""

from __future__ import annotations

import re

import pytest

from conftest import run_completed
from recording import fake_target, record
from ssdpts.clock import WALL
from ssdpts.pts import registry
from ssdpts.pts.cells import round_seed
from ssdpts.runoptions import SeedChoice
from ssdpts.units import bs_label
from ssdpts.workload import Workload, render

pytestmark = pytest.mark.no_end_report    # reads no end-of-run report (tests/conftest.py)


# --- latency: block-size inner loop 8 -> 4 -> 0.5 KiB --------------------------------------------------

@pytest.mark.parametrize("profile", ["pts-enterprise", "pts-client", "pts-e11"])
def test_latency_block_size_order_is_8_4_half(tmp_path, profile):
    rec = record(tmp_path, profile, "latency")
    first_round = next(s for s in rec.engine.submitted if s.tag.endswith("round 1"))
    order = [(w.reads, bs_label(w.bs)) for w in first_round.cells]
    assert order == [(m, b) for m in (100, 65, 0) for b in ("8K", "4K", "0.5K")]
    assert all(w.threads == 1 and w.iodepth == 1 and w.runtime_s == 60 for w in first_round.cells)


# --- WIPC at the test's own TC/QD ---------------------------------------------------------------------

@pytest.mark.parametrize("profile, test, tc, qd", [
    ("pts-enterprise", "iops", 4, 32), ("pts-client", "iops", 2, 16),
    ("pts-enterprise", "latency", 1, 1), ("pts-enterprise", "throughput", 1, 32),
])
def test_wipc_runs_at_the_tests_tc_qd(tmp_path, profile, test, tc, qd):
    rec = record(tmp_path, profile, test)
    pcs = [s.cells[0] for s in rec.engine.submitted if s.tag.endswith("precondition")]
    assert pcs, "no WIPC submitted"
    for w in pcs:
        assert w.rw == "write" and (w.threads, w.iodepth) == (tc, qd)
        # 2x the user capacity in total, over the active range
        assert w.io_size * w.threads == pytest.approx(2 * rec.ctx.target.size_bytes, rel=1e-3)


# --- throughput: tracking variable per spec, continuing streams ----------------------------------------

def trackers(rec, bs: str) -> list[str]:
    """The tracker labels of the throughput loop at block size `bs` ("128K")."""
    result = next(b for b in rec.summary.block_sizes if b.label == bs)
    return [t.key.label for t in result.steady.trackers]


def test_throughput_tracking_follows_the_profiles_spec(tmp_path):
    e11 = record(tmp_path / "e11", "pts-e11", "throughput")
    pts2 = record(tmp_path / "p2", "pts-enterprise", "throughput")
    for bs in ("128K", "1024K"):
        assert trackers(e11, bs) == [f"seq_{bs}_0-100 write_bw"]
        assert trackers(pts2, bs) == [f"seq_{bs}_100-0 read_bw", f"seq_{bs}_0-100 write_bw"]


# --- repeatable random streams ------------------------------------------------------------------------

def test_seed_is_stored_with_every_round_and_differs_per_round(tmp_path):
    rec = record(tmp_path, "pts-enterprise", "latency", seed=1234)
    rounds = rec.store.rounds(rec.ctx.run_id, "latency", "")
    seeds = [[w["seed"] for w in r.workloads] for r in rounds]
    for r, row in zip(rounds, seeds):
        names = [w["name"] for w in r.workloads]
        assert row == [round_seed(1234, "latency", "", r.round, n) for n in names]
    assert seeds[0] != seeds[1] and len(set(seeds[0])) == len(seeds[0])


def test_same_seed_same_fio_job_text(loopdev, results, tiny):
    a, store = run_completed(loopdev, results, tiny, "latency", "--purge", "trim", "--seed", "77")
    b, _ = run_completed(loopdev, results, tiny, "latency", "--purge", "trim", "--seed", "77")
    ra, rb = store.rounds(a, "latency", ""), store.rounds(b, "latency", "")
    assert store.run(a)["options"].seed == SeedChoice(77, "command line (--seed)")
    # steady state may come at another round on a real device: compare the rounds both runs had
    both = min(len(ra), len(rb))
    randseeds = [re.findall(r"^randseed=(\d+)$", r.job_text, re.M) for r in ra[:both]]
    assert randseeds[0] and randseeds == [re.findall(r"^randseed=(\d+)$", r.job_text, re.M) for r in rb[:both]]


def test_without_a_seed_one_is_drawn_and_recorded(loopdev, results, tiny):
    rid, store = run_completed(loopdev, results, tiny, "latency", "--purge", "trim")
    seed = store.run(rid)["options"].seed
    assert seed.source == "drawn for this run" and 0 <= seed.value < 2**32
    assert store.run(rid)["profile"]["defaults"]["seed"] == seed.value


# --- CBW alignment -------------------------------------------------------------------------------------

@pytest.mark.parametrize("logical, physical, align", [(512, 4096, 4096), (512, 512, 4096), (4096, 4096, 4096),
                                                      (512, 16384, 16384)])
def test_cbw_aligned_to_4k_or_the_physical_block(tmp_path, logical, physical, align):
    rec = record(tmp_path, "pts-enterprise", "cbw", target=fake_target(logical=logical, physical=physical))
    assert rec.summary.alignment_bytes == align
    assert (rec.summary.block_sizes_bytes.logical, rec.summary.block_sizes_bytes.physical) == (logical, physical)
    sweep = [w for s in rec.engine.submitted for w in s.cells]
    assert sweep and all(w.align == align for w in sweep)
    opts = render(sweep[:1], "/dev/x", 2**30, logical).sections[0][1]
    assert opts["blockalign"] == str(align)


# --- HIR preconditioning: rounds of 30 x 1 min, steady state on the last minute ------------------------

def test_hir_preconditioning_rounds_of_30_minutes_tracked_on_the_last(tmp_path):
    rec = record(tmp_path, "pts-enterprise", "hir", repetitions=2)
    pc = [s for s in rec.engine.submitted if s.tag.startswith("pc round")]
    # flat results: steady at the first full window (the engine already holds round 6, then cancelled)
    assert len(rec.store.rounds(rec.ctx.run_id, "hir", "pc")) == 5 and len(pc) == 6
    for s in pc:
        assert len(s.cells) == 30
        assert all(w.rw == "randwrite" and w.bs == 4096 and w.runtime_s == 60 for w in s.cells)
    steady = rec.summary.steady
    assert steady.phase == "pc" and [t.key.label for t in steady.trackers] == ["rnd_4K_0-100_m30 iops"]
    assert rec.ctx.settings.steady.max_rounds == 25
    assert rec.summary.preconditioning_cells_per_round == 30
    assert len(rec.summary.preconditioning_iops) == 5
    spec = registry.get("hir")
    assert spec.decode(spec.encode(rec.summary)) == rec.summary      # stored and read back as typed


def test_hir_fixed_length_preconditioning_after_a_wipc_is_recorded_and_flagged(tmp_path):
    """Seed 004's preparation: 2x SEQ 128 KiB, then 120 min of RND 4K writes (one round), not steady state."""
    rec = record(tmp_path, "pts-enterprise", "hir", repetitions=2, precondition_time="120m",
                 fixed_preconditioning=True, wipc_multiple=2)
    wipc, pc = rec.engine.submitted[0].cells, rec.engine.submitted[1].cells
    assert [(w.rw, w.bs) for w in wipc] == [("write", 128 * 1024)]
    assert wipc[0].io_size * wipc[0].threads == pytest.approx(2 * rec.ctx.target.size_bytes, rel=1e-3)
    assert len(pc) == 120 and all(w.rw == "randwrite" and w.runtime_s == 60 for w in pc)
    assert len(rec.store.rounds(rec.ctx.run_id, "hir", "pc")) == 1
    p = rec.summary.preconditioning
    assert (p.wipc_multiple, p.wipc_block_size, p.round_s, p.rounds_run, p.fixed_length) == (2.0, 131072, 7200, 1, True)
    assert p.describe() == ("WIPC: SEQ 128 KiB writes of 2× the capacity, then fixed-length preconditioning of "
                            "120 min of RND 4K writes (the seeds' method), not steady state: non-conformant")
    rules = [d.rule for d in rec.store.deviations(rec.ctx.run_id)["hir"]]
    assert "hir-wipc" in rules and "hir-fixed-preconditioning" in rules
    phases = registry.get("hir").plan(rec.ctx).phases
    assert [ph.name for ph in phases[:3]] == ["purge", "precondition", "rounds"]
    assert [c.name for c in phases[1].cells] == [w.name for w in wipc]
    spec = registry.get("hir")
    assert spec.decode(spec.encode(rec.summary)) == rec.summary
    # a summary stored before burst latency and the preconditioning record (schema 2) still reads
    old = spec.encode(rec.summary) | {"schema": "ssdpts.hir/2"}
    for k in ("bursts_latency", "preconditioning"):
        old.pop(k)
    for w in old["wait_states"].values():
        for k in ("ab_latency", "c_latency", "ab_burst_latency", "c_burst_latency"):
            w.pop(k)
    back = spec.decode(old)
    assert back.preconditioning is None and back.bursts_latency is None
    assert all(w.ab_latency is None and w.ab_burst_latency == [] for w in back.wait_states.values())
    assert registry.get("hir").text(back, WALL)


# --- DIRTH / CBW: PC rounds, pre-write per sweep round, Max/Mid/Min with their own pre-write ------------

@pytest.mark.parametrize("test", ["dirth", "cbw"])
def test_demand_procedure(tmp_path, test):
    rec = record(tmp_path, "pts-enterprise", test)
    subs = rec.engine.submitted
    pc = [s for s in subs if s.tag.startswith("pc round")]
    assert len(rec.store.rounds(rec.ctx.run_id, test, "pc")) == 5
    for s in pc:
        assert len(s.cells) == 30
        assert all((w.threads, w.iodepth, w.reads, w.runtime_s) == (32, 32, 0, 60) for w in s.cells)
    assert [t.key.label for t in rec.summary.preconditioning.trackers] == [f"{test}_pc01 iops"]   # ADATA: 1st minute
    sweep = [s for s in subs if s.tag.startswith(" round")]
    assert len(rec.store.rounds(rec.ctx.run_id, test, "")) == 5
    for s in sweep:
        pre, *points = s.cells
        assert (pre.threads, pre.iodepth, pre.reads, pre.runtime_s) == (32, 32, 0, 300)
        assert [(w.threads, w.iodepth) for w in points] == [(tc, qd) for tc in (32, 16, 8, 6, 4, 2, 1)
                                                          for qd in (32, 16, 8, 6, 4, 2, 1)]
        mix = 65 if test == "dirth" else 40
        assert all(w.reads == mix and w.runtime_s == 60 for w in points)
    ops = rec.summary.operating_points
    segs = [w for s in subs if " part " in s.tag for w in s.cells]
    for k in ("max", "mid", "min"):
        pre = [w for w in segs if w.name.startswith(f"{test}_{k}_prewrite")]
        meas = [w for w in segs if w.name.startswith(f"{test}_{k}_measure")]
        point = rec.summary.point(getattr(ops, k))
        assert len(pre) == 60 and len(meas) == 10
        assert all((w.threads, w.iodepth, w.reads) == (point.tc, point.qd, 0) for w in pre)
        assert all((w.threads, w.iodepth) == (point.tc, point.qd) and w.reads == (65 if test == "dirth" else 40)
                   and w.log_interval_ms > 0 for w in meas)
        m = rec.summary.operating_measurements[k]
        assert m.prewrite_seconds == 3600 and m.measure_seconds == 600 and m.measure_ios > 0
        assert (m.point, m.tc, m.qd) == (point.name, point.tc, point.qd) and len(m.prewrite_iops) == 60
    assert ops.min == f"{test}_tc1_qd1"
    # pre-write of each operating point, then its measurement, Max -> Mid -> Min
    names = [w.name for w in segs]
    firsts = [names.index(f"{test}_{k}_{p}01") for k in ("max", "mid", "min") for p in ("prewrite", "measure")]
    assert firsts == sorted(firsts)
    spec = registry.get(test)
    assert spec.decode(spec.encode(rec.summary)) == rec.summary      # operating measurements stored typed


# --- plans of the advanced tests: the cells run() submits, durations the spec fixes --------------------

def _plan(rec):
    return registry.get(rec.ctx.test).plan(rec.ctx)


def test_hir_plan_is_what_run_submits(tmp_path):
    rec = record(tmp_path, "pts-enterprise", "hir")
    purge, pc, *waits = _plan(rec).phases
    assert [c.name for c in pc.cells] == [w.name for w in rec.engine.submitted[0].cells]
    assert (pc.rounds_min, pc.rounds_max, pc.seconds_min, pc.seconds_max) == (5, 25, 5 * 1800, 25 * 1800)
    idles = (5, 10, 15, 25, 50)
    assert [w.seconds_min for w in waits] == [360 * (5 + i) + 1800 for i in idles]
    sequences = [s for s in rec.engine.submitted if " part " in s.tag]
    assert [c.name for w in waits for c in w.cells] == [w.name for s in sequences for w in s.cells]
    assert sum(w.seconds_max for w in waits) == sum(360 * (5 + i) for i in idles) + 5 * 1800


@pytest.mark.parametrize("test", ["dirth", "cbw"])
def test_demand_plan_is_what_run_submits(tmp_path, test):
    rec = record(tmp_path, "pts-enterprise", test)
    purge, pc, sweep, ops = _plan(rec).phases
    subs = rec.engine.submitted
    first_pc = next(s for s in subs if s.tag.startswith("pc round"))
    first_sweep = next(s for s in subs if s.tag.startswith(" round"))
    assert [(c.name, c.threads, c.iodepth) for c in pc.cells] == [(w.name, w.threads, w.iodepth) for w in first_pc.cells]
    assert [(c.name, c.runtime_s) for c in sweep.cells] == [(w.name, w.runtime_s) for w in first_sweep.cells]
    assert (sweep.seconds_min, sweep.seconds_max) == (5 * (300 + 49 * 60), 25 * (300 + 49 * 60))
    submitted_ops = [w.name for s in subs if " part " in s.tag for w in s.cells]
    assert [c.name for c in ops.cells] == submitted_ops and ops.seconds_min == ops.seconds_max == 3 * 70 * 60


def test_xsr_and_wsat_plans(tmp_path):
    xsr = _plan(record(tmp_path / "x", "pts-enterprise", "xsr", group_times=["2m", "1m", "2m"]))
    (stream,) = xsr.phases[1:]
    assert [c.name for c in stream.cells] == ["xsr_g1", "xsr_g2", "xsr_g3"]
    assert stream.seconds_min == stream.seconds_max == 300 and stream.rounds_max == 5
    rec = record(tmp_path / "w", "pts-enterprise", "wsat", time_limit="3m", max_rounds=3)
    (cell,) = _plan(rec).phases[1].cells
    (submitted,) = rec.engine.submitted[0].cells
    assert (cell.name, cell.io_bytes, cell.runtime_s) == (submitted.name, submitted.io_size * submitted.threads,
                                                         submitted.runtime_s)
    assert cell.io_bytes == pytest.approx(4 * rec.ctx.target.size_bytes, rel=1e-6)   # size-bound: 4x capacity
    assert _plan(rec).phases[1].seconds_max == 180 and _plan(rec).phases[1].seconds_min is None
