"""Figures that cannot be trusted say so (src/ssdpts/plausibility.py, docs/conformance.md "Plausibility"): each rule
with a case that must trip it and one that must not, on real fio runs judged against what fio, /proc/stat and the
block layer say (read here, not by the code under test).

Devices: loop devices with direct I/O on tmpfs, slowed with a cgroup v1 blkio throttle (1 read per second) where a
test needs a slow device; CPU saturated with fio's own `cpuio` jobs beside the I/O job."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import statistics
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import HERE, requires_devices, run_completed, ssdpts
from test_bench import _pci_tree
from ssdpts.conformance import check
from ssdpts.engines.fiojson import load_document, parse_output
from ssdpts.engines.hostcpu import HostCpu, cpu_count, read_ticks
from ssdpts.engines.results import CellResult, DirStats, RoundOutput
from ssdpts.runresult.model import load_run
from ssdpts.plausibility import (FAR_BELOW_FACTOR, HOST_SATURATED_PCT, MAX_LISTED, QUEUE_FULL_SHARE,
                                 THREAD_SATURATED_PCT, StoredCell, above_interface, host_limited, implausible_cells,
                                 interface_max, interface_notes, stored_cells)
from ssdpts.realtime.timing import LAT_MEAN_BOUND_S
from ssdpts.simdrive import load_params
from ssdpts.targets.facts import block_facts
from ssdpts.targets.record import TargetRecord
from ssdpts.workload import Workload

pytestmark = pytest.mark.no_end_report    # reads no end-of-run report (tests/conftest.py)

BLKIO = Path("/sys/fs/cgroup/blkio")
needs_blkio = pytest.mark.skipif(not (BLKIO / "cgroup.procs").exists(), reason="no cgroup v1 blkio controller")
HOGS = 4 * (os.cpu_count() or 1)      # cpuio jobs at 100 %: every CPU has several to run


@dataclass
class FioRun:
    job: dict                 # fio's own JSON of the I/O job
    cell: CellResult          # the same, as ssdpts parses it (host CPU attached as the engine does)
    host_busy_pct: float      # /proc/stat over the run, computed here
    block_depth: float        # the device's time-weighted queue depth: /sys/block/DEV/stat time_in_queue / runtime


def _proc_busy(before: list[int], after: list[int]) -> float:
    d = [b - a for a, b in zip(before, after)]
    return 100.0 - 100.0 * (d[3] + d[4]) / sum(d)          # idle and iowait are the 4th and 5th counters


def _cpu_line() -> list[int]:
    return [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:9]]


def _dev_stat(dev: str) -> list[int]:
    return [int(x) for x in Path(f"/sys/block/{Path(dev).name}/stat").read_text().split()]


@contextlib.contextmanager
def read_iops_limit(dev: str, iops: int):
    """A blkio cgroup that lets `iops` reads per second through to `dev`; yields the shell prefix that runs a
    command inside it; removed afterwards."""
    group = BLKIO / f"ssdpts-test-{uuid.uuid4().hex[:8]}"
    group.mkdir()
    try:
        major_minor = subprocess.check_output(["lsblk", "-dno", "MAJ:MIN", dev], text=True).strip()
        (group / "blkio.throttle.read_iops_device").write_text(f"{major_minor} {iops}\n")
        yield ["sh", "-c", f'echo $$ > {group}/cgroup.procs && exec "$@"', "sh"]
    finally:
        for _ in range(50):     # the exited fio leaves the group a moment later
            with contextlib.suppress(OSError):
                group.rmdir()
                break
            time.sleep(0.1)


def _wait_busy(timeout: float = 30.0) -> None:
    """Until the host is busy (the hogs are running on every CPU): 0.2 s windows of /proc/stat."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        a = _cpu_line()
        time.sleep(0.2)
        if _proc_busy(a, _cpu_line()) >= 99.0:
            return


def run_fio(dev: str, *io: str, runtime: float = 1.0, hogs: int = 0, prefix: list[str] | None = None) -> FioRun:
    cmd = [*(prefix or []), "fio", "--output-format=json", "--name=io", f"--filename={dev}", "--direct=1",
           "--time_based", f"--runtime={runtime}", *io]
    # the CPU hogs run in a process of their own, busy before the measured fio starts and until it ends: inside
    # one fio process they start with the I/O job, and the second of fio's own set-up around a 1-2 s run
    # (measured: 80-88 % host busy on a quiet host) falls outside the saturation the test needs
    # (threads of one process in a session of its own: killing its group leaves no forked hog running on)
    hog = subprocess.Popen(["fio", "--name=hog", "--ioengine=cpuio", "--cpuload=100", f"--numjobs={hogs}", "--thread",
                            "--time_based", f"--runtime={int(runtime) + 60}"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True) if hogs else None
    try:
        if hog is not None:
            _wait_busy()
        ticks, cpu0, stat0 = read_ticks(), _cpu_line(), _dev_stat(dev)
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        ticks1, cpu1, stat1 = read_ticks(), _cpu_line(), _dev_stat(dev)
    finally:
        if hog is not None:
            os.killpg(hog.pid, signal.SIGKILL)
            hog.wait()
    doc = json.loads(out[out.index("{"):])
    job = next(j for j in doc["jobs"] if j["jobname"] == "io")
    cell = next(c for c in parse_output(out)[1] if c.name == "io")
    cell.host_cpu = HostCpu.between(ticks, ticks1, cpu_count())
    runtime_ms = max(job["read"]["runtime"], job["write"]["runtime"])
    return FioRun(job, cell, _proc_busy(cpu0, cpu1), (stat1[10] - stat0[10]) / runtime_ms)


def stored(run: FioRun, asked: Workload, round_no: int = 1) -> StoredCell:
    return StoredCell("", "round", round_no, asked, run.cell)


def randread(iodepth: int, threads: int = 1) -> Workload:
    return Workload(name="io", rw="randread", bs=4096, iodepth=iodepth, threads=threads, runtime_s=1.0)


def fio_in_flight(job: dict) -> float:
    """Little's law on fio's own figures: IOPS × mean total latency, both directions."""
    return sum(job[d]["iops"] * job[d]["lat_ns"]["mean"] / 1e9 for d in ("read", "write"))


# --- implausible-cell -----------------------------------------------------------------------------------------

@requires_devices
@needs_blkio
def test_implausible_cell_trips_on_a_throttled_device_and_not_on_its_twins(loop_factory):
    dev = loop_factory(64 * 2**20)
    io = ("--rw=randread", "--bs=4k", "--ioengine=libaio", "--iodepth=16")
    a, b = run_fio(dev, *io), run_fio(dev, *io)
    with read_iops_limit(dev, 1) as inside:
        slow = run_fio(dev, *io, runtime=2, prefix=inside)
    asked = randread(16)
    twins = [stored(a, asked, 1), stored(b, asked, 2)]
    assert implausible_cells(twins) == []                                   # must not trip
    # fio's own figures: the throttled cell is > 100× below the median and waited seconds per I/O
    iops = [r.job["read"]["iops"] for r in (a, b, slow)]
    assert slow.job["read"]["iops"] < statistics.median(iops) / FAR_BELOW_FACTOR
    assert slow.job["read"]["lat_ns"]["mean"] / 1e9 > LAT_MEAN_BOUND_S
    [dev_] = implausible_cells(twins + [stored(slow, asked, 3)])            # must trip
    assert dev_.rule == "implausible-cell" and dev_.evidence.startswith("1 cells are not plausible")
    assert "io (round 3)" in dev_.evidence and "below the median" in dev_.evidence
    assert f"mean latency {slow.job['read']['lat_ns']['mean'] / 1e9:,.1f} s > 5 s" in dev_.evidence
    # alone (no comparable cell), the latency bound still judges it; a cell with no I/O at all is flagged
    [alone] = implausible_cells([stored(slow, asked)])
    assert "mean latency" in alone.evidence and "median" not in alone.evidence
    idle = CellResult("io", DirStats(), DirStats(), runtime_ms=1000.0)
    [none] = implausible_cells([StoredCell("", "round", 1, asked, idle)])
    assert "no I/O completed in 1.0 s" in none.evidence


def fio_says_implausible(store, run_id: str, test: str) -> list[str]:
    """The test's cells (as 'name (phase round N)') that fio's own stored output shows > FAR_BELOW_FACTOR× below
    the median of the same cell's rounds, with a mean latency over LAT_MEAN_BOUND_S, or with no I/O."""
    jobs = []           # (where, name, IOPS, mean latency s, I/Os) straight from each round's fio JSON
    for r in store.rounds(run_id, test, kind="round", with_cells=False):
        for j in load_document(store.raw_output(r.id))["jobs"]:
            ios = j["read"]["total_ios"] + j["write"]["total_ios"]
            lat = sum(j[d]["lat_ns"]["mean"] * j[d]["total_ios"] for d in ("read", "write")) / max(ios, 1) / 1e9
            jobs.append((f"{j['jobname']} ({r.phase} round {r.round})", j["jobname"],
                         j["read"]["iops"] + j["write"]["iops"], lat, ios))
    medians = {n: statistics.median(x[2] for x in jobs if x[1] == n) for n in {x[1] for x in jobs}}
    return [where for where, name, iops, lat, ios in jobs
            if not ios or iops < medians[name] / FAR_BELOW_FACTOR or lat > LAT_MEAN_BOUND_S]


def listed(verdict, rule: str, test: str) -> list[str]:
    """The cells one rule's deviation names ('name (phase round N)'), in its order."""
    found = [f.deviation.evidence for f in verdict.findings if f.deviation.rule == rule and f.test == test]
    return re.findall(r"(?:: |; )(\S+ \(\w+ round \d+\)):", found[0]) if found else []


def test_the_issues_fs_vs_raw_file_cell_is_implausible():
    """The issue's figures: fs-vs-raw's raw cell (over the file's span) and its file cell (the whole file) are the
    same workload; the file cell at 0.16 IOPS and 24.5 s mean latency trips both parts of the rule."""
    raw = Workload("rnd_4K_100-0", "randrw", read_pct=100, iodepth=4, range_size=0.7, runtime_s=60)
    on_file = Workload("rnd_4K_100-0", "randrw", read_pct=100, iodepth=4, range_size=1.0, runtime_s=60)
    fast = CellResult(raw.name, DirStats(ios=600_000, iops=10_000, lat_mean_ns=400e3), DirStats(), runtime_ms=60e3)
    slow = CellResult(raw.name, DirStats(ios=10, iops=0.16, lat_mean_ns=24.5e9), DirStats(), runtime_ms=60e3)
    [d] = implausible_cells([StoredCell("raw", "round", 1, raw, fast), StoredCell("file", "round", 1, on_file, slow)])
    assert d.evidence == ("1 cells are not plausible drive figures: rnd_4K_100-0 (file round 1): 0.16 IOPS, "
                          "31,250× below the median 5,000 IOPS of the same workload's 2 cells in this test (bound "
                          "100×), mean latency 24.5 s > 5 s (0.16 IOPS)")


@requires_devices
@needs_blkio
def test_study_cells_are_judged_a_near_zero_trim_study_cell_is_flagged(loop_factory, tmp_path):
    """trim-study on a loop device: its cells are judged (flagged exactly where fio's own output says so: a busy
    host can stall a round, seen here as 8 I/Os in 348 ms); a near-zero round of its read cell added (the same
    workload on the device throttled to 1 read/s) is an implausible-cell of trim-study in check, show and JSON."""
    dev = loop_factory(64 * 2**20)
    results = tmp_path / "r"
    rid, store = run_completed(dev, results, str(HERE / "profiles" / "fs-tiny.toml"), "trim-study")
    run = load_run(store, rid)
    verdict = check(run, store)
    truth, named = fio_says_implausible(store, rid, "trim-study"), listed(verdict, "implausible-cell", "trim-study")
    assert set(named) <= set(truth) and len(named) == min(len(truth), MAX_LISTED)
    assert not [f for f in verdict.findings if f.deviation.rule == "above-interface"]
    assert verdict.notes == [f"above-interface not judged: no interface maximum is known ({dev} is a loop device: "
                             "it has no link of its own)",
                             "fio ioengine io_uring: the spec fixes no I/O engine (not a deviation)"]
    after, read_wl = next((r, w) for r in reversed(store.rounds(rid, "trim-study", kind="round"))
                          for w in r.workloads if w["rw"] == "randread")
    w = Workload.from_dict(read_wl)
    with read_iops_limit(dev, 1) as inside:
        slow = run_fio(dev, "--rw=randread", f"--bs={w.bs}", "--ioengine=libaio", f"--iodepth={w.iodepth}",
                       runtime=1, prefix=inside)
    slow.cell.name = w.name
    out = RoundOutput(cells=[slow.cell], engine="fio", raw_output=json.dumps({"jobs": [{**slow.job,
                                                                                      "jobname": w.name}]}))
    store.save_round(rid, "trim-study", after.phase, "round", after.round + 1000, out, [read_wl])
    expected = fio_says_implausible(store, rid, "trim-study")
    injected = f"{w.name} ({after.phase} round {after.round + 1000})"
    assert injected in expected
    p = ssdpts("check", rid, "--results", str(results), check=False)
    assert p.returncode == 1
    line = next(x for x in p.stdout.splitlines() if "[implausible-cell]" in x)
    assert line.startswith(f"  - [implausible-cell] trim-study: {len(expected)} cells are not plausible drive figures")
    entry = line[line.index(injected):]
    assert entry.startswith(f"{injected}: {slow.job['read']['iops']:,.2f} IOPS, ") and "below the median" in entry
    assert ("mean latency" in entry.split(";")[0]) == (slow.job["read"]["lat_ns"]["mean"] / 1e9 > LAT_MEAN_BOUND_S)
    assert "[implausible-cell] trim-study" in ssdpts("show", rid, "--results", str(results)).stdout
    doc = json.loads(ssdpts("show", rid, "--json", "--results", str(results)).stdout)
    assert [d["test"] for d in doc["conformance"]["deviations"] if d["rule"] == "implausible-cell"] == ["trim-study"]
    assert doc["conformance"]["notes"] == verdict.notes


# --- host-limited ----------------------------------------------------------------------------------------

@requires_devices
def test_host_limited_trips_when_a_saturated_host_leaves_the_device_queue_short(loop_factory):
    """A synchronous engine holds one I/O where four were asked; with every CPU busy the figure is the host's."""
    dev = loop_factory(64 * 2**20)
    run = run_fio(dev, "--rw=randread", "--bs=4k", "--ioengine=psync", "--iodepth=4", hogs=HOGS)
    assert run.host_busy_pct >= HOST_SATURATED_PCT                        # /proc/stat, read here
    assert run.block_depth < QUEUE_FULL_SHARE * 4                         # the device's own queue: not full
    assert fio_in_flight(run.job) < QUEUE_FULL_SHARE * 4                  # and fio's upper bound of it
    [d] = host_limited([stored(run, randread(4))])
    assert d.rule == "host-limited" and "whole host" in d.evidence
    assert f"device queue {fio_in_flight(run.job):.2f} of 4 asked (fio, IOPS × mean latency)" in d.evidence


@requires_devices
@needs_blkio
def test_host_limited_not_tripped_by_a_device_bound_cell_on_a_saturated_host(loop_factory):
    """The device throttled to 50 reads/s holds fio's 16 I/Os in flight: busy CPUs did not set the figure."""
    dev = loop_factory(64 * 2**20)
    with read_iops_limit(dev, 50) as inside:
        run = run_fio(dev, "--rw=randread", "--bs=4k", "--ioengine=libaio", "--iodepth=16", runtime=2, hogs=HOGS,
                      prefix=inside)
    assert run.host_busy_pct >= HOST_SATURATED_PCT
    assert run.job["usr_cpu"] + run.job["sys_cpu"] < THREAD_SATURATED_PCT
    assert fio_in_flight(run.job) >= QUEUE_FULL_SHARE * 16               # fio kept its queue full
    assert host_limited([stored(run, randread(16))]) == []


@requires_devices
def test_host_limited_reads_the_block_layer_queue_when_the_cell_has_one(loop_factory):
    """libaio at QD16 with every CPU busy: fio counts 16 in flight (its latency runs until it reaps), the device's
    own queue (time_in_queue) is shorter. With the block layer's depth on the cell the rule sees it."""
    dev = loop_factory(64 * 2**20)
    run = run_fio(dev, "--rw=randread", "--bs=4k", "--ioengine=libaio", "--iodepth=16", runtime=2, hogs=HOGS)
    cell = stored(run, randread(16))
    assert run.host_busy_pct >= HOST_SATURATED_PCT and fio_in_flight(run.job) >= QUEUE_FULL_SHARE * 16
    assert host_limited([cell]) == []                # fio's own figures cannot show it
    run.cell.stimulus = SimpleNamespace(queue_depth=run.block_depth)
    found = host_limited([cell])
    assert bool(found) == (run.block_depth < QUEUE_FULL_SHARE * 16)
    if found:
        assert f"device queue {run.block_depth:.2f} of 16 asked (block layer)" in found[0].evidence


def _cell(thread_pct: float, host_pct: float | None, iops: float, lat_us: float) -> CellResult:
    r = CellResult("c", DirStats(ios=1000, iops=iops, lat_mean_ns=lat_us * 1000), DirStats(), runtime_ms=1000,
                   usr_cpu=thread_pct / 2, sys_cpu=thread_pct / 2)
    r.host_cpu = None if host_pct is None else HostCpu(0, host_pct, 0, 0, 0, 100 - host_pct, 2, 1.0)
    return r


def test_host_limited_thresholds():
    """The rule's arithmetic on stated figures (fio's thread CPU cannot be saturated on demand on a shared host)."""
    asked = randread(32)
    judge = lambda r, w=asked: host_limited([StoredCell("", "round", 1, w, r)])   # noqa: E731
    # a submitting thread at 90 % never waited for the device: host-limited even with fio's queue full
    assert judge(_cell(THREAD_SATURATED_PCT, None, 100_000, 320))
    assert not judge(_cell(THREAD_SATURATED_PCT - 1, None, 100_000, 320))
    # the whole host at 95 %: only when fio's in-flight (IOPS × latency) is under 90 % of 32 = 28.8
    assert judge(_cell(10, HOST_SATURATED_PCT, 100_000, 287))            # 28.7 in flight
    assert not judge(_cell(10, HOST_SATURATED_PCT, 100_000, 289))        # 28.9
    assert not judge(_cell(10, HOST_SATURATED_PCT - 1, 100_000, 100))
    # think time asks for idle; the simulator measures no CPU
    assert not judge(_cell(99, 99, 1000, 10), Workload("c", "randread", iodepth=32, runtime_s=1, thinktime_us=100))
    assert not judge(CellResult("c", DirStats(ios=1, iops=1e6, lat_mean_ns=1), DirStats()))


# --- above-interface ---------------------------------------------------------------------------------------

@requires_devices
def test_above_interface_against_a_recorded_pcie_or_sata_link(loop_factory, tmp_path):
    """SEQ 128K reads from a tmpfs-backed loop device (GB/s) judged as if the drive hung off a recorded link."""
    dev = loop_factory(64 * 2**20)
    run = run_fio(dev, "--rw=read", "--bs=128k", "--ioengine=libaio", "--iodepth=8")
    mb_s = run.job["read"]["bw_bytes"] / 1e6
    cells = [stored(run, Workload("io", "read", bs=128 * 1024, iodepth=8, runtime_s=1))]

    def block(roots=None, smartctl=None, transport="nvme") -> TargetRecord:
        roots = roots or _pci_tree(tmp_path / uuid.uuid4().hex, "", "")      # a controller without a link
        facts = block_facts("nvme0n1", roots, {"transport": transport}, None, None, smartctl, None, 64 * 2**20)
        return TargetRecord.from_json({"kind": "block", "path": "/dev/nvme0n1",
                                       "info": {"transport": transport, "facts": facts.to_dict()}})

    gen1 = interface_max(block(_pci_tree(tmp_path / "gen1", "2.5 GT/s PCIe", "1")))
    assert gen1.mb_s == pytest.approx(2.5e9 * 8 / 10 / 8 / 1e6) and gen1.per_direction   # 250 MB/s
    assert mb_s > gen1.mb_s * 1.03                                     # fio's own bandwidth is above it
    [d] = above_interface(cells, gen1)                                 # must trip
    assert d.rule == "above-interface"
    assert f"{mb_s:,.0f} MB/s in one direction > 250 MB/s (PCIe 2.5 GT/s x1" in d.evidence
    gen5 = interface_max(block(_pci_tree(tmp_path / "gen5", "32.0 GT/s PCIe", "16")))
    assert mb_s < gen5.mb_s and above_interface(cells, gen5) == []    # must not trip (63 GB/s)
    sata = {"interface_speed": {"current": {"string": "1.5 Gb/s"}, "max": {"string": "6.0 Gb/s"}}}
    slow_sata = interface_max(block(smartctl=sata, transport="sata"))
    assert slow_sata.mb_s == pytest.approx(150.0) and not slow_sata.per_direction
    assert "> 150 MB/s (SATA 1.5 Gb/s negotiated" in above_interface(cells, slow_sata)[0].evidence
    # no link known: nothing judged, and the verdict says why
    loop = TargetRecord.from_json({"kind": "block", "path": dev, "info": {"transport": "loop"}})
    assert isinstance(interface_max(loop), str)
    assert interface_notes(loop) == [f"above-interface not judged: no interface maximum is known ({dev} is a loop "
                                     "device: it has no link of its own)"]
    no_link = block()
    assert interface_notes(no_link)[0].endswith("no PCIe or SATA link recorded (the controller reports none))")


def test_above_interface_on_the_simulated_drive_its_preset_bounds_it(tmp_path):
    """sim:client's quick IOPS and throughput cells stay within its preset's link (3,500 MB/s, one link for both
    directions) and controller (2,336/3,460 ns per command); judged against sim:sata-mlc's preset they do not."""
    rid, store = run_completed("sim:client", tmp_path / "r", "quick", "iops,throughput")
    run = load_run(store, rid)
    verdict = check(run, store)
    assert not [f for f in verdict.findings if f.deviation.rule in ("above-interface", "implausible-cell",
                                                                     "host-limited")]
    assert verdict.notes == []
    client, mlc = load_params("client"), load_params("sata-mlc")
    cells = stored_cells(store, rid, "iops") + stored_cells(store, rid, "throughput")
    peak = max((c.result.read.bw_bytes + c.result.write.bw_bytes) / 1e6 for c in cells)
    assert mlc["link_mb_s"] * 1.03 < peak <= client["link_mb_s"] * 1.03
    as_mlc = TargetRecord.from_json({**run.target.to_json(), "info": {**run.target.info, "preset": "sata-mlc",
                                     "params": {k: v for k, v in mlc.items() if not isinstance(v, dict)}}})
    [d] = above_interface(cells, interface_max(as_mlc))
    assert "link_mb_s = 270" in d.evidence and "ns per read/write command" in d.evidence
