"""A stall is a round to retry, not a run to lose (realtime/timing.py: HANG_GRACE_S, STALL_RETRIES,
KILL_WAIT_S). fio stopped by SIGSTOP stands in for the kernel losing a completion below it
(bench/loop_hang.fio reproduces that on this project's VM kernel at TC8/QD32): either way the cell does not
end and fio does not exit. Real fio on a loop device; the grace is scaled down, never the logic."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from conftest import assert_no_stall, requires_devices
from ssdpts.engines.fio import FioEngine
from ssdpts.errors import SsdptsError
from ssdpts.targets import open_target
from ssdpts.workload import Workload

pytestmark = pytest.mark.device


def _cells(n: int, runtime_s: float) -> list[Workload]:
    return [Workload(f"c{i}", "randwrite", bs=4096, threads=2, iodepth=4, runtime_s=runtime_s) for i in range(n)]


def _stop_when_running(r) -> None:
    """SIGSTOP the round's first fio process once both clones of its first cell have started."""
    s, first = r.session, r.procs[0].gates[0]
    end = time.monotonic() + 30
    while len(s.gates.starts.get(first, [])) < 2 and time.monotonic() < end:
        time.sleep(0.01)
    os.kill(r.procs[0].proc.pid, signal.SIGSTOP)


@requires_devices
def test_a_round_longer_than_the_hang_grace_is_not_a_stall(loopdev):
    """Cells of 4 s with a grace of 3 s: each cell outlives the grace and the first round outlives it nearly
    three times over; nothing is called hung (the keeper once miscounted end reports that came after a cell's
    predicted opening, so every round longer than the grace died). A grace of 1 s was too little for a loaded
    host: in make test a cell's fio had not ended 1 s after its due end, which is lateness, not a hang."""
    target = open_target(loopdev, probe=False)
    with FioEngine(hang_grace_s=3.0).session(target) as s:
        first, second = s.submit(_cells(2, 4.0)), s.submit(_cells(1, 4.0))
        for r in (first, second):
            out = r.result()
            assert not out.stalls
            assert all(c.runtime_ms >= 3900 and c.write.ios > 0 for c in out.cells)


@requires_devices
def test_a_stalled_round_is_killed_with_evidence_and_run_again(loopdev, tmp_path):
    target = open_target(loopdev, probe=False)
    engine = FioEngine(hang_grace_s=1.0)
    engine.keep_dir = tmp_path / "kept"
    with engine.session(target) as s:
        r = s.submit(_cells(2, 0.3))
        after = s.submit(_cells(1, 0.3))          # queued behind it: must run after the re-run, not lost
        _stop_when_running(r)
        stalled_pid = r.procs[0].proc.pid
        out = r.result()
        assert r.procs[0].proc.pid != stalled_pid                 # a new fio ran the round
        assert len(out.stalls) == 1 and out.stalls[0].cell == "c0"
        assert "had not ended 1 s after its 0.3 s run" in out.stalls[0].why
        assert all(c.write.ios > 0 and c.runtime_ms >= 250 for c in out.cells)
        evidence = Path(out.stalls[0].evidence_file)
        assert evidence.exists() and evidence.parent.parent == tmp_path / "kept"
        text = evidence.read_text()
        assert f"fio pid {stalled_pid}" in text and "--- thread" in text and "in flight" in text
        assert (evidence.parent / "job.fio").read_text().count("[c0") >= 1
        nxt = after.result()
        assert not nxt.stalls and nxt.cells[0].write.ios > 0
        assert nxt.started_at >= out.started_at


@requires_devices
def test_a_fio_stopped_before_its_cell_started_is_killed_and_its_round_run_again(loopdev, tmp_path):
    """The second round's fio is stopped while it sets up, before its cell's turn: no clone ever reports, so
    the cell's predicted end is never known. It is late 0.3 s + grace after the first round's end let it go,
    killed with the evidence, and run again. (Without this watch the run waited for it for good: a make test
    run hung 9 minutes on a stopped fio whose cells had not started.)"""
    target = open_target(loopdev, probe=False)
    engine = FioEngine(hang_grace_s=1.0)
    engine.keep_dir = tmp_path / "kept"
    with engine.session(target) as s:
        first = s.submit(_cells(1, 0.3))
        second = s.submit(_cells(1, 0.3))
        stopped_pid = second.procs[0].proc.pid
        os.kill(stopped_pid, signal.SIGSTOP)
        assert not first.result().stalls
        out = second.result()
        assert second.procs[0].proc.pid != stopped_pid
        assert len(out.stalls) == 1 and out.stalls[0].cell == "c0"
        assert "had not started 0.3 s + 1 s after its turn came" in out.stalls[0].why
        assert out.cells[0].write.ios > 0 and out.cells[0].runtime_ms >= 250
        assert Path(out.stalls[0].evidence_file).exists()


@requires_devices
def test_a_round_that_keeps_stalling_stops_the_run_naming_a_file_that_exists(loopdev, tmp_path):
    target = open_target(loopdev, probe=False)
    engine = FioEngine(hang_grace_s=1.0, stall_retries=1)
    engine.keep_dir = tmp_path / "kept"
    with engine.session(target) as s:
        r = s.submit(_cells(2, 0.3))
        _stop_when_running(r)
        first_pid = r.procs[0].proc.pid
        stopper = threading.Thread(target=lambda: (_wait_rearmed(r, first_pid), _stop_when_running(r)))
        stopper.start()
        with pytest.raises(SsdptsError, match="stopped making progress") as e:
            r.result()
        stopper.join()
        assert "stalled 2 times" in str(e.value)
        named = str(e.value).rsplit("evidence and job file: ", 1)[1].split()[0]
        assert Path(named).exists() and (Path(named).parent / "job.fio").exists()
        assert all(p.proc.poll() is not None for p in r.procs)


def _wait_rearmed(r, old_pid: int) -> None:
    end = time.monotonic() + 60
    while time.monotonic() < end:
        p = r.procs[0]
        if p.proc is not None and p.proc.pid != old_pid:
            return
        time.sleep(0.01)


def _fio_children() -> list[int]:
    """fio processes started by this process (the engine's rounds)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)
            comm = fields[0].split("(", 1)[1]
            ppid = int(fields[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if comm.startswith("fio") and ppid == os.getpid():
            out.append(int(stat.parent.name))
    return out


@requires_devices
def test_a_run_survives_a_stall_and_records_it(loopdev, results, tiny, tmp_path, monkeypatch):
    """Through the runner: a round stalls, is re-run, the run completes; the stall is a deviation with its
    evidence kept beside the run's log, named on the run's last line (exit 0 would hide it), and the tests'
    shared no-stall check fails on it."""
    from ssdpts.runner import lifecycle
    from ssdpts.store import Store

    made = lifecycle.engine_for

    def quick_to_judge(target, io_request):
        engine = made(target, io_request)     # its I/O engine chosen and recorded as in any run
        engine.hang_grace_s = 1.0
        return engine

    monkeypatch.setattr(lifecycle, "engine_for", quick_to_judge)
    profile = tmp_path / "p.toml"
    profile.write_text(f'[profile]\nextends = "{tiny}"\n[steady_state]\nmax_range = 0.000001\nwindow = 3\n'
                       'max_rounds = 3\n')
    stopped: list[int] = []

    def stop_one_round() -> None:
        end = time.monotonic() + 120
        db = results / "ssdpts.db"
        while time.monotonic() < end and not stopped:
            if db.exists():
                s = Store(db)
                try:
                    runs = s.runs()
                    committed = runs and s.rounds(runs[0]["id"], "iops", with_cells=False)
                finally:
                    s.close()
                if committed:
                    for pid in _fio_children():
                        os.kill(pid, signal.SIGSTOP)
                        stopped.append(pid)
                        return
            time.sleep(0.05)

    t = threading.Thread(target=stop_one_round)
    t.start()
    rid = lifecycle.start(loopdev, results_dir=results, profile_name=str(profile), tests=["iops"], size=None,
                       destroy_data=True, purge_method="auto", quiet=True)
    t.join()
    assert stopped
    store = Store.in_dir(results)
    assert store.run(rid)["status"] == "completed"
    assert [r.round for r in store.rounds(rid, "iops")] == [1, 2, 3]
    stalls = [d for d in store.deviations(rid).get("iops", []) if d.rule == "fio-stall"]
    assert len(stalls) >= 1
    kept = stalls[0].evidence.rsplit("job file: ", 1)[1].rstrip(")")
    assert Path(kept).exists() and Path(kept).is_relative_to(results / "logs" / rid)
    last = (results / "logs" / f"{rid}.log").read_text().strip().splitlines()[-1]
    assert f"run {rid} complete, but fio stalled {len(stalls)} time(s)" in last
    assert "killed and run again" in last and str(Path(kept).parent) in last
    with pytest.raises(AssertionError, match=f"run {rid}: fio stalled {len(stalls)} time"):
        assert_no_stall(results, rid)


def _processes_running(argv: list[str]) -> list[int]:
    """Processes whose command line is exactly `argv`."""
    want = "\0".join(argv) + "\0"
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if cmdline.read_text() == want:
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found


@requires_devices
def test_a_fio_that_does_not_exit_after_its_jobs_ended_is_killed_and_its_round_run_again(loopdev, tmp_path):
    """Every job of the round's last cell reports its end, then its exec_postrun hook does not return (a
    `sleep` after the report), so fio's main process cannot exit, as when it is stuck in its teardown. The
    hang watch is past that cell; the exit watch kills the tree FIO_EXIT_GRACE_S (scaled to 2 s) after the
    last end report, with the evidence, and the round runs again."""
    target = open_target(loopdev, probe=False)
    engine = FioEngine(exit_grace_s=2.0)
    engine.keep_dir = tmp_path / "kept"
    with engine.session(target) as s:
        _hang_after_the_end_of(s, 1)      # gate 1: the first round's last cell (the re-run's gates are new ones)
        r = s.submit(_cells(2, 0.3))
        stuck = r.procs[0].proc.pid
        out = r.result()
        assert len(s.gates.fires[1]) == 2              # both clones of the stuck cell did report their end
        assert r.procs[0].proc.pid != stuck
        assert len(out.stalls) == 1 and out.stalls[0].cell == "c1"
        assert "fio's jobs ended " in out.stalls[0].why and "but its main process did not exit" in out.stalls[0].why
        ended_ago = float(out.stalls[0].why.split("fio's jobs ended ", 1)[1].split(" s ago")[0])
        assert ended_ago >= 2.0
        evidence = Path(out.stalls[0].evidence_file)
        assert evidence.parent.parent == tmp_path / "kept"
        text = evidence.read_text()
        assert f"fio pid {stuck}" in text and "(sleep)" in text       # where it was stuck: its hooks' sleeps
        assert all(c.write.ios > 0 and c.runtime_ms >= 250 for c in out.cells)
    assert not Path(f"/proc/{stuck}").exists()
    assert not _processes_running(HOOK_SLEEP), "the stuck fio's hook processes outlived it"


@requires_devices
def test_a_fio_that_keeps_not_exiting_after_its_jobs_ended_stops_the_run_with_the_reason(loopdev, tmp_path):
    target = open_target(loopdev, probe=False)
    engine = FioEngine(exit_grace_s=2.0, stall_retries=0)
    engine.keep_dir = tmp_path / "kept"
    with engine.session(target) as s:
        _hang_after_the_end_of(s, 0)
        r = s.submit(_cells(1, 0.3))
        stuck = r.procs[0].proc.pid
        with pytest.raises(SsdptsError, match="but its main process did not exit") as e:
            r.result()
        named = str(e.value).rsplit("evidence and job file: ", 1)[1].split()[0]
        assert f"fio pid {stuck}" in Path(named).read_text()
    assert not Path(f"/proc/{stuck}").exists()
    assert not _processes_running(HOOK_SLEEP), "the stuck fio's hook processes outlived it"


HOOK_SLEEP = ["sleep", "3071"]     # a command line nothing else on the host runs


def _hang_after_the_end_of(session, gate: int) -> None:
    """Gate `gate`'s jobs report their end, then their exec_postrun hook sleeps: fio's main process cannot
    exit (as when it is stuck in its teardown)."""
    fire_hook = session.gates.fire_hook
    session.gates.fire_hook = lambda gid: fire_hook(gid) + (f" && {' '.join(HOOK_SLEEP)}" if gid == gate else "")
