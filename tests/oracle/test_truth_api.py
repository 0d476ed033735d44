"""The simulator's ground truth through its Python API (ssdpts.simdrive.truth), checked against the drive's own
geometry and against what was asked of it, and a purge returning the exact fresh state."""

import pytest

from ssdpts.simdrive import list_presets, open_drive
from ssdpts.simdrive.truth import DriveTruth, sample_job, truth, waf_between

SMALL = 0.0625    # 1/16 of each preset's capacity and SLC cache: geometry and timing stay


def write_job(drive, rw: str, bs: int, seconds: float, **kw) -> dict:
    return {"name": "w", "rw": rw, "bs": bs, "numjobs": 1, "iodepth": 8, "offset": 0, "size": drive.capacity_bytes,
            "runtime_ns": int(seconds * 1e9), "seed": 11, **kw}


def test_a_new_drive_reads_empty_with_its_whole_cache_and_pool():
    d = open_drive("client", scale=SMALL)
    t, g = truth(d), d.geometry()
    assert isinstance(t, DriveTruth) and t.waf is None
    assert (t.host_write_bytes, t.nand_write_bytes, t.gc_moved_bytes, t.slc_used_bytes, t.live_bytes) == (0,) * 5
    assert t.free_native_blocks == g["native_superblocks"] and t.free_blocks == t.total_blocks
    slc_superblock = g["slc_pages_per_superblock"] * 4096
    assert t.slc_capacity_bytes == (g["static_slc_superblocks"] + g["dynamic_slc_max_superblocks"]) * slc_superblock
    assert t.slc_capacity_bytes >= d.params["slc_static_bytes"] + d.params["slc_dynamic_max_bytes"] - slc_superblock


def test_sampled_over_a_sequential_write_the_cache_fills_then_the_pool_holds_at_the_gc_threshold():
    d = open_drive("client", scale=SMALL)
    cache = truth(d).slc_capacity_bytes
    samples = sample_job(d, write_job(d, "write", 1 << 20, 3.0), 0.01)
    written = [s.host_write_bytes for s in samples]
    assert written == sorted(written) and written[-1] == d.capacity_bytes      # one pass, continued slice by slice
    filling = [s for s in samples if s.host_write_bytes < cache]
    assert filling and all(s.slc_used_bytes == s.host_write_bytes for s in filling)   # every byte lands in SLC first
    assert max(s.slc_used_bytes for s in samples) <= cache
    pool = [s.free_native_blocks for s in samples]
    assert pool[0] > pool[-1] and pool[-1] <= d.params["gc_threshold_blocks"] + 1


def test_true_waf_is_nand_over_host_bytes_and_gc_moves_are_the_difference():
    d = open_drive("client", scale=SMALL)
    d.run_job(write_job(d, "write", 1 << 20, 10.0, io_size=d.capacity_bytes))
    before = truth(d)
    d.run_job(write_job(d, "randwrite", 4096, 5.0, iodepth=32))
    after = truth(d)
    host = after.host_write_bytes - before.host_write_bytes
    moved = after.gc_moved_bytes - before.gc_moved_bytes
    assert host > d.capacity_bytes // 4 and moved > 0
    # aligned 4 KiB writes: every NAND page is a host page or a GC move (folding included)
    waf = waf_between(before, after)
    assert waf == pytest.approx((host + moved) / host, rel=1e-12) and waf > 1.5


def test_idle_time_is_what_the_host_left_idle():
    d = open_drive("client", scale=SMALL)
    d.idle(2.5)
    d.run_job(write_job(d, "randwrite", 4096, 0.5, thinktime_ns=1_000_000, thinktime_iotime_ns=100_000_000))
    t = truth(d)
    assert 2.5 < t.idle_s < 2.5 + 0.5 and t.clock_s == pytest.approx(3.0, abs=0.01)


@pytest.mark.parametrize("preset", list_presets())
def test_a_purged_drive_is_a_new_drive(preset):
    """Purge returns the exact fresh state (wear, lifetime counters and the clock aside, as on a real drive), so
    the same job after it gives the same result whatever ran before."""
    new, used = open_drive(preset, scale=SMALL), open_drive(preset, scale=SMALL)
    used.run_job(write_job(used, "randwrite", 65536, 4.0))
    used.run_job(write_job(used, "randrw", 4096, 1.0, rwmixread=50))
    used.idle(1.0)
    used.trim(0, used.capacity_bytes // 2)
    used.purge()
    worn = truth(used)
    assert used.performance_state() == new.performance_state()
    assert used.snapshot() != new.snapshot()                     # what differs is only what a purge keeps:
    assert worn.erase_count_total > 0 and worn.nand_write_bytes > 0 and worn.idle_s > 0 and worn.clock_s > 0
    probe = write_job(new, "randwrite", 4096, 1.0, log_interval_ns=100_000_000)
    a, b = new.run_job(probe), used.run_job(probe)
    assert a["intervals"] == b["intervals"] and a["write"]["lat_ns"] == b["write"]["lat_ns"]


def test_a_used_drive_that_is_not_purged_is_not_a_new_drive():
    """The case that must trip the comparison: any state left behind shows."""
    new, used = open_drive("client", scale=SMALL), open_drive("client", scale=SMALL)
    used.run_job(write_job(used, "randwrite", 4096, 0.2))
    used.trim(0, used.capacity_bytes)           # no data left, but blocks, GC and the random stream moved on
    assert truth(used).live_bytes == 0
    assert used.performance_state() != new.performance_state()
