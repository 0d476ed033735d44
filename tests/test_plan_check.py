"""`ssdpts plan` shows the spec's procedures before anything runs; `ssdpts check` judges a stored run.

The plan is read for the real profiles (pts-enterprise, pts-client) on a file target that is never created.
"""

from __future__ import annotations

import json

import pytest

from conftest import run_completed, ssdpts
from ssdpts.commands.plan import build_plans
from ssdpts.targets import open_target

pytestmark = pytest.mark.no_end_report    # reads no end-of-run report (tests/conftest.py)


def plans(profile: str, tests: str, tmp_path, size: str = "64G") -> dict:
    target = tmp_path / "never-created.img"
    p = ssdpts("plan", str(target), "--size", size, "--profile", profile, "--tests", tests, "--json")
    assert not target.exists(), "plan must not create or touch the target"
    return {t["test"]: t for t in json.loads(p.stdout)["tests"]}


def small_blocks(tmp_path) -> bool:
    """Whether a file under `tmp_path` can do 512-byte direct I/O (the device below has 512-byte sectors)."""
    return open_target(str(tmp_path / "probe.img"), size=2**30).logical_block_size == 512


def cells(phase: dict) -> list[dict]:
    return phase["cells"]


def test_pts_enterprise_iops_plan_is_the_spec(tmp_path):
    iops = plans("pts-enterprise", "iops", tmp_path)["iops"]
    purge, wipc, rounds = iops["phases"]
    assert purge["name"] == "purge" and purge["purge"]["method"] == "file-recreate"
    # WIPC: SEQ 128 KiB writes of 2x the user capacity, at the test's TC/QD (PTS 2.0 "same as in step 2.1")
    (w,) = cells(wipc)
    assert (w["rw"], w["block_size"], w["io_bytes"]) == ("write", "128K", 2 * 64 * 2**30)
    assert (w["threads"], w["iodepth"]) == (4, 32)
    # 7 mixes (outer loop) x 8 block sizes (inner loop), 1-minute cells, 5..25 rounds; a file target has the
    # logical block of the device under its file system: on a 4096-byte one 0.5 KiB is skipped and says so
    sizes = ["1024K", "128K", "64K", "32K", "16K", "8K", "4K"] + (["0.5K"] if small_blocks(tmp_path) else [])
    if not small_blocks(tmp_path):
        assert "0.5K skipped" in iops["notes"][0]
    n = len(sizes)
    assert len(cells(rounds)) == 7 * n and (rounds["rounds_min"], rounds["rounds_max"]) == (5, 25)
    assert all(c["runtime_s"] == 60 and (c["threads"], c["iodepth"]) == (4, 32) for c in cells(rounds))
    assert [c["read_pct"] for c in cells(rounds)][::n] == [100, 95, 65, 50, 35, 5, 0]
    assert [c["block_size"] for c in cells(rounds)][:n] == sizes
    assert rounds["seconds_max"] == 25 * 7 * n * 60         # the ~20 h a user must know before starting


def test_pts_client_iops_and_throughput_plan(tmp_path):
    p = plans("pts-client", "iops,throughput", tmp_path)
    rounds = p["iops"]["phases"][2]
    assert all((c["threads"], c["iodepth"]) == (2, 16) for c in cells(rounds))
    tp = p["throughput"]["phases"]
    assert [ph["name"] for ph in tp] == ["purge", "precondition", "rounds"]        # PTS-C: 1024 KiB only
    assert cells(tp[1])[0]["block_size"] == "1024K"                                 # WIPC at the test block size


def test_latency_plan_runs_tc1_qd1_and_8_4_05_order(tmp_path):
    rounds = plans("pts-enterprise", "latency", tmp_path)["latency"]["phases"][2]
    assert all((c["threads"], c["iodepth"]) == (1, 1) for c in cells(rounds))
    assert [c["block_size"] for c in cells(rounds)][:2] == ["8K", "4K"]   # 8 -> 4 (-> 0.5 on 512-byte drives)


def test_plan_text_names_durations_and_writes_nothing(tmp_path):
    out = ssdpts("plan", str(tmp_path / "x.img"), "--size", "8G", "--profile", "pts-enterprise",
                 "--tests", "iops").stdout
    # 25 rounds x 7 mixes x 7 block sizes (8 with 0.5 KiB on a 512-byte device) x 1 min
    assert ("23 h 20 min" if small_blocks(tmp_path) else "20 h 25 min") in out
    assert "nothing is written" in out and "WIPC" in out
    assert list(tmp_path.iterdir()) == []


def test_build_plans_reads_the_purge_it_would_use(tmp_path):
    target = open_target(str(tmp_path / "y.img"), size=2**30)
    _, ((_, plan),) = build_plans(target, "pts-enterprise", ["iops"])
    assert plan.phases[0].purge.method == "file-recreate"
    assert plan.phases[0].purge.snia_purge is False          # a file is never a SNIA purge


@pytest.mark.device
def test_check_lists_deviations_with_evidence(loopdev, results, tiny):
    rid, _ = run_completed(loopdev, results, tiny, "iops")
    p = ssdpts("check", rid, "--results", str(results), "--json", check=False)
    assert p.returncode == 1                       # tiny runs 200 ms cells: never conformant
    verdict = json.loads(p.stdout)
    rules = {d["rule"] for d in verdict["deviations"]}
    assert not verdict["conformant"] and "duration" in rules and "purge-not-snia" in rules     # TRIM on a loop device
    for d in verdict["deviations"]:
        assert d["evidence"] and d["source"]
    shown = ssdpts("show", rid, "--results", str(results)).stdout
    assert "NOT CONFORMANT" in next(line for line in shown.splitlines() if line.startswith("conformance:"))
