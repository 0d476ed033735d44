"""Resume tells the truth (issue 26, item 5): the pause across a stop is measured at the block layer, stored with
the first round after the resume, judged as an idle gap by `check` and counted the same way by `show`; the
interrupted round runs again unmeasured; the ETA after a resume leaves out what was already stored."""

import json
import os
import re
import signal
import subprocess
import sys
import time

from conftest import requires_devices, sigint_as_at_a_terminal, ssdpts, wait_for_rounds
from ssdpts.store import Store
from ssdpts.units import format_duration

PAUSE_S = 60.0           # the "Done means": a resume after a pause of 60 s
STARTUP_SLACK_S = 60.0   # a resume's own start (Python, target checks, fio) before its first I/O, under load


def _never_steady(tmp_path, tiny: str) -> str:
    p = tmp_path / "never.toml"
    p.write_text(f'[profile]\nextends = "{tiny}"\n[steady_state]\nmax_range = 0.000001\nmax_rounds = 8\n')
    return str(p)


def _stop_after_rounds(loopdev: str, results, profile: str, rounds: int, *options: str) -> tuple[str, float, float]:
    """Start a run (with these further `run` options), Ctrl-C it once `rounds` rounds are stored: (run id, SIGINT
    time, exit time)."""
    proc = subprocess.Popen([sys.executable, "-m", "ssdpts", "run", loopdev, "--profile", profile, "--tests", "iops",
                             "--destroy-data", "--results", str(results), "-q", *options], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=sigint_as_at_a_terminal)
    try:
        rid = wait_for_rounds(results / "ssdpts.db", "iops", rounds)
        assert rid, "the run never stored its rounds"
        # and the next round's I/O is on the device: on a loaded host the stop once landed between two rounds
        # (none lost, nothing to run again)
        assert _next_io(loopdev), "no I/O followed the stored rounds"
        sent = time.time()
        os.kill(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        exited = time.time()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "the stop lost round" in err or "the stop lost the preconditioning" in err, err
    return rid, sent, exited


def _completed_ios(dev: str) -> int:
    fields = open(f"/sys/block/{os.path.basename(dev)}/stat").read().split()
    return int(fields[0]) + int(fields[4])          # reads and writes completed


def _next_io(dev: str, timeout_s: float = 60.0) -> bool:
    """Whether the device completes another I/O within `timeout_s` from now."""
    before, end = _completed_ios(dev), time.monotonic() + timeout_s
    while time.monotonic() < end:
        if _completed_ios(dev) > before:
            return True
        time.sleep(0.005)
    return False


def _check_over(results, rid: str) -> int:
    out = ssdpts("check", rid, "--results", str(results), check=False).stdout
    m = re.search(r"\[idle-gap\] iops: (\d+) transitions left the device idle", out)
    return int(m.group(1)) if m else 0


@requires_devices
def test_pause_of_60s_is_stored_shown_and_a_deviation(loopdev, results, tiny, tmp_path):
    rid, sent, exited = _stop_after_rounds(loopdev, results, _never_steady(tmp_path, tiny), 3)
    store = Store(results / "ssdpts.db")
    stored_before = len(store.rounds(rid, "iops", with_cells=False))
    stop = store.step(rid, "iops", "stop:1")
    assert stop is not None and stop["last_io_source"].startswith("last I/O before the stop at the block layer")
    assert stop["last_io"] <= exited          # the device's last I/O came before the process ended
    store.close()

    time.sleep(PAUSE_S)
    resumed = time.time()
    ssdpts("resume", rid, "--results", str(results), "-q")

    store = Store(results / "ssdpts.db")
    rec = store.step(rid, "iops", "resume:1")
    assert rec is not None and rec["judged"]
    # the pause: from the last I/O before the stop (before the process exited) to the first after the resume
    # (after it started): at least the wall time the test waited, at most that plus the resume's start-up
    assert rec["pause_ms"] >= (resumed - exited) * 1000 >= PAUSE_S * 1000
    assert rec["pause_ms"] <= (resumed - sent + STARTUP_SLACK_S) * 1000
    assert rec["first_io_source"] == "first I/O after the resume at the block layer"
    # the interrupted round ran again unmeasured, carrying the pause; the measured round right behind it
    (again,) = store.rounds(rid, "iops", kind="resume", with_cells=False)
    assert again.round == stored_before + 1
    assert again.device_idle_before.cause == "resume" and again.device_idle_before.ms == rec["pause_ms"]
    measured = next(r for r in store.rounds(rid, "iops", with_cells=False) if r.round == again.round)
    assert measured.device_idle_before is not None and measured.device_idle_before.cause == ""
    assert measured.device_idle_before.ms is not None and measured.device_idle_before.ms < rec["pause_ms"] / 100
    assert [r.round for r in store.rounds(rid, "iops", with_cells=False)] == list(range(1, 9))
    assert len(store.rounds(rid, "iops", kind="precondition", with_cells=False)) == 1   # WIPC not repeated
    assert rec["wipc"].startswith("not run again: the device completed no writes or discards")
    store.close()

    # show and check: the pause, and the same number of transitions over the limit
    text = ssdpts("show", rid, "--results", str(results)).stdout
    assert f"resume pause {rec['pause_ms'] / 1000:.1f} s" in text
    doc = json.loads(ssdpts("show", rid, "--json", "--results", str(results)).stdout)
    idle = next(t for t in doc["tests"] if t["name"] == "iops")["device_idle"]
    assert idle["across_resume"] == 1
    assert f"{idle['over_limit']} over 10 ms beyond any requested idle (1 across a resume)" in text
    assert _check_over(results, rid) == idle["over_limit"] >= 1
    check_text = ssdpts("check", rid, "--results", str(results), check=False).stdout
    assert "NOT CONFORMANT" in check_text and "across a stop and its resume" in check_text
    assert f"longest {rec['pause_ms'] / 1000:.1f} s" in check_text


@requires_devices
def test_quick_resume_reruns_the_round_and_leaves_stored_work_out_of_the_eta(loopdev, results, tiny, tmp_path):
    """Even an immediate resume idles the device far beyond 10 ms (a process starts): there is no conformant
    resume, so the round is re-run before measuring. Its ETA leaves out the stored preconditioning and rounds
    (the plan's figures less the stored rounds' cells)."""
    profile = _never_steady(tmp_path, tiny)
    rid, _, _ = _stop_after_rounds(loopdev, results, profile, 2)
    store = Store(results / "ssdpts.db")
    stored = store.rounds(rid, "iops")
    store.close()
    plan = json.loads(ssdpts("plan", loopdev, "--profile", profile, "--tests", "iops", "--json").stdout)
    planned = next(t for t in plan["tests"] if t["test"] == "iops")
    assert planned["size_bound_bytes"] > 0       # the preconditioning: written before the stop
    stored_s = sum(w["runtime_s"] for r in stored for w in r.workloads)

    p = ssdpts("resume", rid, "--results", str(results))
    line = next(x for x in p.stderr.splitlines() if "resumed:" in x)
    assert f"{format_duration(stored_s)} of rounds" in line and "of preconditioning already stored" in line
    assert f"ETA test ≤ {format_duration(planned['seconds_max'] - stored_s)}," in line
    assert "writing" not in line and "preconditioning at" not in line    # nothing size-bound left

    store = Store(results / "ssdpts.db")
    rec = store.step(rid, "iops", "resume:1")
    assert rec["judged"] and rec["pause_ms"] > 10.0
    assert rec["rerun"].startswith(f"round {len(stored) + 1} re-run unmeasured")
    (again,) = store.rounds(rid, "iops", kind="resume", with_cells=False)
    measured = next(r for r in store.rounds(rid, "iops", with_cells=False) if r.round == again.round)
    assert measured.device_idle_before.cause == "" and measured.device_idle_before.ms < rec["pause_ms"]
    assert store.run(rid)["status"] == "completed"
    store.close()
