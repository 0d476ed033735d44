"""Every test the simulated SSD can run, its figures held against the simulator's own truth: a steady state is
declared only while the free pool is stable, each test that starts from a purge gives the same figures
whichever tests ran before it, the endurance WAF is the drive's NAND bytes over host bytes."""

import sys
from pathlib import Path

import pytest

from conftest import run_completed
from ssdpts.pts import registry
from ssdpts.simdrive import open_drive
from ssdpts.simdrive.truth import sample_job

sys.path.insert(0, str(Path(__file__).parent))
from oracle_truth import ORACLE_PROFILE, SMALL_SIM, SteadyClaim, final_drive, steady_claims  # noqa: E402

pytestmark = pytest.mark.no_end_report    # reads no end-of-run report (tests/conftest.py)

# what ran before changes these by design: they measure the drive as it is (no purge of their own)
AS_FOUND = {"surface-scan": "reads the drive as it is", "span-sweep": "starts on the drive as it is"}
# figures that depend on the drive's past by design: a purge keeps wear (as a real one does)
WITH_HISTORY = {("endurance", "days_to_eol"): "the remaining life counts the wear before the test"}
SEED = "7"


def sim_tests() -> list[str]:
    sys.path.insert(0, str(Path(__file__).parent.parent))
    from test_registry import on_the_simulated_ssd

    return on_the_simulated_ssd()


def headlines(store, run_id) -> dict[str, dict[str, float | None]]:
    out = {}
    for t in store.tests(run_id):
        spec = registry.get(t["name"])
        summary = spec.decode(t["summary"])
        out[t["name"]] = {h.key: h.value for h in (spec.headline(summary) if spec.headline else [])}
    return out


@pytest.fixture(scope="module")
def both_orders(tmp_path_factory):
    """Every test in one run in registry order, and in reverse order in another (same seed)."""
    names = sim_tests()
    runs = {}
    for order, tests in (("forward", names), ("reverse", names[::-1])):
        results = tmp_path_factory.mktemp(order)
        rid, store = run_completed(SMALL_SIM, results, str(ORACLE_PROFILE), ",".join(tests), "--seed", SEED)
        runs[order] = (rid, store, results)
    return runs


@pytest.mark.slow
def test_every_test_gives_the_same_figures_in_any_order(both_orders):
    (a, sa, _), (b, sb, _) = both_orders["forward"], both_orders["reverse"]
    fwd, rev = headlines(sa, a), headlines(sb, b)
    assert set(fwd) == set(rev) == set(sim_tests())
    compared = 0
    for name in fwd:
        if name in AS_FOUND:
            continue
        mine = {k: v for k, v in fwd[name].items() if (name, k) not in WITH_HISTORY}
        theirs = {k: v for k, v in rev[name].items() if (name, k) not in WITH_HISTORY}
        # equal up to float rounding (a rate from counters that stand higher after other tests)
        assert mine.keys() == theirs.keys() and all(
            mine[k] == theirs[k] or mine[k] == pytest.approx(theirs[k], rel=1e-9) for k in mine), \
            f"{name}: {mine} in one order vs {theirs} in the other"
        compared += len(mine)
    assert compared > 40


@pytest.mark.slow
def test_a_steady_state_is_declared_only_while_the_free_pool_is_stable(both_orders):
    rid, store, _ = both_orders["forward"]
    claims = steady_claims(store, rid)
    assert {c.test for c in claims} >= {"iops", "throughput"}       # the check is not vacuous
    unstable = [c for c in claims if not c.pool_stable()]
    assert not unstable, unstable


def test_a_falling_pool_is_not_stable():
    """The case that must trip: the simulator's pool on a fresh drive under random writes, round by round."""
    d = open_drive("client", scale=0.0625)
    job = {"name": "w", "rw": "randwrite", "bs": 4096, "numjobs": 1, "iodepth": 8, "offset": 0,
           "size": d.capacity_bytes, "runtime_ns": 1_000_000_000, "seed": 3}
    pool = [t.free_native_blocks for t in sample_job(d, job, 0.2)]
    assert not SteadyClaim("iops", "", "rnd_4K_0-100 iops", [1, 2, 3, 4, 5], pool).pool_stable()
    assert SteadyClaim("iops", "", "rnd_4K_0-100 iops", [1, 2, 3, 4, 5], [3, 2, 2, 3, 4]).pool_stable()


@pytest.mark.slow
def test_endurance_waf_is_nand_bytes_over_host_bytes(tmp_path):
    """A fresh drive, endurance alone: its WAF (from the health polls) against the drive's counters at the end,
    and against host + GC-moved bytes (every NAND page of an aligned write is one or the other)."""
    rid, store = run_completed(SMALL_SIM, tmp_path, str(ORACLE_PROFILE), "endurance", "--seed", SEED)
    (t,) = store.tests(rid)
    s = registry.get("endurance").decode(t["summary"])
    truth = final_drive(tmp_path, rid)
    assert truth.host_write_bytes == s.fio_written_bytes > 4 * 2**30 // 4     # many fills of GC, not SLC alone
    assert truth.nand_write_bytes == truth.host_write_bytes + truth.gc_moved_bytes
    assert s.projection.waf == pytest.approx(truth.waf, rel=0.02)
    assert truth.waf > 2


@pytest.mark.slow
def test_rw_over_time_4k_is_the_same_first_or_after_another_block_size(tmp_path):
    """The symptom of issue 26: the same 4K random-write-over-time series whether it runs first or after 128K
    (each block size from its own purge)."""
    series = {}
    for sizes in (["4k"], ["128k", "4k"]):
        profile = tmp_path / f"{len(sizes)}.toml"
        profile.write_text(f'[profile]\nextends = "{ORACLE_PROFILE}"\n\n[tests.rw-over-time]\n'
                           f'block_sizes = {sizes!r}\nduration = "3s"\ninterval = "250ms"\n'.replace("'", '"'))
        rid, store = run_completed(SMALL_SIM, tmp_path / f"r{len(sizes)}", str(profile), "rw-over-time", "--seed", SEED)
        (t,) = store.tests(rid)
        runs = registry.get("rw-over-time").decode(t["summary"]).block_sizes
        series[len(sizes)] = [(p.t_s, p.mb_s) for p in runs[-1].series]
        assert runs[-1].block_size == 4096
    assert len(series[1]) == 12 and series[1] == series[2]
