"""The data the drive sees is the data the profile asks for: each data pattern written to zram as ssdpts renders it,
then zram's own accounting (mm_stat: bytes stored vs bytes after compression) and the bytes read back."""

from __future__ import annotations

import subprocess
import zlib
from dataclasses import dataclass
from pathlib import Path

import pytest

from ssdpts.workload import Workload, render
from ssdpts.workload.fio import DATA_PATTERN_OPTIONS
from ssdpts.workload.spec import DATA_PATTERN_COMPRESSED_FRACTION, DATA_PATTERNS

PAGE = 4096
SIZE = 64 * 2**20   # the zram_own device's size


@dataclass(frozen=True)
class ZramUsage:
    """The first fields of /sys/block/zramN/mm_stat (Documentation/admin-guide/blockdev/zram.rst)."""

    orig_data_size: int      # bytes written and held (same-filled pages included)
    compr_data_size: int     # those bytes after compression
    same_pages: int          # pages held as one repeated word (zeros), no memory used
    huge_pages: int          # pages that did not compress enough and are held uncompressed

    @classmethod
    def of(cls, dev: str) -> "ZramUsage":
        f = [int(x) for x in Path(f"/sys/block/{Path(dev).name}/mm_stat").read_text().split()]
        return cls(orig_data_size=f[0], compr_data_size=f[1], same_pages=f[5], huge_pages=f[7])


def write_pass(dev: str, pattern: str, tmp_path: Path) -> None:
    """One sequential pass of 4 KiB writes over the whole device, rendered by ssdpts as a test cell would be."""
    w = Workload("pass", "write", bs=PAGE, iodepth=16, io_size=SIZE, data_pattern=pattern)
    job = tmp_path / "pass.fio"
    job.write_text(render([w], dev, SIZE).text())
    subprocess.run(["fio", "--output-format=terse", str(job)], check=True, capture_output=True, timeout=120)


def test_every_pattern_has_fio_options():
    assert set(DATA_PATTERN_OPTIONS) == set(DATA_PATTERNS)
    assert DATA_PATTERN_OPTIONS["random"]["refill_buffers"] == "1"


@pytest.mark.parametrize("pattern", DATA_PATTERNS)
def test_zram_stores_each_pattern_as_declared(zram_own, pattern, tmp_path):
    write_pass(zram_own, pattern, tmp_path)
    usage = ZramUsage.of(zram_own)
    assert usage.orig_data_size == SIZE, usage
    kept = usage.compr_data_size / usage.orig_data_size
    assert kept == pytest.approx(DATA_PATTERN_COMPRESSED_FRACTION[pattern], abs=0.1), usage
    if pattern == "random":
        assert usage.huge_pages == SIZE // PAGE, usage       # not one page compressed enough to be kept so
    if pattern == "zero":
        assert usage.same_pages == SIZE // PAGE and usage.compr_data_size == 0, usage


def test_random_pages_share_nothing(zram_own, tmp_path):
    """fio's default buffers (written once, then scrambled) repeat the same 16-byte stamp in every 512-byte
    sector of a write (zlib keeps ~3850 of 4096 bytes) and a page differs from earlier writes in those stamps
    only; `random` must leave neither for a compressing or deduplicating drive to find. (fio's generator makes
    each 8-byte word the previous one times a constant, so the words of a page share the seed's trailing zero
    bits: a few pages in a hundred give zlib 2-10 %; docs/studies.md.)"""
    write_pass(zram_own, "random", tmp_path)
    with open(zram_own, "rb") as f:
        pages = [f.read(PAGE) for _ in range(1024)]
    assert len(set(pages)) == len(pages)
    assert all(len({p[i:i + 16] for i in range(0, PAGE, 16)}) == PAGE // 16 for p in pages)
    kept = sum(len(zlib.compress(p, 1)) for p in pages) / len(pages)
    assert kept >= 0.99 * PAGE, kept
