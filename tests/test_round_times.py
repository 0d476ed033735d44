"""A round's stored times on real fio: it ended when its fio wrote its results, by fio's own clock (the JSON's
timestamp_ms), not when ssdpts collected them, which on a loaded host came seconds later."""

from __future__ import annotations

import re
import time

from conftest import requires_devices
from ssdpts.engines.fio import FioEngine
from ssdpts.engines.fioread import fio_ended
from ssdpts.targets import open_target
from ssdpts.workload import Workload


def _cells(n: int) -> list[Workload]:
    return [Workload(f"c{i}", "randwrite", bs=4096, threads=1, iodepth=4, runtime_s=0.2) for i in range(n)]


@requires_devices
def test_a_rounds_end_is_when_fio_wrote_its_results(loopdev):
    target = open_target(loopdev, probe=False)
    with FioEngine().session(target) as s:
        first, second = s.submit(_cells(2)), s.submit(_cells(2))
        a = first.result()
        collected = time.time()
        b = second.result()
    for out in (a, b):
        stamps = [int(x) for x in re.findall(r'"timestamp_ms" : (\d+)', out.raw_output)]
        assert stamps and out.ended_at == max(stamps) / 1000, (out.ended_at, stamps)
        assert out.started_at - 0.001 <= out.ended_at
    assert a.ended_at <= collected
    # the block layer's view: the device's last I/O of the first round completed before its fio wrote its results
    # (fio's timestamp is in whole ms)
    assert b.device_idle_before is not None and b.device_idle_before.last_io is not None
    assert b.device_idle_before.last_io <= a.ended_at + 0.001, (b.device_idle_before, a.ended_at)


def test_without_a_time_of_this_hosts_clock_the_end_is_the_collection():
    assert fio_ended(100.0, [101.5, 102.25], 103.0) == 102.25
    assert fio_ended(100.0, [101.5, None], 103.0) == 103.0            # a process gave no time
    assert fio_ended(100.0, [7200.0], 103.0) == 103.0                 # another host's clock (fio client/server)
    assert fio_ended(100.0, [99.0], 103.0) == 103.0
    assert fio_ended(100.0, [], 103.0) == 103.0
