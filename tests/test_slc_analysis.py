"""SLC-cache step detection on synthetic bandwidth series and fio bandwidth logs with known steps."""

import json
import random

import pytest

from conftest import ssdpts
from ssdpts.analyze.slc_cache import read_bw_log
from ssdpts.pts.slc_cache.steps import estimate, find_steps

GIB = 2**30


def series(levels, dt=1.0, noise=0.0, seed=1):
    """levels: [(MiB/s, seconds)] -> (end times, MiB/s); a level change inside an interval is averaged."""
    rng = random.Random(seed)
    edges, t = [], 0.0
    for mib, secs in levels:
        edges.append((t, t + secs, mib))
        t += secs
    n = int(round(t / dt))
    times, vals = [], []
    for i in range(n):
        a, b = i * dt, (i + 1) * dt
        byts = sum(m * max(0.0, min(b, e) - max(a, s)) for s, e, m in edges)
        vals.append(byts / dt * (1 + rng.gauss(0, noise)) if noise else byts / dt)
        times.append(b)
    return times, vals


def write_log(path, times, vals, bs=1 << 20, ddir=1):
    path.write_text("".join(f"{int(round(t * 1000))}, {int(v * 1024)}, {ddir}, {bs}, 0, 0\n"
                            for t, v in zip(times, vals)))
    return path


def test_seed_000_three_steps():
    # KC2000: 2100 MiB/s for 32 s, 700 MiB/s until 11 min, then 500 MiB/s (1 s log intervals, 3 % noise)
    t, v = series([(2100, 32), (700, 660 - 32), (500, 300)], noise=0.03)
    r = estimate(t, v)
    assert len(r["steps"]) == 3
    s = r["steps"]
    assert s[0]["mib_s"] == pytest.approx(2100, rel=0.03) and s[0]["duration_s"] == pytest.approx(32, abs=1)
    assert s[1]["mib_s"] == pytest.approx(700, rel=0.03) and s[1]["end_s"] == pytest.approx(660, abs=2)
    assert s[2]["mib_s"] == pytest.approx(500, rel=0.03)
    assert r["drop_detected"] and r["first_drop_s"] == pytest.approx(32, abs=1)
    assert 64 <= r["cache_gib"] <= 67
    assert r["cache_bytes"] == pytest.approx(2100 * 32 * 2**20, rel=0.05)


@pytest.mark.parametrize("noise", [0.0, 0.05, 0.10])
def test_noisy_two_levels_with_a_drop_inside_an_interval(noise):
    t, v = series([(3000, 17.4), (900, 80)], noise=noise, seed=7)
    r = estimate(t, v)
    assert [round(s["median_mib_s"], -2) for s in r["steps"]] == pytest.approx([3000, 900], rel=0.12)
    assert r["cache_bytes"] == pytest.approx(3000 * 17.4 * 2**20, rel=0.05)
    if noise == 0:   # the straddling interval is split by its average: exact without noise
        assert r["cache_bytes"] == pytest.approx(3000 * 17.4 * 2**20, rel=1e-6)


def test_single_step_and_spikes_are_not_steps():
    t, v = series([(1500, 40), (400, 60)], dt=0.5, noise=0.02)
    v[10] = 0.0           # a one-interval stall in the cache phase
    v[150] = 1400.0       # and a one-interval burst after it
    steps = find_steps(t, v)
    assert len(steps) == 2
    r = estimate(t, v)
    assert r["cache_bytes"] == pytest.approx(1500 * 40 * 2**20, rel=0.05)


def test_no_step():
    t, v = series([(520, 120)], noise=0.08)
    r = estimate(t, v)
    assert len(r["steps"]) == 1 and r["drop_detected"] is False and r["cache_bytes"] is None
    assert "no drop" in r["note"]
    assert estimate([], [])["steps"] == []


def test_rise_before_drop_counts_all_fast_bytes():
    # a slow start (e.g. a ramp) is not a drop: the cache is everything before the first DROP
    t, v = series([(1000, 5), (2000, 20), (600, 50)])
    r = estimate(t, v)
    assert r["cache_bytes"] == pytest.approx((1000 * 5 + 2000 * 20) * 2**20, rel=0.02)


def test_fio_bw_log_files_and_cli(tmp_path):
    t, v = series([(2100, 32), (700, 628), (500, 300)], noise=0.03)
    log = write_log(tmp_path / "slc_bw.1.log", t, v)
    times, mibs, durs = read_bw_log([log])
    assert times[0] == pytest.approx(1.0) and mibs[0] == pytest.approx(v[0], rel=1e-3) and durs[0] == 1.0
    doc = json.loads(ssdpts("analyze", "slc-cache", "--bw-log", str(log), "--json").stdout)
    assert 64 <= doc["cache_gib"] <= 67 and len(doc["steps"]) == 3
    text = ssdpts("analyze", "slc-cache", "--bw-log", str(log)).stdout
    assert "cache estimate" in text and "GiB" in text
    # two jobs' logs (a read direction mixed in) are summed per interval
    half = [x / 2 for x in v]
    a = write_log(tmp_path / "a_bw.1.log", t, half)
    b = tmp_path / "b_bw.2.log"
    b.write_text(write_log(tmp_path / "tmp.log", t, half).read_text()
                 + "".join(f"{int(x * 1000) + 3}, 99999, 0, 4096, 0, 0\n" for x in t[:5]))
    doc2 = json.loads(ssdpts("analyze", "slc-cache", "--bw-log", str(a), "--bw-log", str(b), "--json").stdout)
    assert doc2["cache_bytes"] == pytest.approx(doc["cache_bytes"], rel=0.01)


def test_per_io_log_with_bins(tmp_path):
    # per-I/O samples (no log_avg_msec): 1 MiB writes, 2000/s for 10 s then 500/s for 20 s
    lines, t = [], 0.0
    for rate, secs in ((2000, 10), (500, 20)):
        for _ in range(rate * secs):
            t += 1.0 / rate
            lines.append(f"{int(t * 1000)}, 1000000, 1, 1048576, 0, 0\n")
    log = tmp_path / "perio_bw.log"
    log.write_text("".join(lines))
    doc = json.loads(ssdpts("analyze", "slc-cache", "--bw-log", str(log), "--bin", "1", "--json").stdout)
    assert doc["cache_bytes"] == pytest.approx(2000 * 10 * 2**20, rel=0.05)


def test_bad_log_is_one_line_error(tmp_path):
    bad = tmp_path / "bad.log"
    bad.write_text("hello world\n")
    p = ssdpts("analyze", "slc-cache", "--bw-log", str(bad), check=False)
    assert p.returncode == 2 and "not a fio bandwidth log line" in p.stderr
