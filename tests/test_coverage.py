"""LBA coverage (docs/coverage.md): every SEQ cell walks its whole slice of the active range from the slice's start,
on fio and on the simulator, and the `coverage` rule flags a cell that touched less than its I/O should.

Truths the code did not compute: the simulated drive's own mapping table (`live_bytes`: distinct LBAs holding
data on a purged drive), the offsets fio itself logs (write_iolog), and the job text fio was given."""

from __future__ import annotations

import math
import re
import subprocess

import pytest

from conftest import run_completed, ssdpts

from ssdpts._sim import SimDrive
from ssdpts.engines.coverage import access_of
from ssdpts.engines.sim import sim_cell, sim_job
from ssdpts.runresult.coverage import CellCoverage, coverage_deviations
from ssdpts.simdrive import load_params
from ssdpts.workload import Workload, render

pytestmark = pytest.mark.no_end_report    # reads no end-of-run report (tests/conftest.py)

MIB = 2**20


def _sim_run(drive: SimDrive, w: Workload, job_size_share: float = 1.0):
    """Run `w` on the simulated drive as the sim engine does; `job_size_share` < 1 narrows the job's range
    below the cell's active range (the sliver the old stream continuation cycled over)."""
    cap, lbs = drive.capacity_bytes, drive.logical_block_size
    job = sim_job(w, cap, lbs, seed=7)
    job["size"] = int(job["size"] * job_size_share) // MIB * MIB
    res = drive.run_job(job)
    res["access"] = access_of(w.rw, w.distribution)
    res["active_range"] = list(w.region(cap, lbs))
    return sim_cell(res), res["sim"]


def _drive() -> SimDrive:
    d = SimDrive(load_params("client", scale=0.05))
    d.purge()
    return d


def test_sim_seq_write_cells_cover_each_clones_whole_slice():
    drive = _drive()
    w = Workload(name="seq", rw="write", bs=MIB, threads=2, iodepth=4, range_size=0.75, runtime_s=1.0)
    offset, size = w.region(drive.capacity_bytes, drive.logical_block_size)
    cell, counters = _sim_run(drive, w)
    cov = cell.coverage
    assert cov.passes > 1.0                       # the cell moved more than the range: it must have walked it all
    # truth: the drive's mapping table holds exactly the LBAs written since the purge
    assert cov.touched_bytes == counters["live_bytes"]
    assert (cov.range_offset, cov.range_bytes) == (offset, size)
    assert size - cov.touched_bytes < 2 * MIB     # both slices whole (each rounded down to a block)
    assert cov.lowest == offset and cov.highest_end > offset + size - 2 * MIB
    assert coverage_deviations([CellCoverage("", "round", 1, "seq", cov, cov.expected_pct())]) == []


def test_sim_random_cell_covers_as_uniform_random_io_should():
    drive = _drive()
    w = Workload(name="rnd", rw="randwrite", bs=4096, threads=2, iodepth=8, range_size=0.75, runtime_s=1.0)
    cell, counters = _sim_run(drive, w)
    cov = cell.coverage
    assert cov.touched_bytes == counters["live_bytes"]
    expected = 1 - math.exp(-cov.passes)           # n I/Os over N slots leave e^(-n/N) untouched
    assert abs(cov.touched_bytes / cov.range_bytes - expected) < 0.01
    assert coverage_deviations([CellCoverage("", "round", 1, "rnd", cov, cov.expected_pct())]) == []


def test_seq_cell_on_a_sliver_of_its_range_is_a_coverage_deviation():
    drive = _drive()
    w = Workload(name="seq_1024K_100-0", rw="read", bs=MIB, iodepth=4, range_size=0.75, runtime_s=2.0)
    cell, _ = _sim_run(drive, w, job_size_share=0.1)   # the job cycles over a tenth of the range
    cov = cell.coverage
    assert cov.passes > 1.0 and cov.touched_pct < 11
    found = coverage_deviations([CellCoverage("bs=1024K", "round", 9, w.name, cov, cov.expected_pct())])
    assert [d.rule for d in found] == ["coverage"]
    assert "seq_1024K_100-0 (bs=1024K round 9)" in found[0].evidence


def test_sim_throughput_run_stores_coverage_and_is_not_short(results, tiny):
    rid, store = run_completed("sim:client", results, tiny, "throughput")
    rounds = store.rounds(rid, "throughput", "bs=128K")
    covs = [c.coverage for r in rounds for c in r.cells]
    assert covs and all(c is not None and c.source == "simulator" for c in covs)
    # every SEQ cell starts at the range's start: its lowest offset is the range's offset
    assert all(c.lowest == c.range_offset for c in covs)
    shown = ssdpts("show", rid, "--results", str(results)).stdout
    assert "coverage (simulator)" in shown and ", 0 short;" in shown
    assert "[coverage]" not in ssdpts("check", rid, "--results", str(results), check=False).stdout


def _iolog_extent(path) -> tuple[int, int, set[int]]:
    """(lowest offset, highest end, distinct 4 KiB blocks) of the reads fio logged."""
    blocks, lo, hi = set(), None, 0
    for line in path.read_text().splitlines():
        f = line.split()[-4:]            # iolog v3 lines start with a timestamp, v2 lines do not
        if len(f) == 4 and f[1] == "read":
            off, n = int(f[2]), int(f[3])
            lo = off if lo is None else min(lo, off)
            hi = max(hi, off + n)
            blocks.update(range(off // 4096, (off + n) // 4096))
    return lo, hi, blocks


def test_fio_seq_cell_walks_the_whole_active_range(loopdev, tmp_path):
    size = 64 * MIB
    w = Workload(name="seq", rw="read", bs=128 * 1024, iodepth=8, range_size=0.75, io_size=2 * size)
    job = render([w], loopdev, size, 512)
    log = tmp_path / "iolog"
    job.sections[0][1]["write_iolog"] = str(log)
    (tmp_path / "job.fio").write_text(job.text())
    subprocess.run(["fio", str(tmp_path / "job.fio"), "--output-format=json"], check=True, capture_output=True,
                   timeout=300)
    offset, length = w.region(size, 512)
    lo, hi, blocks = _iolog_extent(log)
    assert (lo, hi) == (offset, offset + length)
    assert len(blocks) * 4096 == length          # every block of the active range read


def _offsets(job_text: str, section: str) -> int:
    body = job_text.split(f"[{section}]", 1)[1].split("\n[", 1)[0]
    return int(re.search(r"^offset=(\d+)$", body, re.M).group(1))


def test_fio_throughput_seq_cells_start_at_the_range_start_every_round(loopdev, results, tiny):
    rid, store = run_completed(loopdev, results, tiny, "throughput", "--purge", "trim")
    rounds = store.rounds(rid, "throughput", "bs=128K")
    assert len(rounds) >= 2
    for name in ("seq_128K_100-0", "seq_128K_0-100"):
        assert [_offsets(r.job_text, name) for r in rounds] == [0] * len(rounds)
