"""WSAT, HIR, XSR, DIRTH and CBW end to end: real fio on loop/zram devices, and the simulated SSD."""

import os
import signal
import statistics
import subprocess
import sys

import pytest

from conftest import HERE, requires_devices, run_completed, ssdpts, wait_for_rounds
from ssdpts.pts import registry
from ssdpts.store import Store

pytestmark = pytest.mark.no_end_report    # reads no end-of-run report (tests/conftest.py)


run = run_completed


def summary(store, rid, test):
    """The test's stored summary, as its typed record."""
    return registry.get(test).decode(next(t["summary"] for t in store.tests(rid) if t["name"] == test))


@requires_devices
def test_wsat_is_one_continuous_job_cut_into_rounds(loop_factory, results, tiny):
    rid, store = run(loop_factory(256 * 2**20), results, tiny, "wsat")
    rounds = store.rounds(rid, "wsat", "rnd4k-write")
    assert [r.round for r in rounds] == list(range(1, len(rounds) + 1)) and len(rounds) >= 3
    assert len({r.job_text for r in rounds}) == 1          # every round comes from the same fio job
    assert "--status-interval=100ms" in " ".join(rounds[0].command)
    tgbw = [r.tracking["tgbw_gb"] for r in rounds]
    assert all(b > a for a, b in zip(tgbw, tgbw[1:]))       # monotonic TGBW
    s = summary(store, rid, "wsat").workloads["rnd4k-write"]
    assert s.stop_reason == "2x capacity written"
    assert s.fills == pytest.approx(2.0, rel=0.02)
    assert s.tgbw_gb == pytest.approx(sum(r.cells[0].write.bytes for r in rounds) / 1e9)
    assert [x.iops for x in s.series] == [r.tracking["iops"] for r in rounds]
    assert s.fresh_iops == rounds[0].tracking["iops"]
    inner = [r.cells[0].runtime_ms for r in rounds[1:-1]]
    # 100 ms rounds from fio's status timer: a report late under load (QEMU beside the suite: 131 ms seen; 301 ms
    # once, with every slice around it at 98-101 ms; five slices of 250 ms or more in one run with the suite in four
    # processes) makes a slice longer, so the timer is judged by the slices it cut on time: most of them
    assert 80 <= statistics.median(inner) <= 120 and all(ms > 0 for ms in inner), inner
    assert sum(80 <= ms <= 120 for ms in inner) > len(inner) / 2, inner
    for r in rounds:
        assert r.tracking["iops"] > 0 and "p99.99_us" in r.tracking and r.tracking["lat_max_us"] > 0


@requires_devices
def test_wsat_resume_continues_round_count_and_tgbw(loop_factory, results, tiny, tmp_path):
    loopdev = loop_factory(256 * 2**20)
    longer = tmp_path / "longer.toml"
    longer.write_text(f'[profile]\nextends = "{tiny}"\n[tests.wsat]\ncapacity_multiple = 4.0\n')
    proc = subprocess.Popen([sys.executable, "-m", "ssdpts", "run", loopdev, "--profile", str(longer), "--tests",
                             "wsat", "--destroy-data", "--results", str(results), "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    db = results / "ssdpts.db"
    rid = wait_for_rounds(db, "wsat", 3, timeout=60)
    assert rid
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    ssdpts("resume", rid, "--results", str(results), "-q")
    store = Store(db)
    rounds = store.rounds(rid, "wsat", "rnd4k-write")
    assert [r.round for r in rounds] == list(range(1, len(rounds) + 1))
    tgbw = [r.tracking["tgbw_gb"] for r in rounds]
    assert all(b > a for a, b in zip(tgbw, tgbw[1:]))
    assert len({r.job_text for r in rounds}) == 2          # two fio jobs: before and after the kill
    s = summary(store, rid, "wsat").workloads["rnd4k-write"]
    assert s.fills == pytest.approx(4.0, rel=0.03) and s.stop_reason == "4x capacity written"


def _log_windows(logs: dict[str, str]) -> dict[str, tuple[int, int]]:
    """job name -> (first, last) sample time (Unix ms) in its fio IOPS log, for samples with I/O."""
    out = {}
    for fname, text in logs.items():
        if "_iops" not in fname:        # the latency logs (lat/clat/slat) of the same cells
            continue
        job = fname.split("_iops")[0]
        times = [int(line.split(",")[0]) for line in text.splitlines()
                 if line.strip() and int(line.split(",")[1]) > 0]
        if times:
            lo, hi = out.get(job, (min(times), max(times)))
            out[job] = (min(lo, min(times)), max(hi, max(times)))
    return out


@requires_devices
def test_hir_bursts_idle_and_baseline(loopdev, results, tiny):
    rid, store = run(loopdev, results, tiny, "hir")
    s = summary(store, rid, "hir")
    assert set(s.wait_states) == {"0.3s", "0.6s"}
    assert s.steady.rounds >= 5
    # preconditioning in rounds of precondition_time / cell_runtime cells, tracked on each round's last
    assert s.preconditioning_cells_per_round == 2
    pc = store.rounds(rid, "hir", "pc")
    assert all([c.name for c in r.cells] == ["rnd_4K_0-100_m01", "rnd_4K_0-100_m02"] for r in pc)
    assert s.preconditioning_iops == [r.cells[-1].iops for r in pc]
    assert [t.key.label for t in s.steady.trackers] == ["rnd_4K_0-100_m02 iops"]
    for label, idle in (("0.3s", 0.3), ("0.6s", 0.6)):
        ab = store.rounds(rid, "hir", f"ws={label}/AB")
        c = store.rounds(rid, "hir", f"ws={label}/C")
        bursts = [cell for r in ab + c for cell in r.cells]
        assert len(bursts) == 4
        # Timing: what is determined is asserted, not what a busy host makes of it. Each burst asks fio for
        # 500 ms, time-based, and fio never ends one early (it ran 587 and 1632 ms beside four busy loops: its
        # threads and the loop device's worker wait for a CPU); the stored length is fio's, as measured.
        for r in ab + c:
            assert r.job_text.count("runtime=500ms") == len(r.cells) == r.job_text.count("time_based=1")
        assert all(cell.runtime_ms >= 500 * 0.95 for cell in bursts)
        assert s.wait_states[label].burst_seconds == [cell.runtime_ms / 1000 for cell in bursts]
        # The idle is at least the one asked for: the keeper holds the next burst that long after the previous
        # one's real end, even when it ran late (the device idled 911 ms for 600 beside four busy loops); the
        # 60 ms are the block-layer sampler's and the end report's resolution.
        gaps = ab[0].gaps_inside_ms
        assert gaps and all(g >= idle * 1000 - 60 for g in gaps)   # real, measured idle
        assert all(g < 60 for g in c[0].gaps_inside_ms)     # baseline: continuous writes (gates open at the end)
        # the summary keeps what was measured: the device's own idle (block layer) where measured, else the gates'
        device = [d.ms for d in ab[0].device_idle_inside]
        measured = device if device and all(ms is not None for ms in device) else gaps
        assert len(measured) == len(gaps) and s.wait_states[label].idle_measured_ms[:len(measured)] == measured
        assert all(ms >= idle * 1000 - 60 for ms in measured)
        # fio's own IOPS logs: nothing written between one burst's last sample and the next one's first
        windows = _log_windows(store.logs(ab[0].id))
        assert set(windows) == {"ab1", "ab2"}
        assert windows["ab2"][0] - windows["ab1"][1] >= idle * 1000 - 100


@requires_devices
def test_xsr_groups_and_recovery(loopdev, results, tiny):
    rid, store = run(loopdev, results, tiny, "xsr")
    s = summary(store, rid, "xsr")
    for g in ("g1", "g2", "g3"):
        rounds = store.rounds(rid, "xsr", g)
        assert len(rounds) >= 3 and s.groups[g].mib_s_mean > 0
        starts = [r.tracking["start_s"] for r in rounds]
        assert starts == sorted(starts) and starts[0] == 0
    assert "rw=write" in store.rounds(rid, "xsr", "g1")[0].job_text
    assert "rw=randwrite" in store.rounds(rid, "xsr", "g2")[0].job_text
    assert s.group1_average_mib_s == pytest.approx(
        sum(r.tracking["mib_s"] for r in store.rounds(rid, "xsr", "g1")) / len(store.rounds(rid, "xsr", "g1")))
    if s.recovered:
        first = next(r for r in store.rounds(rid, "xsr", "g3") if r.tracking["mib_s"] >= s.group1_average_mib_s)
        assert s.recovery_s == first.tracking["start_s"]
    else:
        assert s.recovery_s is None


@requires_devices
def test_dirth_sweep_on_zram(zram, results, tiny):
    rid, store = run(zram, results, tiny, "dirth")
    s = summary(store, rid, "dirth")
    assert {(p.tc, p.qd) for p in s.points} == {(2, 8), (2, 1), (1, 8), (1, 1)}
    rounds = store.rounds(rid, "dirth", "")
    assert rounds[0].cells[0].name == "dirth_prewrite"         # each sweep round starts with a write pre-write
    assert rounds[0].cells[1].name == "dirth_tc2_qd8"          # then largest demand first, tracked
    job = rounds[0].job_text
    assert "[dirth_tc2_qd8]" in job and "numjobs=2\niodepth=8" in job   # TC = numjobs, QD = iodepth
    ops = s.operating_points
    assert ops.min == "dirth_tc1_qd1"
    assert s.point(ops.max).iops == max(p.iops for p in s.points if p.lat_mean_us < 5000)
    assert len(store.rounds(rid, "dirth", "pc")) >= 5                 # preconditioning in rounds, to steady state
    assert s.preconditioning.phase == "pc" and s.preconditioning.rounds == len(store.rounds(rid, "dirth", "pc"))
    for k, name in ops.items():                                        # own pre-write, then a logged measurement
        assert store.rounds(rid, "dirth", f"op={k}/prewrite")[0].cells[0].write.ios > 0
        meas = store.rounds(rid, "dirth", f"op={k}/measure")
        assert meas and meas[0].cells[0].write.bins and store.logs(meas[0].id)
        m = s.operating_measurements[k]
        assert m.point == name and m.measure_ios == sum(c.read.ios + c.write.ios for r in meas for c in r.cells) > 0
        assert m.histogram_ios["write"] > 0


@requires_devices
def test_cbw_composite_pattern(loopdev, results, tiny):
    rid, store = run(loopdev, results, tiny, "cbw")
    s = summary(store, rid, "cbw")
    job = store.rounds(rid, "cbw", "")[0].job_text
    assert "bssplit=512/4:1024/1:1536/1:2048/1:2560/1:3072/1:3584/1:4096/67:8192/10:16384/7:32768/3:65536/3" in job
    assert "random_distribution=zoned:50/5:30/15:20/80" in job and "rwmixread=40" in job
    p = s.points[0]
    assert p.read_lat.p("99") > 0 and p.write_lat.p("99") > 0   # reads and writes apart
    assert s.read_pct == 40 and s.zones == "zoned:50/5:30/15:20/80"
    assert s.alignment_bytes == 4096 and f"blockalign={s.alignment_bytes}" in job   # 4 KiB on a 512-byte loop


def test_simulated_drive_shows_the_seed_behaviours(results):
    drive = HERE / "profiles" / "sim-small.toml"
    rid, store = run(f"sim:{drive}", results, str(HERE / "profiles" / "sim-behaviour.toml"), "wsat,hir")
    w = summary(store, rid, "wsat").workloads["rnd4k-write"]
    assert w.fresh_iops > 5 * w.final_iops                               # the WSAT cliff
    h = summary(store, rid, "hir")
    assert h.steady.reached and h.steady.phase == "pc"
    burst = [h.wait_states[k].ab_iops_mean for k in ("1s", "5s", "15s")]
    # idle GC reclaims what it can within the first second on this small drive; longer idle keeps that
    # level (the wait states run one after another on the same drive, so it varies by a few %). Every
    # burst writes its own random LBAs (seeded per cell and round): before per-cell seeds, each wait
    # state's bursts rewrote the previous wait state's LBAs, which inflated the recovery of later ones.
    assert burst[1] >= 0.85 * burst[0] and burst[2] >= 0.85 * burst[0]
    for ws in h.wait_states.values():
        assert ws.ab_iops_mean > 1.15 * ws.c_iops_mean            # the continuous baseline stays low
