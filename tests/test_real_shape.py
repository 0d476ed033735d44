"""A shipped real profile at the time scale users run: one-minute cells, unscaled.

`quick` and `tiny` compress every duration, so a bug that shows only when a round outlives an absolute
time constant of the engine (a hang watch, a timeout) never shows there: one such bug killed every
real-profile round longer than ~70 s and no test saw it. This runs pts-client's throughput test (two
one-minute cells per round: a two-minute round, past the 60 s hang grace) on a loop device through the
real CLI for about four and a half minutes, then Ctrl-C, then resume (docs/testing.md, "At the time scale
users run").
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import requires_devices, sigint_as_at_a_terminal, ssdpts, wait_for_rounds
from ssdpts.store import Store

pytestmark = [pytest.mark.device, pytest.mark.slow]

ROUND_S = 120          # pts-client throughput: SEQ 1024 KiB read and write, 1 min each


def _sectors_done(dev: str) -> int:
    f = Path(f"/sys/block/{Path(dev).name}/stat").read_text().split()
    return int(f[2]) + int(f[6])


def _start(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "ssdpts", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=sigint_as_at_a_terminal)


def _interrupt(proc: subprocess.Popen) -> tuple[int, str]:
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err


def _rounds(db: Path, rid: str) -> list:
    store = Store(db)
    try:
        return store.rounds(rid, "throughput")
    finally:
        store.close()


@requires_devices
def test_real_profile_unscaled_survives_rounds_longer_than_every_engine_timeout(loop_factory, results):
    dev = loop_factory(256 * 2**20)
    db = results / "ssdpts.db"
    proc = _start(["run", dev, "--profile", "pts-client", "--tests", "throughput", "--destroy-data",
                   "--results", str(results), "-q"])
    try:
        rid = wait_for_rounds(db, "throughput", 2, timeout=2 * ROUND_S + 240)
        assert proc.poll() is None, f"the run ended early ({proc.returncode}): {proc.stderr.read()}"
        assert rid, "two two-minute rounds were not committed in time"
        # still healthy: the process runs its third round and the device keeps working
        before = _sectors_done(dev)
        time.sleep(5)
        assert proc.poll() is None and _sectors_done(dev) > before
        rounds = _rounds(db, rid)
        assert [r.round for r in rounds] == [1, 2]
        for r in rounds:
            # both cells ran their whole minute and did I/O
            assert len(r.cells) == 2
            assert all(c.runtime_ms >= 59_000 and (c.read.ios + c.write.ios) > 0 for c in r.cells)
            # the transition inside the round was measured at the block layer, and the device did not
            # sit idle between the cells (generous bound: a loaded 2-core CI machine)
            assert r.device_idle_inside and r.device_idle_inside[0].ms is not None, r.device_idle_note
            assert r.device_idle_inside[0].ms < 1000.0
        assert rounds[1].device_idle_before is not None and rounds[1].device_idle_before.ms is not None
        assert rounds[1].device_idle_before.ms < 1000.0
        code, err = _interrupt(proc)
        assert code == 130, err
        assert "Traceback" not in err
        status = json.loads(ssdpts("show", rid, "--json", "--results", str(results)).stdout)
        assert status["run"]["status"] == "interrupted"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    # resume goes on with round 3 (first run again unmeasured: the pause across the stop broke the chain of
    # rounds, docs/conformance.md 'Resume'): nothing committed is run again, preconditioning is not repeated
    at_round_3 = ("round 3 re-run unmeasured", "round 3/")
    log = results / "logs" / f"{rid}.log"
    resumed = _start(["resume", rid, "--results", str(results), "-q"])
    try:
        deadline = time.time() + 180
        while time.time() < deadline and not any(m in _after_last_start(log, rid) for m in at_round_3) \
                and resumed.poll() is None:
            time.sleep(1)
        assert resumed.poll() is None, resumed.stderr.read()
        before = _sectors_done(dev)
        time.sleep(10)
        assert _sectors_done(dev) > before                        # round 3 is running
        tail = _after_last_start(log, rid)
        assert any(m in tail for m in at_round_3), tail
        # ("resumed: ... of preconditioning already stored" says what is not run again)
        assert "round 1/" not in tail and not re.search(r"preconditioning( done)?:", tail) and "purging" not in tail, tail
        code, err = _interrupt(resumed)
        assert code == 130 and "Traceback" not in err
    finally:
        if resumed.poll() is None:
            resumed.kill()
            resumed.wait()
    assert [r.round for r in _rounds(db, rid)] == [1, 2]


def _after_last_start(log: Path, rid: str) -> str:
    """The run log since the latest session of the run began (a resume starts a new one)."""
    text = log.read_text() if log.exists() else ""
    return text[text.rfind(f"run {rid}:"):] if f"run {rid}:" in text else ""
