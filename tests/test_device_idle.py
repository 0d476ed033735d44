"""Device idle per transition, measured at the block layer by the fio engine's sampler, on real fio."""

from __future__ import annotations

import contextlib
import mmap
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import requires_devices

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from blockwatch import Stalls, Watcher, overlapping  # noqa: E402  (the benches' outside sampler)

from ssdpts.engines.blockidle import UNAVAILABLE_SIM, IdleSampler, stat_path_for, unavailable_reason
from ssdpts.engines.fio import FioEngine
from ssdpts.engines.results import DeviceIdle, RoundOutput
from ssdpts.errors import SsdptsError
from ssdpts.realtime.timing import IDLE_RESOLUTION_SHARE, SAMPLE_PERIOD_NS, SLOW_SAMPLE_PERIOD_NS
from ssdpts.realtime.window import create as create_window
from ssdpts.conformance import check
from ssdpts.export.json import document
from ssdpts.runresult.model import load_run
from ssdpts.export.text import render_text
from ssdpts.store import Store
from ssdpts.targets import open_target
from ssdpts.targets.base import Target
from ssdpts.workload import Workload

FORCED_IDLE_S = 0.15
TOLERANCE_MS = 5.0   # issue 13: HIR's timed idle is the requested idle +-5 ms at the device
# a 300 ms run of recorded counters as the sampler bounds it: its sample at either end can come late on a loaded host
# (a fresh clone's make test read 298.2 ms), so within the same tolerance
SPAN_MS = 300 - TOLERANCE_MS


def _cells(n: int, idle_s: float = 0.0) -> list[Workload]:
    return [Workload(f"c{i}", "randwrite", bs=4096, threads=2, iodepth=4, runtime_s=0.2,
                     idle_before_s=idle_s if i else 0.0) for i in range(n)]


def test_stat_file_of_a_block_device_and_of_a_file(tmp_path, loopdev):
    name = loopdev.rsplit("/", 1)[1]
    assert str(stat_path_for(loopdev)).endswith(f"/{name}/stat")
    # a file: the block device under its filesystem (or None on a filesystem without one, e.g. tmpfs)
    f = tmp_path / "f.img"
    f.write_bytes(b"")
    found = stat_path_for(str(f))
    assert found is None or found.name == "stat"


def test_remote_and_simulated_targets_say_why_there_is_no_measure():
    assert unavailable_reason(Target(kind="sim", spec="sim", path="sim", size_bytes=1)) == UNAVAILABLE_SIM
    remote = Target(kind="block", spec="h:/dev/x", path="/dev/x", size_bytes=1, host="h")
    assert "remote" in unavailable_reason(remote)


@requires_devices
def test_every_transition_gets_a_device_idle_that_is_stored(loopdev, tmp_path):
    target = open_target(loopdev, probe=False)
    with FioEngine().session(target) as s:
        first, second = s.submit(_cells(3)), s.submit(_cells(3))
        outs = [first.result(), second.result()]
    # round 1: 2 cell->cell transitions; round 2: the round->round one and 2 inside
    assert outs[0].device_idle_before is None and outs[0].device_idle_note == ""
    assert len(outs[0].device_idle_inside) == 2
    assert outs[1].device_idle_before is not None and len(outs[1].device_idle_inside) == 2
    for d in outs[0].device_idle_inside + [outs[1].device_idle_before] + outs[1].device_idle_inside:
        assert d.ms is not None and d.ms >= 0.0
        if d.ms:    # 0.0: the next cell's I/O began before the device fell idle (no run to time)
            # the run the counters showed is the idle plus what the device held (latency, not idle): beside two
            # busy loops the loop device's worker waits for a CPU with requests given (14.4 ms idle, 25.8 held)
            assert d.next_io > d.last_io
            assert round((d.next_io - d.last_io) * 1000, 3) == pytest.approx(d.ms + d.held_ms, abs=0.002)
    store = Store(tmp_path / "r.db")
    rid = store.create_run(target_spec=loopdev, target=target.to_dict(), host={}, profile_name="t", profile={},
                           tests=["t"], options={}, engine="fio")
    for i, out in enumerate(outs, start=1):
        store.save_round(rid, "t", "", "round", i, out, [c.to_dict() for c in _cells(3)])
    back = store.rounds(rid, "t")
    assert [r.device_idle_before for r in back] == [o.device_idle_before for o in outs]
    assert [r.device_idle_inside for r in back] == [o.device_idle_inside for o in outs]
    assert back[1].device_idle_before.ms == outs[1].device_idle_before.ms


@requires_devices
def test_a_forced_idle_is_measured_at_the_device_within_5_ms(loopdev):
    """The stored idle of a requested pause agrees with an independent block-layer sampler (bench/blockwatch.py,
    reading /sys/block/DEV/inflight) within 5 ms, and the device idled at least the request. How close the
    pause comes to the request on a busy host is bench/gaps.py's job (no timing targets in tests)."""
    target = open_target(loopdev, probe=False)
    watcher = Watcher(loopdev)
    try:
        with FioEngine().session(target) as s:
            out = s.submit(_cells(4, idle_s=FORCED_IDLE_S)).result()
    finally:
        runs = watcher.stop()
    assert len(out.device_idle_inside) == 3
    for d in out.device_idle_inside:
        outside = overlapping(runs, int(d.last_io * 1e9), int(d.next_io * 1e9))
        # the outside sampler's run is known to its own samples: to 0.1 ms, unless it was kept from running (a
        # loaded host once kept it 106 ms from seeing the next cell's I/O), and then only within its gap
        assert outside is not None, (d, runs)
        assert outside.shortest_ms - TOLERANCE_MS <= d.ms <= outside.ms + TOLERANCE_MS, (d, outside)
        assert d.ms >= FORCED_IDLE_S * 1000 - TOLERANCE_MS, d


# what a sample of a real-time process may lag its period by on a saturated host (not a stall of the whole machine:
# those are measured and left out below)
SAMPLE_SLACK_NS = 1_000_000


def test_an_idle_nobody_foresaw_is_timed_within_the_samplers_resolution(loopdev, tmp_path):
    """docs/device-idle.md: outside the keeper's close-look windows the sampler looks at a busy device every 2 ms
    and at a quiet one every 5 % of its idle so far (0.1-2 ms). The truth is this test's own I/O, timed around
    each system call: the device cannot be busy again before the write that ends an idle is submitted, and the
    sample that sees the write before it complete is the run's last busy one, within a busy period of the write's
    return; its end is seen within the quiet period of the next write's return. So an idle nobody foresaw is timed
    up to 2 ms short at its start and at most min(5 %, 2 ms) long at its end, and one shorter than two busy periods
    can go unseen (measured: 4 ms idles between single writes were missed in 4 of 12 tries; not judged here).
    Idles during which the whole machine stalled (a virtual machine's host ran something else) are left out."""
    subprocess.run(["udevadm", "settle", "--timeout=10"], check=False)   # udev's probe of the new device is done
    window = tmp_path / "window"
    create_window(str(window))                 # never opened: no transition is foreseen
    sampler, stalls = IdleSampler(stat_path_for(loopdev), window), Stalls()
    fd = os.open(loopdev, os.O_WRONLY | os.O_DIRECT)
    block = mmap.mmap(-1, 4096)                # page-aligned, as O_DIRECT needs
    deadline = time.monotonic() + 30
    while sampler.started_ns is None and time.monotonic() < deadline:    # its child is sampling
        time.sleep(0.01)
    writes = []                                # (submitted, returned) ns of each write
    try:
        for idle_s in (0.01, 0.01, 0.02, 0.06, 0.3, 0.8) * 3:
            t0 = time.time_ns()
            os.pwrite(fd, block, 0)
            writes.append((t0, time.time_ns()))
            time.sleep(idle_s)
        t0 = time.time_ns()
        os.pwrite(fd, block, 0)
        writes.append((t0, time.time_ns()))
        time.sleep(0.05)
    finally:
        os.close(fd)
        stalled = stalls.stop()
        sampler.close()
    judged = set()      # idle lengths (10 ms steps) judged outside any stall
    for (began, done), (submitted, returned) in zip(writes, writes[1:]):
        run = next((r for r in sampler.runs if r.last_busy_ns < submitted <= r.first_busy_ns), None)
        assert run is not None and run.last_busy_ns >= began, (submitted - done, run, sampler.runs, writes)
        if any(s.start_ns < run.first_busy_ns + SAMPLE_SLACK_NS and s.end_ns > began for s in stalled):
            continue
        idle = submitted - done
        assert began <= run.last_busy_ns <= done + SLOW_SAMPLE_PERIOD_NS + SAMPLE_SLACK_NS, (idle, run)
        quiet_period = min(SLOW_SAMPLE_PERIOD_NS, max(SAMPLE_PERIOD_NS, IDLE_RESOLUTION_SHARE * (returned - began)))
        assert submitted <= run.first_busy_ns <= returned + quiet_period + SAMPLE_SLACK_NS, (idle, run)
        judged.add(round(idle / 1e7))
    assert len(judged) >= 3, f"the machine stalled through most idles: {stalled}"


def test_a_schema_1_database_opens_and_says_not_measured(tmp_path):
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    # the rounds table as schema 1 wrote it
    db.executescript("""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO meta VALUES ('schema_version', '1');
        CREATE TABLE rounds (id INTEGER PRIMARY KEY, run_id TEXT NOT NULL, test TEXT NOT NULL, phase TEXT NOT NULL,
            kind TEXT NOT NULL, round INTEGER NOT NULL, started REAL NOT NULL, ended REAL NOT NULL,
            gap_before_ms REAL, gaps_inside_json TEXT NOT NULL DEFAULT '[]', engine TEXT NOT NULL,
            fio_version TEXT NOT NULL DEFAULT '', job_text TEXT NOT NULL, command_json TEXT NOT NULL,
            raw_output_z BLOB, stderr TEXT NOT NULL DEFAULT '', logs_z BLOB,
            tracking_json TEXT NOT NULL DEFAULT '{}', steady_json TEXT NOT NULL DEFAULT '{}',
            UNIQUE (run_id, test, phase, kind, round));
        INSERT INTO rounds (run_id, test, phase, kind, round, started, ended, gap_before_ms, engine, job_text,
            command_json) VALUES ('r1', 'iops', '', 'round', 1, 0, 1, 2.5, 'fio', '', '[]');
    """)
    db.commit()
    db.close()
    store = Store(path)
    (rec,) = store.rounds("r1", "iops", with_cells=False)
    assert rec.gap_before_ms == 2.5
    assert rec.device_idle_before is None and rec.device_idle_inside == []
    assert rec.device_idle_note.startswith("not measured")
    assert store.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "3"
    # and new rounds store their figures next to the old ones
    store.save_round("r1", "iops", "", "round", 2, RoundOutput(cells=[], engine="fio"), [])
    assert len(store.rounds("r1", "iops", with_cells=False)) == 2


def test_show_gives_the_distribution_per_test(tmp_path):
    store = Store(tmp_path / "r.db")
    rid = store.create_run(target_spec="/dev/x", target={"kind": "block", "size_bytes": 2**30, "info": {}}, host={},
                           profile_name="t", profile={}, tests=["iops"], options={}, engine="fio")
    for i, before in enumerate([None, DeviceIdle(12.5, 1.0, 1.0125)], start=1):
        out = RoundOutput(cells=[], engine="fio", device_idle_before=before,
                          device_idle_inside=[DeviceIdle(1.0, 2.0, 2.001), DeviceIdle(0.0)])
        store.save_round(rid, "iops", "", "round", i, out, [])
    store.set_test(rid, "iops", "running", {})
    run = load_run(store, rid)
    verdict = check(run, store)
    doc = document(run, verdict)
    idle = next(t for t in doc["tests"] if t["name"] == "iops")["device_idle"]
    # values 0, 0, 1, 1, 12.5: nearest-rank median 1.0, p99 and max 12.5, one over 10 ms
    assert idle["transitions"] == 5 and idle["max_ms"] == 12.5 and idle["median_ms"] == 1.0
    assert idle["p99_ms"] == 12.5 and idle["over_limit"] == 1 and idle["unmeasured"] == 0
    assert "device idle at transitions (block layer): 5 transitions, max 12.5 ms" in render_text(run, verdict)


def test_check_judges_idle_by_the_device_when_measured(tmp_path):
    """`ssdpts check`'s idle-gap rule reads the stored device idle where measured, else the gate figure."""
    store = Store(tmp_path / "r.db")

    def run_with(*rounds: tuple[float | None, DeviceIdle | None]) -> str:
        rid = store.create_run(target_spec="/dev/x", target={"kind": "block", "size_bytes": 2**30, "info": {}},
                               host={}, profile_name="t", profile={}, tests=["iops"], options={}, engine="fio")
        for i, (gate, device) in enumerate(rounds, start=1):
            store.save_round(rid, "iops", "", "round", i, RoundOutput(cells=[], engine="fio", gap_before_ms=gate,
                                                                      device_idle_before=device), [])
        store.set_test(rid, "iops", "completed", {})
        return rid

    def idle_findings(rid: str) -> list[str]:
        return [f.deviation.evidence for f in check(load_run(store, rid), store).findings
                if f.deviation.rule == "idle-gap"]

    # gate 2 ms but the device idled 12.5 ms: a deviation, judged by the device
    (ev,) = idle_findings(run_with((None, None), (2.0, DeviceIdle(12.5, 1.0, 1.0125))))
    assert "(device idle measured at the block layer)" in ev and "longest 12.5 ms (device idle" in ev
    # gate 30 ms but the device idled 4 ms (the gate figure is not the device's): none
    assert idle_findings(run_with((None, None), (30.0, DeviceIdle(4.0, 1.0, 1.004)))) == []
    # not measured at the device (sim, remote): the gate figure, said so
    (ev,) = idle_findings(run_with((None, None), (30.0, DeviceIdle(None))))
    assert "(gate-side figure (device idle not measured))" in ev and "longest 30.0 ms (gate-side figure" in ev


@requires_devices
def test_a_sampler_later_than_the_report_wait_gives_not_measured(loopdev, monkeypatch):
    """IDLE_REPORT_WAIT_S bounds how long a round's result waits for the sampler: a sampler stopped for
    longer makes the transition 'not measured', never a hang or a made-up figure."""
    from ssdpts.engines import blockidle
    from ssdpts.engines.blockidle import IdleSampler

    monkeypatch.setattr(blockidle, "IDLE_REPORT_WAIT_S", 0.2)
    sp = IdleSampler(stat_path_for(loopdev))
    try:
        time.sleep(0.2)
        os.kill(sp.proc.pid, signal.SIGSTOP)
        now = time.time_ns()
        assert sp.idle_across(now, now + 1_000_000).ms is None
    finally:
        sp.close()


@requires_devices
def test_a_waiting_round_gets_the_normal_policy_once_set_up(loopdev):
    """A round queued behind a running one sets up as SCHED_IDLE and gets the normal policy back once every
    job waits at its gate: here it waits far longer than SET_UP_POLL_S, and is back to normal long before
    its turn."""
    if os.geteuid() != 0:
        pytest.skip("SCHED_IDLE set-up is root only")
    target = open_target(loopdev, probe=False)
    with FioEngine().session(target) as s:
        running = s.submit([Workload("a", "randwrite", bs=4096, threads=1, iodepth=4, runtime_s=6.0)])
        waiting = s.submit(_cells(2))
        proc = waiting.procs[0]
        end = time.monotonic() + 5.0
        policies: set[int] = set()
        while time.monotonic() < end and running.procs[0].proc.poll() is None:
            tasks = list(Path(f"/proc/{proc.proc.pid}/task").glob("*")) if proc.proc else []
            try:
                policies = {os.sched_getscheduler(int(t.name)) for t in tasks}
            except ProcessLookupError:
                continue
            if s.gates.waiting.get(proc.gates[0], 0) >= 2 and policies == {os.SCHED_OTHER}:
                break
            time.sleep(0.05)
        assert policies == {os.SCHED_OTHER}
        running.result()
        assert all(c.write.ios > 0 for c in waiting.result().cells)


class _RecordedStat:
    """A /sys/block/DEV/stat the test writes: the counters a device shows, line by line, as the sampler reads
    them (fixed-width fields: each line overwrites the last whole)."""

    def __init__(self, path: Path):
        self.path = path
        self.fields = [0] * 17          # reads ... flush ticks, as the kernel prints them
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT)
        self.show()

    def show(self, inflight: int | None = None, writes: int = 0, write_ms: int = 0) -> int:
        """Writes `writes` more completed writes that took `write_ms` in all; requests in flight now. Returns
        the time it was shown (ns)."""
        f = self.fields
        f[4] += writes
        f[7] += write_ms
        if inflight is not None:
            f[8] = inflight
        shown = time.time_ns()       # before: the sampler may read the line at once
        os.pwrite(self.fd, ("".join(f"{v:>12}" for v in f) + "\n").encode(), 0)
        return shown

    def busy(self, seconds: float) -> None:
        """A device at work: 4 requests in flight, 4 writes of 1 ms completed every 5 ms."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.show(4, 4, 4)
            time.sleep(0.005)


@contextlib.contextmanager
def _recorded_sampler(tmp_path: Path):
    """A recorded stat file and the real sampler reading it, once it has taken its first reading."""
    from ssdpts.engines.blockidle import IdleSampler

    stat = _RecordedStat(tmp_path / "stat")
    sampler = IdleSampler(stat.path)
    try:
        while sampler.started_ns is None:
            time.sleep(0.01)
        yield stat, sampler
    finally:
        sampler.close()


def test_a_run_in_which_the_device_held_requests_is_latency_not_idle(tmp_path):
    """Recorded counters, read by the real sampler: (1) requests the device held above its own accounting for
    300 ms (dm-delay counts a request only once it lets it go: in flight 0 and nothing completing, then
    requests complete with 300 ms of latency each); (2) the host left the device idle for 300 ms (in flight 0,
    then requests complete in 1 ms); (3) a device holding requests it counts in flight for 300 ms; (4) requests
    queued before any accounting (a dm device suspended for a table swap), whose latency covers only the last
    100 ms. Only (2) is device idle; (1) is the held time, (3) never idled, (4) is held from where its latency
    begins, and wholly where the cell before the transition was due to run until its end."""
    with _recorded_sampler(tmp_path) as (stat, sampler):
        stat.busy(0.05)
        held_from = stat.show(0)                   # the last completions; the next requests are held, unseen
        time.sleep(0.3)
        released = stat.show(4)                    # let go: counted in flight now, from their submission on
        time.sleep(0.005)
        stat.show(4, 4, 4 * ((time.time_ns() - held_from) // 1_000_000))
        time.sleep(0.05)                           # the next requests are held again (none completes)
        stat.busy(0.05)
        idle_from = stat.show(0)                   # the host sends nothing
        time.sleep(0.3)
        idle_to = stat.show(4, 4, 4)               # it sends requests, which take 1 ms
        stat.busy(0.05)
        counted_from = stat.show(4, 0, 0)          # in flight, none completing
        time.sleep(0.3)
        counted_to = stat.show(4, 4, 4 * 300)
        stat.busy(0.05)
        queued_from = stat.show(0)                 # requests queued before any accounting (a suspended dm device)
        time.sleep(0.3)
        resumed = stat.show(4)
        time.sleep(0.005)
        # their latency counts only the last 100 ms before the resumption (and the time since: a loaded host's
        # sleep is longer than asked, and the kernel would count that too)
        stat.show(4, 4, 4 * (100 + (time.time_ns() - resumed) // 1_000_000))
        time.sleep(0.05)
        stat.busy(0.05)

        held = sampler.idle_across(held_from, released)
        assert held.ms is not None and held.held_ms > 0
        run_ms = (held.next_io - held.last_io) * 1000
        assert run_ms >= SPAN_MS and held.next_io * 1e9 >= released
        assert abs(held.ms + held.held_ms - run_ms) < 0.01     # the counters' run, held time and idle apart
        assert held.held_ms >= run_ms / 2 and held.ms < held.held_ms

        idle = sampler.idle_across(idle_from, idle_to)
        assert idle.held_ms == 0.0 and idle.ms >= SPAN_MS and idle.next_io * 1e9 >= idle_to

        counted = sampler.idle_across(counted_from, counted_to)
        assert counted.ms == 0.0 and counted.held_ms == 0.0

        # (4) the counters explain only the last 100 ms of the hold; the cell before the transition was due to run
        # until its end (its jobs kept requests given to the device): none of it was the host's idle
        queued = sampler.idle_across(queued_from, resumed)
        queued_ms = (queued.next_io - queued.last_io) * 1000
        assert abs(queued.ms + queued.held_ms - queued_ms) < 0.01 and queued_ms >= SPAN_MS
        assert 90 <= queued.held_ms <= 110 and queued.ms >= 190
        due_then = sampler.idle_across(queued_from, resumed, cell_due_ns=resumed)
        assert due_then.ms == 0.0 and abs(due_then.held_ms - (due_then.next_io - due_then.last_io) * 1000) < 0.01
        # a cell due to end before the idle began (as at every transition) leaves an idle as it is
        assert sampler.idle_across(idle_from, idle_to, cell_due_ns=idle_from - 50_000_000) == idle


def test_a_released_hold_whose_first_completion_reads_no_latency_is_held(tmp_path):
    """The counters the QEMU test bed's dm-delay showed when it let a 5 s hold go (/sys/block/dm-0/stat, Linux
    6.1 guest of tests/vm/test_vm_faults.py), replayed at 300 ms through the real sampler. A bio-based device
    counts a request done when it starts it and adds its latency when it ends: (1) after nothing in flight and
    nothing done for the hold, one request done and in flight with 0 ms, and 9 ms later 7 more done, nothing in
    flight, and the latency of all 8 (5-6.3 s each); (2) all 8 done and in flight with 0 ms, then none in
    flight and their latency. Judged by the first sample alone both were a 4.3-4.8 s idle before round 2. Both
    are held, not idle; (3) a real idle after them, whose requests take 1 ms or less, is still idle."""

    def hold(then: int) -> int:
        return 8 * ((time.time_ns() - then) // 1_000_000)     # 8 requests' latency since `then`, in ms

    with _recorded_sampler(tmp_path) as (stat, sampler):
        stat.busy(0.05)
        first_from = stat.show(0)                  # the last completions; the next ones are held, unseen
        time.sleep(0.3)
        first_released = stat.show(1, 1, 0)        # (1) one counted at once, with no latency yet
        time.sleep(0.009)
        stat.show(0, 7, hold(first_from))          # the other 7, and all 8 ended
        time.sleep(0.05)
        stat.busy(0.05)
        second_from = stat.show(0)
        time.sleep(0.3)
        second_released = stat.show(8, 8, 0)       # (2) all 8 counted at once, in flight
        time.sleep(0.009)
        stat.show(0, 0, hold(second_from))         # ... and ended
        time.sleep(0.05)
        stat.busy(0.05)
        idle_from = stat.show(0)                   # (3) the host sends nothing
        time.sleep(0.3)
        idle_to = stat.show(1, 1, 0)               # it sends requests, which take 1 ms or less
        time.sleep(0.009)
        stat.show(0, 7, 7)
        time.sleep(0.05)
        stat.busy(0.05)

        for since, released in ((first_from, first_released), (second_from, second_released)):
            held = sampler.idle_across(since, released)
            # idle only up to the counters' resolution (latency in whole ms, samples 0.1 ms apart)
            assert held.ms < 10 and (held.next_io - held.last_io) * 1000 >= SPAN_MS and held.held_ms >= 290, held
        idle = sampler.idle_across(idle_from, idle_to)
        assert idle.held_ms == 0.0 and idle.ms >= SPAN_MS and idle.next_io * 1e9 >= idle_to


def test_an_idle_run_across_a_suspension_is_not_measurable(tmp_path):
    """Recorded counters and the device-mapper `suspended` flag, read by the real sampler: the counters read idle
    for 300 ms, during which the dm device was suspended for a table swap for 50 ms, and requests complete whose
    latency counts only 100 ms (requests a suspended device queues wait before any accounting). The counters
    cannot tell how much of the run the host left idle: not measurable, with the reason, not a false idle. The
    same run with no suspension is idle up to the requests' submission."""
    from ssdpts.engines.blockidle import UNMEASURABLE_SUSPENDED

    (tmp_path / "dm").mkdir()
    flag = tmp_path / "dm" / "suspended"
    flag.write_text("0\n")
    with _recorded_sampler(tmp_path) as (stat, sampler):
        runs = []
        for suspend in (True, False):
            stat.busy(0.05)
            quiet_from = stat.show(0)
            time.sleep(0.1)
            if suspend:
                flag.write_text("1\n")
                time.sleep(0.05)
                flag.write_text("0\n")
            time.sleep(0.15 if suspend else 0.2)
            released = stat.show(8, 8, 0)           # counted when let go (a bio-based device), ...
            time.sleep(0.005)
            # ... their latency 100 ms each before the release, and the time since (a loaded host's sleep is
            # longer than asked, and the kernel would count that too)
            stat.show(0, 0, 8 * (100 + (time.time_ns() - released) // 1_000_000))
            time.sleep(0.05)
            runs.append((quiet_from, released))
        stat.busy(0.05)

        unknown = sampler.idle_across(*runs[0])
        assert unknown.ms is None and unknown.cause == UNMEASURABLE_SUSPENDED
        assert (unknown.next_io - unknown.last_io) * 1000 >= SPAN_MS and 90 <= unknown.held_ms <= 120
        known = sampler.idle_across(*runs[1])
        known_span_ms = (known.next_io - known.last_io) * 1000
        assert known.cause == "" and 90 <= known.held_ms <= 120 and known_span_ms >= SPAN_MS
        assert abs(known.ms + known.held_ms - known_span_ms) < 0.01 and known.ms >= 180


def test_the_summary_counts_held_transitions_apart_from_idle_ones():
    """`show` says where the device held requests (latency) beside the idle figures it judges: a round stored
    with a 5,116 ms hold before it (the test bed's dm-delay stall) and a 3 ms idle inside it."""
    from ssdpts.engines.results import DeviceIdle
    from ssdpts.store import device_idle_summary
    from ssdpts.store.db import RoundRecord

    rounds = [RoundRecord(1, "iops", "", "round", r, 0.0, 1.0, 0.0, "fio", "", [], {}, {},
                          device_idle_before=DeviceIdle(0.0, held_ms=held), device_idle_inside=[DeviceIdle(3.0)])
              for r, held in ((1, 0.0), (2, 5116.0))]
    s = device_idle_summary(rounds)
    assert (s.held, s.held_max_ms, s.max_ms, s.over_limit) == (1, 5116.0, 3.0, 0)
    assert s.text().endswith("; the device held requests at 1 transition (longest 5116.0 ms: latency, not idle)")
    quiet = device_idle_summary(rounds[:1])
    assert (quiet.held, quiet.held_max_ms) == (0, None) and "held" not in quiet.text()
