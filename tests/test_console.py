"""The console of a run: where it is (test k/n, round r/≤max, ETAs), preconditioning progress from fio's status,
the device idle measured before each round, a verdict line per test, and the exit-code rule (--strict).

Budget: one IOPS run of the tiny profile on a 64 MiB loop device (~5 s), one latency run on the simulated
drive (~2 s), and a few pure checks of the live status line."""

import re

import pytest

from conftest import requires_devices, ssdpts
from ssdpts.conformance import steady_loops
from ssdpts.engines.results import IoProgress
from ssdpts.progress import Progress, PlanBounds, span
from ssdpts.pts import registry
from ssdpts.store import Store

pytestmark = pytest.mark.no_end_report    # reads no end-of-run report (tests/conftest.py)


@requires_devices
def test_console_of_a_real_run_and_strict_exit_code(loopdev, results, tiny):
    p = ssdpts("run", loopdev, "--profile", tiny, "--tests", "iops", "--destroy-data", "--purge", "trim",
               "--results", str(results), "-q", "--strict", check=False)
    rid = p.stdout.strip().splitlines()[-1]          # scripts read the run id from the last line
    assert Store.in_dir(results).run(rid)["status"] == "completed"
    # the tiny profile's 200 ms cells are a recorded deviation: a completed, non-conformant run exits 1
    assert p.returncode == 1, p.stderr
    assert f"ssdpts: not conformant: {rid}" in p.stderr
    assert "== test" not in p.stderr and "round" not in p.stderr     # -q: no progress on the terminal

    log = (results / "logs" / f"{rid}.log").read_text()    # what the console prints without -q, also logged
    assert re.search(r"== test 1/1: IOPS .* \(planned ≤ \d+s \+ writing 67\.1 MB\)", log)
    # preconditioning: fio's status read while it runs (the last report is its final result: 100 %)
    assert re.search(r"iops preconditioning: [\d.]+ MB of 67\.1 MB \(\d+ %\), [\d,]+ MB/s \(MB = 10\^6 bytes\)",
                     log)
    assert "iops preconditioning: 67.1 MB of 67.1 MB (100 %)" in log
    assert re.search(r"iops preconditioning done: 67\.1 MB written in [^,]+, [\d,]+ MB/s", log)
    rounds = re.findall(r"iops round (\d+)/≤6: .*; device idle before it ([\d.]+) ms — "
                        r"(not steady yet|steady state reached); ETA test (≤ )?\d+s, run (≤ )?\d+s", log)
    stored = Store.in_dir(results).rounds(rid, "iops")
    assert [int(r[0]) for r in rounds] == [r.round for r in stored]
    # the idle printed is the block layer's, as stored (not the gate-side figure)
    assert [float(r[1]) for r in rounds] == [round(r.device_idle_before.ms, 1) for r in stored]
    # the verdict names the trackers the stored steady-state result holds: all of them when the loop reached
    # steady state, else the unsteady ones (which ones is the device's doing, not the test's)
    verdict = re.search(r"verdict iops: steady state (reached|NOT reached in 1 of 1 loop\(s\)) \((?:not steady: )?"
                        r"([^)]*)\); (\d+) deviation\(s\) \(.*duration.*\) — NOT CONFORMANT", log)
    assert verdict, log
    stored_test = next(t for t in Store.in_dir(results).tests(rid) if t["name"] == "iops")
    (loop,) = steady_loops(registry.get("iops").decode(stored_test["summary"]))
    named = {k.key.label for k in loop.aggregate_trackers if loop.reached or not k.state.reached}
    assert (verdict[1] == "reached") == loop.reached
    assert named and set(verdict[2].split(", ")) == named, (verdict[2], named)
    assert re.search(r"conformance: NOT CONFORMANT .*; 'ssdpts check \S+' lists them", log)


def test_completed_run_exits_0_without_strict_and_says_why_idle_is_not_measured(results, tiny):
    p = ssdpts("run", "sim:client", "--profile", tiny, "--tests", "latency", "--results", str(results))
    assert p.returncode == 0
    rid = p.stdout.strip().splitlines()[-1]
    err = p.stderr
    assert "== test 1/1: Latency" in err and re.search(r"latency round 1/≤\d+: ", err)
    assert "device idle before it not available: simulated drive (no block device)" in err
    assert re.search(r"latency preconditioning done: [\d.]+ GB written in [^,]+, [\d,]+ MB/s", err)
    # a simulated drive's durations and ETAs are simulated time, said so, with the wall clock beside them
    assert re.search(r"latency preconditioning done: [\d.]+ GB written in [\d.]+ s simulated \(wall [\d.]+ s\)", err)
    assert re.search(r"ETA in simulated time: test [^,]+, run [^(]+\(wall so far \d", err)
    assert "verdict latency: " in err and "NOT CONFORMANT" in err
    assert err.rstrip().endswith(f"run {rid} complete: 'ssdpts show {rid}' for the results")


def test_status_line_and_etas_from_the_plan_bounds():
    progress = Progress(quiet=True)
    progress.planned(["iops", "latency"], [PlanBounds("iops", 40.0, 100.0, 10**9), PlanBounds("latency", 30.0, 30.0, 0)])
    progress.test_started("iops", "IOPS", 1, 2)
    # preconditioning: bytes, %, MB/s and an ETA from the rate
    progress.round_started("iops", "", 0, 10, None, "preconditioning")
    progress.io_progress("iops", "", IoProgress(250 * 10**6, 10**9, 1.0))
    line = progress.status_line()
    assert "iops: preconditioning: 250.0 MB of 1.00 GB (25 %), 250 MB/s (MB = 10^6 bytes)" in line
    assert "ETA test ≤ 1m43s, run ≤ 2m13s" in line            # 3 s of writes left + 40..100 s + latency's 30 s
    progress.precondition_done("iops", "", IoProgress(10**9, 10**9, 4.0))
    # a round: its counter, the running cell from the clock, the bounds less the time spent
    progress.round_started("iops", "", 1, 10, 10.0, "", cells=[("rnd_4K_0-100", 5.0), ("rnd_64K_65-35", 5.0)],
                           window=4)
    line = progress.status_line()
    assert line.startswith("iops: round 1/≤10 cell 1/2 rnd_4K_0-100 ")
    assert "ETA test ≤ 1m40s, run ≤ 2m10s" in line
    progress._round_started -= 7.0          # as if 7 s of the round had passed
    assert " cell 2/2 rnd_64K_65-35 " in progress.status_line()
    progress.round_done("iops", "", 1, {"rnd_4K_0-100 iops": 1000.0}, False, None)
    assert progress.eta() == "ETA test ≤ 1m30s, run ≤ 2m00s"
    progress.test_started("latency", "Latency", 2, 2)
    assert progress.eta() == "ETA test 30s, run 30s"          # exact bounds are not a "≤"
    assert span(10, 10) == "10s" and span(10, 7200) == "≤ 2h00m"


def test_a_simulated_drives_eta_and_durations_say_simulated_time():
    progress = Progress(quiet=True, simulated=True)
    progress.planned(["latency"], [PlanBounds("latency", 30.0, 30.0, 0)])
    progress.test_started("latency", "Latency", 1, 1)
    assert re.fullmatch(r"ETA in simulated time: test 30s, run 30s \(wall so far \d+s\)", progress.eta())
    assert Progress(quiet=True).eta().startswith("ETA unknown")     # a real drive: no word about it


def test_eta_without_a_plan_or_a_write_speed_says_so():
    progress = Progress(quiet=True)
    progress.planned(["wsat", "iops"], [PlanBounds("iops", 5.0, 6.0, 2 * 10**9)])
    progress.test_started("wsat", "WSAT", 1, 2)
    assert progress.eta() == "ETA unknown (no plan for this test)"
    progress.test_started("iops", "IOPS", 2, 2)
    assert progress.eta() == "ETA test ≤ 6s, run ≤ 6s + writing 2.00 GB at the drive's speed"
