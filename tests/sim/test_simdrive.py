"""Verification tests for the simulated SSD (ssdpts._sim + ssdpts.simdrive)."""
import math
import re

import pytest

from ssdpts.simdrive import SCHEMA, list_presets, load_params

_sim = pytest.importorskip("ssdpts._sim")
SimDrive = _sim.SimDrive

GIB = 1 << 30
KIB = 1 << 10


def wa_params(op_percent: float, user_gib: float = 2.0) -> dict:
    """Drive for WA tests: 4 dies x 1 MiB blocks -> 1024 pages/superblock, no SLC."""
    return load_params("enterprise", overrides={
        "capacity.user_gib": user_gib,
        "capacity.op_percent": op_percent,
        "geometry.channels": 2,
        "geometry.dies_per_channel": 2,
        "geometry.block_kib": 1024,
        "slc_cache.static_mib": 0,
        "slc_cache.dynamic_max_mib": 0,
        "gc.idle_delay_ms": 1e6,
    })


def lambert_w0(x: float) -> float:
    """Independent Python implementation (Newton) to cross-check the Rust one."""
    w = -0.5 if x < 0 else math.log1p(x)
    for _ in range(200):
        ew = math.exp(w)
        f = w * ew - x
        dw = f / (ew * (w + 1) + 1e-300)
        w -= dw
        if abs(dw) < 1e-15:
            break
    return w


def greedy_wa(alpha: float) -> float:
    return alpha / (alpha + lambert_w0(-alpha * math.exp(-alpha)))


def seq_fill(d, times=1.0, bs=128 * KIB, qd=32):
    cap = d.capacity_bytes
    return d.run_job(dict(rw="write", bs=bs, iodepth=qd, io_size=int(cap * times) // bs * bs))


def wa_between(c0, c1):
    return (c1["nand_write_bytes"] - c0["nand_write_bytes"]) / (c1["host_write_bytes"] - c0["host_write_bytes"])


# --------------------------------------------------------------------------- loader

def test_presets_load_and_build():
    assert set(list_presets()) >= {"client", "enterprise", "sata-mlc"}
    for name in list_presets():
        p = load_params(name)
        assert p["name"] == name and p["source"].endswith(f"{name}.toml")
        d = SimDrive(p)
        assert 8 * GIB <= d.capacity_bytes <= 16 * GIB
        assert d.logical_block_size in (512, 4096)
    assert load_params("sim:client") == load_params("client")
    small = SimDrive(load_params("client", scale=0.25))
    assert small.capacity_bytes == 4 * GIB


def test_schema_covers_rust_params():
    rust_keys = {k[0] for k in _sim.PARAM_KEYS}
    assert {k.target for k in SCHEMA} == rust_keys


@pytest.mark.parametrize("body, key", [
    ("base = 'client'\n[geometry]\nchannels = 'four'\n", "geometry.channels"),
    ("base = 'client'\n[geometry]\nchanels = 4\n", "geometry.chanels"),
    ("base = 'client'\n[timing]\nt_prog_us = -5\n", "timing.t_prog_us"),
    ("base = 'nope'\n", "base"),
    ("base = 'client'\n[capacity]\nlogical_block_size = 1024\n", "capacity.logical_block_size"),
    ("base = 'client'\n[geometry]\nprogram_unit_kib = 40\n", "geometry.program_unit_kib"),
    ("base = 'client'\nfoo = 1\n", "foo"),
    ("name = 'x'\n[capacity]\nuser_gib = 4\n", "logical_block_size"),
    ("base = 'client'\nscale = 0\n", "scale"),
])
def test_load_params_errors_name_file_and_key(tmp_path, body, key):
    f = tmp_path / "mydrive.toml"
    f.write_text(body)
    with pytest.raises(ValueError) as ei:
        load_params(str(f))
    msg = str(ei.value)
    assert "\n" not in msg
    assert str(f) in msg and key in msg, msg


def test_load_params_user_toml_with_base(tmp_path):
    f = tmp_path / "d.toml"
    f.write_text("base = 'client'\nname = 'mine'\n[capacity]\nop_percent = 12.5\n")
    p = load_params(f)
    assert p["name"] == "mine" and p["op_percent"] == 12.5
    assert p["t_prog_ns"] == load_params("client")["t_prog_ns"]
    with pytest.raises(ValueError, match="unknown simulator preset 'nope'.*allowed"):
        load_params("nope")


def test_simdrive_rejects_bad_params_and_jobs():
    p = load_params("client", scale=0.25)
    with pytest.raises(ValueError, match="missing parameter 't_prog_ns'"):
        SimDrive({k: v for k, v in p.items() if k != "t_prog_ns"})
    with pytest.raises(ValueError, match="bits_per_cell"):
        SimDrive(dict(p, bits_per_cell=9))
    d = SimDrive(p)
    bad = [
        dict(rw="randwrite", bs=4096),  # no runtime / io_size
        dict(rw="scramble", bs=4096, io_size=4096),
        dict(rw="randwrite", bs=4096, io_size=4096, iodeph=4),
        dict(rw="randwrite", bssplit=[[4096, 50], [8192, 40]], io_size=4096),
        dict(rw="randwrite", bs=4096, io_size=4096, offset=d.capacity_bytes),
    ]
    for job in bad:
        with pytest.raises(ValueError):
            d.run_job(job)


# --------------------------------------------------------------------------- API shape

def test_result_dict_is_fio_shaped():
    d = SimDrive(load_params("client", scale=0.25))
    r = d.run_job(dict(name="j1", rw="randrw", rwmixread=70, bssplit=[[4096, 60], [65536, 40]], numjobs=2,
                       iodepth=4, runtime_ns=50_000_000, log_interval_ns=10_000_000, percentiles=[50, 99, 99.9]))
    assert r["jobname"] == "j1" and r["usr_cpu"] == 0.0 and r["sys_cpu"] == 0.0
    assert abs(r["job_runtime"] - 50) <= 1
    for dname in ("read", "write"):
        D = r[dname]
        assert set(D) >= {"io_bytes", "bw_bytes", "iops", "runtime", "total_ios", "lat_ns"}
        lat = D["lat_ns"]
        assert set(lat) >= {"min", "max", "mean", "stddev", "N", "percentile", "bins"}
        assert lat["N"] == D["total_ios"] > 0
        assert sum(lat["bins"].values()) == D["total_ios"]
        assert list(lat["percentile"]) == ["50.000000", "99.000000", "99.900000"]
        assert lat["min"] <= lat["mean"] <= lat["max"]
        # percentiles recomputed from the bins the way fio does
        bins = sorted((int(k), v) for k, v in lat["bins"].items())
        for p, val in lat["percentile"].items():
            need = float(p) / 100 * lat["N"]
            acc = 0
            for k, v in bins:
                acc += v
                if acc >= need:
                    assert val == k
                    break
    assert 0.6 < r["read"]["total_ios"] / (r["read"]["total_ios"] + r["write"]["total_ios"]) < 0.8
    iv = r["intervals"]
    assert len(iv) in (5, 6) and iv[0]["t_ns"] == 10_000_000  # + drain after runtime
    assert sum(i["read_ios"] for i in iv) == r["read"]["total_ios"]
    assert set(iv[0]) == {"t_ns", "read_ios", "write_ios", "read_bytes", "write_bytes", "lat_mean_ns", "lat_max_ns"}
    c = d.counters()
    for k in ("host_write_bytes", "host_read_bytes", "nand_write_bytes", "waf", "erase_count_total",
              "erase_count_avg", "erase_count_max", "wear_percent", "free_blocks", "total_blocks",
              "slc_used_bytes", "slc_capacity_bytes", "clock_ns", "power_on_ns"):
        assert k in c and k in r["sim"]
    assert c["host_write_bytes"] == r["write"]["io_bytes"]


def test_fio_bucket_values():
    # fio's json+ bin keys: values < 128 exact, then 64 buckets per power of two
    d = SimDrive(load_params("client", scale=0.25))
    r = d.run_job(dict(rw="randwrite", bs=4096, iodepth=1, io_size=4096 * 100))
    lat = r["write"]["lat_ns"]
    (k, v), = lat["bins"].items()
    lat_ns = lat["min"]
    msb = lat_ns.bit_length() - 1
    eb = msb - 6
    idx = ((eb + 1) << 6) + ((lat_ns >> eb) & 63)
    base = 1 << ((idx >> 6) - 1 + 6)
    assert int(k) == base + int(((idx % 64) + 0.5) * (1 << ((idx >> 6) - 1)))
    assert v == 100


def test_determinism_same_seed_identical():
    def run():
        d = SimDrive(load_params("client", scale=0.25))
        seq_fill(d, 0.3)
        out = [d.run_job(dict(rw="randrw", bs=4096, numjobs=3, iodepth=8, runtime_ns=100_000_000, seed=7,
                              log_interval_ns=20_000_000))]
        d.idle(0.5)
        out.append(d.run_job(dict(rw="randwrite", bssplit=[[4096, 70], [131072, 30]], iodepth=16,
                                  zones=[[80, 20], [20, 80]], io_size=64 << 20, seed=3)))
        return out, d
    a, da = run()
    b, db = run()
    assert a == b
    # snapshot / restore continues bit-identically
    blob = da.snapshot()
    dc = SimDrive.restore(blob)
    assert dc.counters() == da.counters()
    j = dict(rw="randwrite", bs=4096, iodepth=32, io_size=32 << 20, seed=11)
    assert da.run_job(j) == dc.run_job(j)
    dc.check_invariants()
    with pytest.raises(ValueError):
        SimDrive.restore(b"garbage")
    j = dict(rw="randrw", bs=4096, io_size=1 << 20)
    c = SimDrive(load_params("client", scale=0.25)).run_job(dict(j, seed=8))
    c2 = SimDrive(load_params("client", scale=0.25)).run_job(dict(j, seed=9))
    assert c["read"]["total_ios"] != c2["read"]["total_ios"]


# --------------------------------------------------------------------------- write amplification

def test_lambert_w_and_formula():
    for x in (-0.36787944, -0.3, -0.1, 0.0, 0.5, 3.0):
        assert abs(_sim.lambert_w0(x) - lambert_w0(x)) < 1e-9
    assert abs(greedy_wa(1.07) - 7.817) < 0.01
    assert abs(_sim.greedy_wa(1.28) - greedy_wa(1.28)) < 1e-9


@pytest.mark.parametrize("op", [7.0, 12.5, 28.0, 50.0])
def test_wa_uniform_random_matches_greedy(op):
    d = SimDrive(wa_params(op))
    assert d.geometry()["pages_per_superblock"] >= 1000
    cap = d.capacity_bytes
    seq_fill(d)
    job = dict(rw="randwrite", bs=4096, iodepth=32, numjobs=1)
    d.run_job(dict(job, io_size=3 * cap, seed=1))
    c0 = d.counters()
    d.run_job(dict(job, io_size=3 * cap, seed=2))
    wa = wa_between(c0, d.counters())
    expect = greedy_wa(1 + op / 100)
    print(f"OP {op}%: WA {wa:.3f} analytic {expect:.3f}")
    assert abs(wa / expect - 1) < 0.03


def test_sequential_overwrite_wa_exactly_one():
    d = SimDrive(wa_params(7.0, 1.0))
    seq_fill(d)
    c0 = d.counters()
    seq_fill(d, 2.0, bs=256 * KIB, qd=4)
    c1 = d.counters()
    assert c1["nand_write_bytes"] - c0["nand_write_bytes"] == c1["host_write_bytes"] - c0["host_write_bytes"]
    assert c1["gc_moved_bytes"] == 0


def test_trim_effective_op():
    op = 7.0
    d = SimDrive(wa_params(op, 1.0))
    cap = d.capacity_bytes
    seq_fill(d)
    keep = cap // 8 * 5
    d.trim(keep, cap - keep)
    assert d.counters()["live_bytes"] == keep
    job = dict(rw="randwrite", bs=4096, iodepth=32, size=keep)
    d.run_job(dict(job, io_size=3 * keep, seed=1))
    c0 = d.counters()
    d.run_job(dict(job, io_size=3 * keep, seed=2))
    wa = wa_between(c0, d.counters())
    alpha = (cap * (1 + op / 100)) / keep  # spare = physical - live data
    assert abs(wa / greedy_wa(alpha) - 1) < 0.03, (wa, greedy_wa(alpha))


# --------------------------------------------------------------------------- timing

def test_fresh_iops_match_closed_form():
    p = load_params("enterprise", scale=0.25)
    d = SimDrive(p)
    r = d.run_job(dict(rw="randwrite", bs=4096, iodepth=64, numjobs=4, runtime_ns=300_000_000))
    dies = p["channels"] * p["dies_per_channel"]
    nand = dies * p["native_program_unit_bytes"] / 4096 / p["t_prog_ns"] * 1e9
    chan = p["channels"] * 1e9 / (4096 * 1000 // p["channel_mb_s"])
    ctrl = 1e9 / p["ctrl_cmd_ns"]
    link = 1e9 / (4096 * 1000 // p["link_mb_s"])
    cf = min(nand, chan, ctrl, link)
    assert abs(r["write"]["iops"] / cf - 1) < 0.02, (r["write"]["iops"], cf)
    # SATA drive: controller-limited random reads, link-limited sequential reads
    p = load_params("sata-mlc", scale=0.25)
    d = SimDrive(p)
    seq_fill(d)
    r = d.run_job(dict(rw="randread", bs=4096, iodepth=32, runtime_ns=300_000_000))
    assert abs(r["read"]["iops"] / (1e9 / p["ctrl_cmd_ns"]) - 1) < 0.02
    r = d.run_job(dict(rw="read", bs=128 * KIB, iodepth=32, runtime_ns=300_000_000))
    assert abs(r["read"]["bw_bytes"] / (p["link_mb_s"] * 1e6) - 1) < 0.02


# --------------------------------------------------------------------------- client behaviours

def test_slc_knee_at_exported_cache_size_and_three_steps():
    d = SimDrive(load_params("client", scale=0.5))
    cap = d.capacity_bytes
    slc = d.counters()["slc_capacity_bytes"]
    r = d.run_job(dict(rw="write", bs=128 * KIB, iodepth=32, io_size=cap, log_interval_ns=20_000_000))
    iv = r["intervals"][:-1]
    bw = [i["write_bytes"] for i in iv]
    cum, knee = 0, None
    for i in iv:
        if knee is None and i["write_bytes"] < 0.8 * bw[0]:
            knee = cum
        cum += i["write_bytes"]
    step = bw[0] * 1.0  # bytes per interval at SLC speed
    assert knee is not None and abs(knee - slc) <= step, (knee, slc)
    # three levels: SLC > direct-to-TLC > folding-while-writing
    slc_bw = bw[1]
    tlc_bw = bw[len(bw) // 2]
    fold_bw = sorted(bw[-20:])[10]
    assert slc_bw > 2.0 * tlc_bw and tlc_bw > 1.4 * fold_bw, (slc_bw, tlc_bw, fold_bw)


def test_wsat_cliff_fresh_much_faster_than_steady():
    d = SimDrive(load_params("client", scale=0.25))
    cap = d.capacity_bytes
    r = d.run_job(dict(rw="randwrite", bs=4096, iodepth=32, numjobs=4, io_size=cap, log_interval_ns=50_000_000))
    fresh = r["intervals"][0]["write_ios"] / 0.05
    d.run_job(dict(rw="randwrite", bs=4096, iodepth=32, numjobs=4, io_size=cap))
    steady = d.run_job(dict(rw="randwrite", bs=4096, iodepth=32, numjobs=4, runtime_ns=2_000_000_000))
    assert fresh > 5 * steady["write"]["iops"], (fresh, steady["write"]["iops"])
    assert steady["sim"]["free_blocks"] <= 16 + 4 + 2


def test_smaller_active_range_gives_higher_steady_iops():
    res = {}
    for frac in (1.0, 0.75, 0.5):
        d = SimDrive(load_params("client", scale=0.25))
        cap = d.capacity_bytes
        seq_fill(d)
        size = int(cap * frac) // 4096 * 4096
        job = dict(rw="randwrite", bs=4096, iodepth=32, numjobs=4, size=size)
        d.run_job(dict(job, io_size=int(1.5 * size) // 4))
        res[frac] = d.run_job(dict(job, runtime_ns=2_000_000_000))["write"]["iops"]
    assert res[1.0] < res[0.75] < res[0.5], res


def test_hir_burst_iops_grow_with_idle_time():
    d = SimDrive(load_params("client"))
    cap = d.capacity_bytes
    seq_fill(d, 2.0)
    job = dict(rw="randwrite", bs=4096, iodepth=32, numjobs=4)
    d.run_job(dict(job, io_size=cap // 2))
    for _ in range(3):
        d.run_job(dict(job, runtime_ns=5_000_000_000))
    means = []
    for idle in (0, 5, 10, 15, 25):
        vals = []
        for _ in range(3):
            d.idle(idle)
            vals.append(d.run_job(dict(job, runtime_ns=5_000_000_000))["write"]["iops"])
        means.append(sum(vals) / len(vals))
    print("HIR", [round(m) for m in means])
    assert all(b >= a for a, b in zip(means, means[1:])), means
    assert means[-1] > 1.5 * means[0]


def test_purge_trim_idle_counters():
    d = SimDrive(load_params("client", scale=0.25))
    seq_fill(d, 0.5)
    c = d.counters()
    assert c["live_bytes"] == d.capacity_bytes // 2
    assert c["slc_used_bytes"] > 0
    d.idle(30)  # folding of SLC data to TLC
    c2 = d.counters()
    assert c2["clock_ns"] >= c["clock_ns"] + 30e9
    assert c2["slc_used_bytes"] < c["slc_used_bytes"]
    assert c2["nand_write_bytes"] > c["nand_write_bytes"]
    d.trim(0, d.capacity_bytes)
    assert d.counters()["live_bytes"] == 0
    d.purge()
    c3 = d.counters()
    assert c3["free_blocks"] == c3["total_blocks"] and c3["slc_used_bytes"] == 0
    assert c3["host_write_bytes"] == c2["host_write_bytes"]  # lifetime counters kept
    assert c3["erase_count_total"] > c2["erase_count_total"]
    d.check_invariants()
    # fresh again: SLC speed
    r = d.run_job(dict(rw="randwrite", bs=4096, iodepth=32, numjobs=4, runtime_ns=100_000_000))
    assert r["write"]["iops"] > 250_000  # the KC2000's fresh 289 K (controller-limited), not ~20 K steady


def test_thinktime_iotime():
    d = SimDrive(load_params("enterprise", scale=0.25))
    r = d.run_job(dict(rw="randwrite", bs=4096, iodepth=4, runtime_ns=1_000_000_000,
                       thinktime_ns=90_000_000, thinktime_iotime_ns=10_000_000, log_interval_ns=10_000_000))
    # 10 periods of 10 ms I/O + 90 ms think: ~10 % of the unthrottled I/O count
    full = SimDrive(load_params("enterprise", scale=0.25)).run_job(
        dict(rw="randwrite", bs=4096, iodepth=4, runtime_ns=1_000_000_000))
    ratio = r["write"]["total_ios"] / full["write"]["total_ios"]
    assert 0.08 < ratio < 0.12, ratio
    idle = [i for i in r["intervals"] if i["write_ios"] == 0]
    assert len(idle) >= 60
