"""The gatekeeper process (realtime/gatekeeper.py) driven the way fio drives it: its hooks run by `sh -c`,
as fio's exec_prerun/exec_postrun do. No fio needed; timings are asserted only as lower bounds the
keeper guarantees by construction (it never opens a gate early), never as upper bounds."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from ssdpts.engines.gates import Gates
from ssdpts.realtime import window


def _hook(command: str, tmp_path: Path, name: str) -> subprocess.Popen:
    # fio runs `system("<hook> > <job>.<mode>.txt 2>&1")`
    return subprocess.Popen(["sh", "-c", f"{command} > {tmp_path / name}.txt 2>&1"])


def _wait_for(pred, timeout: float = 10.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.01)
    return pred()


@pytest.fixture
def gates(tmp_path):
    g = Gates(tmp_path / "gates")
    yield g
    g.close()


def test_a_cell_waits_at_its_gate_until_the_cell_before_it_ends(gates, tmp_path):
    first = gates.new(clones=2)
    second = gates.new(clones=1, wait=first)
    waiting = _hook(gates.wait_hook(first, second), tmp_path, "w")
    assert _wait_for(lambda: gates.waiting.get(second) == 1)      # set up and at the gate
    time.sleep(0.2)
    assert waiting.poll() is None and not gates.starts[second]     # still held
    for _ in range(2):                                             # both clones of the first cell end
        _hook(gates.fire_hook(first), tmp_path, "f").wait()
    assert waiting.wait(timeout=10) == 0
    gates.sync()
    assert len(gates.fires[first]) == 2 and len(gates.starts[second]) == 1
    assert gates.opened[first] >= max(gates.fires[first])          # opened on the last end report
    assert gates.gate_gap_ms(first) >= 0.0


def test_a_time_based_cell_lets_the_next_go_at_its_predicted_end_never_before(gates, tmp_path):
    runtime = 0.3
    first = gates.new(clones=1, runtime_s=runtime)
    second = gates.new(clones=1, wait=first)
    _hook(gates.wait_hook(None, first), tmp_path, "s").wait()     # the first cell starts (no gate before it)
    waiting = _hook(gates.wait_hook(first, second), tmp_path, "w")
    assert waiting.wait(timeout=10) == 0                           # no end report needed
    gates.sync()
    assert gates.opened[first] - gates.starts[first][0] >= int(runtime * 1e9)
    assert not gates.fires[first]


def test_a_requested_idle_follows_the_predicted_end(gates, tmp_path):
    runtime, idle = 0.1, 0.2
    first = gates.new(clones=1, runtime_s=runtime)
    second = gates.new(clones=1, wait=first)
    gates.set_delay(first, idle)
    _hook(gates.wait_hook(None, first), tmp_path, "s").wait()
    _hook(gates.wait_hook(first, second), tmp_path, "w").wait(timeout=10)
    gates.sync()
    assert gates.opened[first] - gates.starts[first][0] >= int((runtime + idle) * 1e9)


def test_the_samplers_window_is_published_around_a_due_transition(gates, tmp_path):
    first = gates.new(clones=1, runtime_s=5.0)
    gates.new(clones=1, wait=first)
    _hook(gates.wait_hook(None, first), tmp_path, "s").wait()
    gates.sync()
    start = gates.starts[first][0]
    look_from, look_until = window.Window(str(gates.window)).get()
    due = start + 5_000_000_000
    assert look_from == due - 20_000_000 and look_until == due + 20_000_000


def test_no_waiting_shell_outlives_the_keeper(gates, tmp_path):
    """The keeper dies with the engine (even by SIGKILL): a job waiting at a gate sees EOF and its shell
    exits; a job that reaches its gate afterwards finds no /proc entry and fails at once. Nothing is
    left blocked behind a dead engine."""
    first = gates.new(clones=1)
    second = gates.new(clones=1, wait=first)
    hook = gates.wait_hook(first, second)
    waiting = _hook(hook, tmp_path, "w")
    assert _wait_for(lambda: gates.waiting.get(second) == 1)
    gates.proc.kill()
    assert waiting.wait(timeout=10) != 0                           # `read` saw EOF: the shell ended
    late = _hook(hook, tmp_path, "late")
    assert late.wait(timeout=10) != 0
    assert not gates.starts[second]                                # neither was let go


def test_spent_gates_are_closed(gates, tmp_path):
    """A long run makes thousands of gates: once a cell is under way, the gate it waited on is closed."""
    keeper_fds = lambda: len(os.listdir(f"/proc/{gates.proc.pid}/fd"))  # noqa: E731
    prev = gates.new(clones=1)
    _hook(gates.wait_hook(None, prev), tmp_path, "s0").wait()
    baseline = None
    for i in range(40):
        gid = gates.new(clones=1, wait=prev)
        waiting = _hook(gates.wait_hook(prev, gid), tmp_path, f"w{i}")
        _hook(gates.fire_hook(prev), tmp_path, f"f{i}").wait()
        assert waiting.wait(timeout=10) == 0
        gates.sync()
        baseline = baseline or keeper_fds()
        prev = gid
    assert keeper_fds() <= baseline + 2


def test_a_cell_that_never_ends_is_reported_late(tmp_path):
    """fio can hang for good (a completion lost below it) and then ignores SIGTERM: the keeper reports a
    time-based cell whose end reports have not come `grace` after its predicted end."""
    late: list[int] = []
    g = Gates(tmp_path / "gates", hang_grace_s=0.2, on_late=late.append)
    try:
        cell = g.new(clones=2, runtime_s=0.1)
        ended = g.new(clones=1, runtime_s=0.1)
        for gid in (cell, cell, ended):
            _hook(g.wait_hook(None, gid), tmp_path, f"s{gid}").wait()
        _hook(g.fire_hook(ended), tmp_path, "f").wait()
        _hook(g.fire_hook(cell), tmp_path, "f1").wait()         # one clone of two ends
        assert _wait_for(lambda: late == [cell])
        time.sleep(0.3)
        assert late == [cell]                                    # once, and never the cell that ended
    finally:
        g.close()


def test_a_cell_that_never_starts_after_its_turn_is_reported_late(tmp_path):
    """A fio stopped before it reached a cell (SIGSTOP, or stuck opening the device) sends no report for it, so
    its predicted end is never known: the keeper reports it late `runtime + grace` after its turn came, whether
    the gate it waits on opened after it was made or before. Cells whose turn never came are not late."""
    late: list[int] = []
    g = Gates(tmp_path / "gates", hang_grace_s=0.2, on_late=late.append)
    try:
        ran = g.new(clones=1, runtime_s=0.1)
        stuck = g.new(clones=2, runtime_s=0.1, wait=ran)           # made before its turn
        behind = g.new(clones=1, runtime_s=0.1, wait=stuck)        # its turn never comes
        _hook(g.wait_hook(None, ran), tmp_path, "s").wait()
        _hook(g.fire_hook(ran), tmp_path, "f").wait()
        assert _wait_for(lambda: late == [stuck])
        made_after = g.new(clones=1, runtime_s=0.1, wait=ran)      # made after its turn came
        assert _wait_for(lambda: late == [stuck, made_after])
        time.sleep(0.5)
        g.sync()
        assert late == [stuck, made_after] and behind not in late
    finally:
        g.close()


def test_a_cell_that_ends_after_its_predicted_opening_is_not_late(tmp_path):
    """A time-based cell's gate opens at its predicted end, and its clones' end reports come a few ms later
    (fio's teardown): they still count, so a healthy cell is never called late. (This once killed every
    round longer than the hang grace: the keeper dropped end reports of an already-open gate.)"""
    late: list[int] = []
    g = Gates(tmp_path / "gates", hang_grace_s=0.5, on_late=late.append)
    try:
        cell = g.new(clones=2, runtime_s=0.1)
        nxt = g.new(clones=1, wait=cell)
        for i in range(2):
            _hook(g.wait_hook(None, cell), tmp_path, f"s{i}").wait()
        waiting = _hook(g.wait_hook(cell, nxt), tmp_path, "w")
        assert waiting.wait(timeout=10) == 0                       # opened at the predicted end
        g.sync()
        assert cell in g.opened and not g.fires[cell]
        for i in range(2):                                         # the end reports come after the opening
            _hook(g.fire_hook(cell), tmp_path, f"f{i}").wait()
        g.sync()
        assert len(g.fires[cell]) == 2
        time.sleep(1.0)                                            # well past predicted end + grace
        g.sync()
        assert late == []
    finally:
        g.close()


def test_a_keeper_stopped_longer_than_the_ack_poll_is_waited_for(tmp_path, monkeypatch):
    """ACK_POLL_S is how often the engine checks the keeper is alive while it waits, not a timeout: a host
    can stop a process for seconds, and a gate asked for meanwhile still comes."""
    import signal
    import threading

    from ssdpts.engines import gates as gates_module

    monkeypatch.setattr(gates_module, "ACK_POLL_S", 0.05)
    g = Gates(tmp_path / "gates")
    try:
        os.kill(g.proc.pid, signal.SIGSTOP)
        got: list[int] = []
        t = threading.Thread(target=lambda: got.append(g.new(clones=1)))
        t.start()
        time.sleep(0.5)                       # ten polls
        assert not got and t.is_alive()
        os.kill(g.proc.pid, signal.SIGCONT)
        t.join(timeout=10)
        assert got == [0]
    finally:
        g.close()


def test_a_keeper_that_does_not_exit_is_killed_at_close(tmp_path, monkeypatch):
    import signal

    from ssdpts.engines import gates as gates_module

    monkeypatch.setattr(gates_module, "KEEPER_EXIT_WAIT_S", 0.2)
    g = Gates(tmp_path / "gates")
    os.kill(g.proc.pid, signal.SIGSTOP)       # cannot read its closed stdin: outlives the wait
    g.close()
    assert g.proc.poll() is not None
