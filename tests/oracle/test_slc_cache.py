"""The SLC-cache estimate against the simulator's SLC capacity: within 5 % at the default (automatic) interval
on sim:client, a full-size preset whose 2.25 GiB cache fills in 1.1 s; a 1-second interval, the seeds'
sampling, is too coarse for it and says so."""

import sys
from pathlib import Path

import pytest

from conftest import run_completed
from ssdpts.pts import registry
from ssdpts.pts.slc_cache.resolution import MAX_RESOLUTION, auto_interval, deviation, resolution
from ssdpts.realtime.timing import SLC_INTERVAL_MAX_S, SLC_INTERVAL_MIN_S
from ssdpts.simdrive import open_drive
from ssdpts.simdrive.truth import truth

sys.path.insert(0, str(Path(__file__).parent))
from oracle_truth import PROFILES  # noqa: E402

pytestmark = pytest.mark.no_end_report    # reads no end-of-run report (tests/conftest.py)

MIB, GIB = 2**20, 2**30


def true_cache() -> tuple[int, float]:
    """The fresh sim:client's SLC capacity (bytes) and SLC write speed (MiB/s: dies x SLC program unit / tPROG)."""
    d = open_drive("client")
    d.purge()
    p = d.params
    speed = d.geometry()["dies"] * p["slc_program_unit_bytes"] / (p["t_prog_slc_ns"] / 1e9) / MIB
    return truth(d).slc_capacity_bytes, speed


def slc_run(tmp_path, profile):
    rid, store = run_completed("sim:client", tmp_path, str(profile), "slc-cache")
    (t,) = store.tests(rid)
    return registry.get("slc-cache").decode(t["summary"]), [d.rule for ds in store.deviations(rid).values() for d in ds]


@pytest.mark.slow
def test_the_estimate_at_the_default_interval_is_within_5_percent_of_the_true_cache(tmp_path):
    s, rules = slc_run(tmp_path, PROFILES / "sim-oracle-slc.toml")
    cache, speed = true_cache()
    assert s.interval_auto and s.interval_s == auto_interval(16 * GIB) == SLC_INTERVAL_MIN_S
    assert s.drop_detected and s.cache_bytes == pytest.approx(cache, rel=0.05)
    assert s.cache_speed_mib_s == pytest.approx(speed, rel=0.05)
    assert s.resolution_fraction <= MAX_RESOLUTION and "slc-resolution" not in rules
    assert len(s.steps) == 3      # SLC, direct to TLC, folding while writing: the drive's speeds, no more


@pytest.mark.slow
def test_a_one_second_interval_is_too_coarse_for_this_cache_and_says_so(tmp_path):
    profile = tmp_path / "coarse.toml"
    profile.write_text(f'[profile]\nextends = "{PROFILES / "sim-oracle-slc.toml"}"\n\n[tests.slc-cache]\n'
                       'interval = "1s"\n')
    s, rules = slc_run(tmp_path / "results", profile)
    cache, _ = true_cache()
    assert abs(s.cache_bytes / cache - 1) > 0.05              # the figure the rule warns about is wrong
    assert not s.interval_auto and s.resolution_fraction > MAX_RESOLUTION and "slc-resolution" in rules


def test_the_resolution_rule_trips_above_5_percent_only():
    fine = resolution(2.25 * GIB, 2100, 0.01)         # 21 MiB per interval of a 2304 MiB cache
    assert fine.fraction == pytest.approx(21 / 2304) and deviation(fine) is None
    coarse = resolution(2.87 * GIB, 1212, 1.0)        # what a 1 s interval reported on sim:client
    dev = deviation(coarse)
    assert dev is not None and dev.rule == "slc-resolution" and "41.2 %" in dev.evidence
    assert coarse.finer_interval_s() == pytest.approx(0.05 / coarse.fraction)
    assert resolution(None, None, 1.0) is None and deviation(None) is None


def test_the_automatic_interval_scales_with_the_capacity_within_its_bounds():
    assert auto_interval(GIB) == SLC_INTERVAL_MIN_S
    assert auto_interval(500 * 10**9) == pytest.approx(500e9 * 0.0025 / 8e9)        # 156 ms
    assert auto_interval(8 * 10**12) == SLC_INTERVAL_MAX_S
