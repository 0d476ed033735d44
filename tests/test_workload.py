"""Workload -> fio job text: the SNIA-relevant options are always there, TC = numjobs, QD = iodepth."""

import pytest

from ssdpts.workload import Workload, render


def opts(text: str, section: str) -> dict:
    out, cur = {}, None
    for line in text.splitlines():
        if line.startswith("["):
            cur = line.strip("[]")
        elif cur == section and line:
            k, _, v = line.partition("=")
            out[k] = v
    return out


def test_random_cell_options():
    w = Workload("rnd_4K_65-35", "randrw", bs=4096, read_pct=65, threads=4, iodepth=32, runtime_s=60, seed=42)
    o = opts(render([w], "/dev/x", 2**30).text(), "rnd_4K_65-35")
    assert o["numjobs"] == "4" and o["iodepth"] == "32"          # TC = numjobs, QD = iodepth
    assert o["rwmixread"] == "65"
    assert o["norandommap"] == "1" and o["randrepeat"] == "0"
    assert o["random_generator"] == "tausworthe64" and o["randseed"] == "42"
    assert o["time_based"] == "1" and o["runtime"] == "60000ms"
    assert o["lat_percentiles"] == "1" and o["percentile_list"] == "99:99.9:99.99:99.999"
    assert o["direct"] == "1"


def test_active_range_is_aligned_to_block_size():
    w = Workload("a", "randwrite", bs=1 << 20, range_size=0.75, runtime_s=1)
    o = opts(render([w], "/dev/x", 10 * 2**30 + 12345).text(), "a")
    assert int(o["size"]) % (1 << 20) == 0 and int(o["size"]) <= 0.75 * (10 * 2**30 + 12345)
    assert o["offset"] == "0"


def test_sequential_preconditioning_by_size():
    w = Workload("wipc", "write", bs=128 * 1024, io_size=2 * 2**30)
    o = opts(render([w], "/dev/x", 2**30).text(), "wipc")
    assert o["io_size"] == str(2 * 2**30) and "time_based" not in o and "norandommap" not in o


def test_composite_block_split_and_zones():
    w = Workload("cbw", "randrw", read_pct=40, bssplit=((512, 4), (4096, 67), (8192, 29)),
                 distribution="zoned:50/5:30/15:20/80", runtime_s=1)
    o = opts(render([w], "/dev/x", 2**30).text(), "cbw")
    assert o["bssplit"] == "512/4:4096/67:8192/29" and "bs" not in o
    assert o["random_distribution"] == "zoned:50/5:30/15:20/80"


def test_data_patterns():
    def pattern(p):
        return opts(render([Workload("p", "write", data_pattern=p, runtime_s=1)], "/dev/x", 2**30).text(), "p")

    assert pattern("zero")["zero_buffers"] == "1"
    assert pattern("compress50")["buffer_compress_percentage"] == "50"
    assert "dsync" == opts(render([Workload("s", "write", sync=True, runtime_s=1)], "/dev/x", 2**30).text(), "s")["sync"]


def test_invalid_descriptions_are_refused():
    with pytest.raises(ValueError):
        Workload("x", "randwrite")                       # no stop condition
    with pytest.raises(ValueError):
        Workload("x", "trimwrite", runtime_s=1)
    with pytest.raises(ValueError):
        Workload("x", "randrw", bssplit=((4096, 50),), runtime_s=1)
    with pytest.raises(ValueError):
        render([Workload("x", "write", runtime_s=1)], "/tmp/a;b", 2**30).text()


def test_round_trip_dict():
    w = Workload("rt", "randrw", read_pct=70, bssplit=((4096, 60), (8192, 40)), runtime_s=2, seed=1)
    assert Workload.from_dict(w.to_dict()) == w


def test_sequential_clones_each_get_their_own_slice():
    w = Workload("seq", "write", bs=1 << 20, threads=4, runtime_s=1)
    o = opts(render([w], "/dev/x", 64 * 2**20).text(), "seq")
    assert o["size"] == str(16 * 2**20) and o["offset_increment"] == str(16 * 2**20) and o["numjobs"] == "4"
    r = opts(render([Workload("rnd", "randwrite", threads=4, runtime_s=1)], "/dev/x", 64 * 2**20).text(), "rnd")
    assert "offset_increment" not in r and r["size"] == str(64 * 2**20)   # random clones share the range


def test_wipc_writes_twice_the_user_capacity_over_the_active_range():
    from ssdpts.pts.context import TestContext
    from ssdpts.targets.base import Target

    target = Target("block", "/dev/x", "/dev/x", 8 * 2**30)
    from ssdpts.settings import TestSettings, WipcSettings

    settings = TestSettings(active_range=75, wipc=WipcSettings(block_size=128 * 1024, multiple=2.0, threads=1))
    ctx = TestContext(run_id="", test="iops", store=None, target=target, engine=None, progress=None,
                      settings=settings)
    w = ctx.cells.wipc()
    assert w.io_size == 16 * 2**30 and w.range_size == 0.75 and w.rw == "write" and w.bs == 128 * 1024
