"""Continuous jobs cut into rounds from fio's periodic status (engines/fio.py `intervals`): real fio on a loop
device. No time is lost between rounds, and a round in which the device delivered nothing is a round of
0 IOPS, not a missing round (a drive that stalls for a whole interval during garbage collection is a result)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import requires_devices
from ssdpts.engines.fio import FioEngine
from ssdpts.targets import open_target
from ssdpts.workload import Workload

pytestmark = pytest.mark.device


@requires_devices
def test_slices_without_io_are_rounds_of_zero_and_no_time_is_lost(loopdev):
    # one 4 KiB write, then 1.3 s of think time: most 0.5 s slices see no I/O at all
    cell = Workload("think", "randwrite", bs=4096, iodepth=1, runtime_s=4.0, thinktime_us=1_300_000)
    target = open_target(loopdev, probe=False)
    with FioEngine().session(target) as s:
        r = s.submit([cell], tag="think", interval_s=0.5)
        slices = list(r.intervals())
        out = r.result()
    total_ms = out.cells[0].runtime_ms
    assert any(iv.result.write.ios == 0 for iv in slices), "no slice without I/O was reported"
    assert all(iv.duration_ms > 0 for iv in slices)
    # every slice starts where the previous one ended; only a last piece without I/O shorter than half a
    # slice may be left out (fio's final report comes a few ms after its last periodic one)
    assert all(b.start_ms == pytest.approx(a.start_ms + a.duration_ms) for a, b in zip(slices, slices[1:]))
    covered = slices[-1].start_ms + slices[-1].duration_ms
    assert total_ms - 250 <= covered <= total_ms
    assert sum(iv.result.write.ios for iv in slices) == out.cells[0].write.ios


def _written_sectors(dev: str) -> int:
    """Sectors the block layer completed as writes on `dev` (/sys/block/DEV/stat, field 7)."""
    return int(Path(f"/sys/block/{Path(dev).name}/stat").read_text().split()[6])


@requires_devices
def test_a_streamed_write_stores_every_byte_fio_and_the_block_layer_count(loop_factory):
    """The slc-cache study's write shape (1 MiB SEQ at QD32, 100 ms slices over the whole device), run several
    times: the last piece after fio's last status document came short of its I/O count (fio adds a batch's
    bytes after its I/Os) and was dropped in about 1 run of 4 beside two busy loops. The truths are fio's own
    final document and the block layer's write sectors, not the slices."""
    dev = loop_factory(128 * 2**20)
    target = open_target(dev, probe=False)
    cell = Workload("tail", "write", bs=2**20, iodepth=32, io_size=128 * 2**20, runtime_s=30.0)
    for attempt in range(4):
        before = _written_sectors(dev)
        with FioEngine().session(target) as s:
            r = s.submit([cell], tag="tail", interval_s=0.1)
            slices = list(r.intervals())
            out = r.result()
        fio_final = out.cells[0].write
        assert fio_final.bytes == 128 * 2**20
        assert (_written_sectors(dev) - before) * 512 == fio_final.bytes
        assert sum(iv.result.write.bytes for iv in slices) == fio_final.bytes, (attempt, [
            iv.result.write.bytes for iv in slices])
        assert sum(iv.result.write.ios for iv in slices) == fio_final.ios
