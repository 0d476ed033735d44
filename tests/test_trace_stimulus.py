"""`ssdpts run --trace-stimulus` (docs/coverage.md): each fio cell's LBA coverage read from the device's block
completions through a tracefs instance of its own.

Truth the code did not compute: the offsets fio itself logs (`write_iolog`, added to every job section by a fio
wrapper that then runs the real fio), fio's own byte counts, and the job's active range from the job text."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import sys
from pathlib import Path

import pytest
from conftest import requires_devices, run_completed, ssdpts
from test_resume_truth import _never_steady, _stop_after_rounds

from ssdpts.engines.coverage import SEQUENTIAL
from ssdpts.engines.fio import FioEngine
from ssdpts.engines.tracecoverage import _CellTrace, check_traceable, parse_completion
from ssdpts.errors import SsdptsError
from ssdpts.runresult.coverage import CellCoverage, coverage_deviations
from ssdpts.store import Store
from ssdpts.targets import open_target
from ssdpts.workload import Workload

MIB = 2**20
BLOCK = 4096

# Runs the real fio on a job file to which it added `write_iolog=DIR/SECTION.iolog` in every job section; with
# SHRINK_SIZE set, it also cuts every job's size to a tenth: the job then cycles over a sliver of its range.
WRAPPER = """#!{python}
import os, re, sys
args = sys.argv[1:]
if args and args[-1].endswith(".fio"):
    text = open(args[-1]).read()
    text = re.sub(r"^\\[(?!global\\])(.+)\\]$", lambda m: m.group(0) + "\\nwrite_iolog={out}/" + m.group(1) + ".iolog",
                  text, flags=re.M)
    if os.environ.get("SHRINK_SIZE"):
        text = re.sub(r"^size=(\\d+)$", lambda m: "size=%d" % (int(m.group(1)) // 10 // 2**20 * 2**20), text, flags=re.M)
    open(args[-1], "w").write(text)
os.execv({fio!r}, [{fio!r}] + args)
"""


@pytest.fixture
def logging_fio(tmp_path) -> tuple[str, Path]:
    out = tmp_path / "iologs"
    out.mkdir()
    path = tmp_path / "fio"
    path.write_text(WRAPPER.format(python=sys.executable, out=out, fio=shutil.which("fio")))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path), out


def iolog_truth(path: Path) -> tuple[int, int, int, int, int]:
    """(distinct bytes touched in 4 KiB blocks, bytes moved, lowest offset, highest end, I/Os) from fio's log."""
    blocks, moved, lo, hi, ios = set(), 0, None, 0, 0
    for line in path.read_text().splitlines():
        f = line.split()[-4:]            # iolog v3 lines start with a timestamp
        if len(f) == 4 and f[1] in ("read", "write"):
            off, n = int(f[2]), int(f[3])
            blocks.update(range(off // BLOCK, (off + n) // BLOCK))
            moved, ios = moved + n, ios + 1
            lo, hi = off if lo is None else min(lo, off), max(hi, off + n)
    return len(blocks) * BLOCK, moved, lo, hi, ios


def _traced_round(device: str, fio: str, cells: list[Workload]):
    engine = FioEngine(binary=fio)
    engine.trace_stimulus = True
    with engine.session(open_target(device)) as session:
        return session.submit(cells).result()


def _cells() -> list[Workload]:
    # size-bound cells: the successor starts after the last completion of its predecessor (no shared time), and
    # a cell's events (768 and 4,096) fit the 8 MiB-a-CPU trace buffer even if the reader were starved throughout
    return [Workload(name="seq", rw="read", bs=128 * 1024, iodepth=8, range_size=0.75, io_size=96 * MIB),
            Workload(name="rnd", rw="randwrite", bs=BLOCK, iodepth=8, range_size=0.75, io_size=16 * MIB)]


@requires_devices
def test_each_cells_record_equals_fios_own_offsets(loopdev, logging_fio):
    fio, logs = logging_fio
    out = _traced_round(loopdev, fio, _cells())
    for cell in out.cells:
        cov = cell.coverage
        touched, moved, lo, hi, ios = iolog_truth(logs / f"{cell.name}.iolog")
        assert cov is not None and cov.source == "tracefs"
        assert cov.events_lost == 0 and cov.seen_pct == 100.0
        assert (cov.touched_bytes, cov.moved_bytes, cov.lowest, cov.highest_end) == (touched, moved, lo, hi)
        assert moved == cell.read.bytes + cell.write.bytes            # fio's own count
        assert 0 < cov.events_seen <= ios         # the block layer may merge adjacent requests, never invent one
        offset = int(re.search(r"^offset=(\d+)$", out.job_text, re.M).group(1))
        size = int(re.search(r"^size=(\d+)$", out.job_text, re.M).group(1))
        assert (cov.range_offset, cov.range_bytes) == (offset, size)
    seq, rnd = (c.coverage for c in out.cells)
    assert seq.access == SEQUENTIAL and seq.touched_pct == 100.0 and seq.passes == 2.0
    # uniform random: 4,096 I/Os over 12,288 blocks leave e^-(1/3) untouched; the rule does not fire on either
    assert abs(rnd.touched_pct - rnd.expected_pct()) < 2.0
    assert coverage_deviations([CellCoverage("", "round", 1, c.name, c.coverage, c.coverage.expected_pct())
                                for c in out.cells]) == []


@requires_devices
def test_a_seq_cell_cycling_over_a_sliver_trips_the_coverage_rule(loopdev, logging_fio, monkeypatch):
    fio, logs = logging_fio
    monkeypatch.setenv("SHRINK_SIZE", "1")     # the job walks a tenth of its range, twenty times
    out = _traced_round(loopdev, fio, _cells()[:1])
    cov = out.cells[0].coverage
    touched, moved, lo, hi, _ = iolog_truth(logs / "seq.iolog")
    assert (cov.touched_bytes, cov.moved_bytes, cov.lowest, cov.highest_end) == (touched, moved, lo, hi)
    assert cov.passes == 2.0 and cov.touched_pct < 11
    found = coverage_deviations([CellCoverage("bs=128K", "round", 3, "seq", cov, cov.expected_pct())])
    assert [d.rule for d in found] == ["coverage"] and "seq (bs=128K round 3)" in found[0].evidence


def test_completion_lines_are_parsed_and_other_lines_are_not():
    line = b"  fio-16619 [001] ..... 16957.662145: block_rq_complete: 7,0 WS () 7904 + 8 be,0,4 [0]"
    assert parse_completion(line) == (16957.662145, 7904, 8)
    scsi = b"  <idle>-0 [000] d.h1. 12.5: block_rq_complete: 8,0 R (28 00 00 00 00 08 00) 2048 + 256 [0]"
    assert parse_completion(scsi) == (12.5, 2048, 256)
    assert parse_completion(b"  kworker-5 [000] ..... 1.0: block_rq_complete: 7,0 FN () 0 + 0 none,0,0 [0]") is None
    assert parse_completion(b"CPU:1 [LOST 12 EVENTS]") is None
    assert parse_completion(b"  x-1 [000] ..... 1.0: block_rq_complete: 7,0 R (") is None


def test_the_bitmap_counts_distinct_granules_of_the_range():
    cell = _CellTrace("random", range_offset=BLOCK * 8, range_bytes=BLOCK * 100, granule=BLOCK)
    for off, n in [(8, 1), (8, 1), (10, 20), (107, 1), (0, 9), (200, 1)]:   # in blocks; the last outside
        cell.add(off * BLOCK, n * BLOCK)
    rec = cell.record()
    # blocks 8, 10..29, 107 and (of 0..8) 8 again: 22 distinct inside; offsets outside count in lowest/highest
    assert rec.touched_bytes == 22 * BLOCK and rec.moved_bytes == 33 * BLOCK
    assert (rec.lowest, rec.highest_end, rec.events_seen) == (0, 201 * BLOCK, 6)


@requires_devices
def test_a_run_stores_traced_coverage_for_every_cell_and_shows_it(loopdev, results, tiny):
    rid, store = run_completed(loopdev, results, tiny, "throughput", "--purge", "trim", "--trace-stimulus")
    assert store.run(rid)["options"].trace_stimulus is True         # what a resume reads back
    cells = [c for kind in ("precondition", "round") for r in store.rounds(rid, "throughput", kind=kind)
             for c in r.cells]
    assert cells and all(c.coverage is not None and c.coverage.source == "tracefs" for c in cells)
    assert all(c.coverage.events_lost == 0 for c in cells)      # a round's events fit the trace buffer many times
    # every completion counts for one cell: the test's total is fio's own (a few requests at a time-based
    # transition complete after the next cell is let go and count for it, so cell by cell it may differ)
    assert sum(c.coverage.moved_bytes for c in cells) == sum(c.read.bytes + c.write.bytes for c in cells)
    for c in cells:           # every SEQ cell starts at its range's start and stays inside it
        cov = c.coverage
        assert cov.lowest == cov.range_offset and cov.highest_end <= cov.range_offset + cov.range_bytes
    shown = ssdpts("show", rid, "--results", str(results)).stdout
    assert "coverage (tracefs)" in shown and ", 0 short;" in shown and "of events seen" in shown
    doc = json.loads(ssdpts("show", rid, "--json", "--results", str(results)).stdout)
    assert all(t["coverage"] for t in doc["tests"])
    assert "[coverage]" not in ssdpts("check", rid, "--results", str(results), check=False).stdout
    report = ssdpts("report", rid, "--results", str(results), "--out", str(results / "rep")).stdout
    html = next((results / "rep").glob("*.html")).read_text()
    assert "LBA coverage per cell (tracefs)" in html and "seq_128K_100-0" in html, report


@requires_devices
def test_a_resumed_run_traces_again_and_a_stop_leaves_no_trace_instance(loopdev, results, tiny, tmp_path):
    rid, _, _ = _stop_after_rounds(loopdev, results, _never_steady(tmp_path, tiny), 2, "--trace-stimulus")
    pid = Store.in_dir(results).run(rid)["owner"].pid
    assert not list(Path("/sys/kernel/tracing/instances").glob(f"ssdpts-{pid}-*"))   # removed at the stop
    ssdpts("resume", rid, "--results", str(results), "-q")
    store = Store.in_dir(results)
    rounds = store.rounds(rid, "iops")
    assert len(rounds) == 8                     # never steady: max_rounds, before and after the resume
    assert all(c.coverage is not None and c.coverage.source == "tracefs" for r in rounds for c in r.cells)
    assert "[coverage]" not in ssdpts("check", rid, "--results", str(results), check=False).stdout


@pytest.mark.parametrize("target", ["sim:client", "file"])
def test_a_target_without_block_events_is_refused_before_anything_is_written(target, results, tiny, tmp_path):
    spec = str(tmp_path / "scratch.img") if target == "file" else target
    p = ssdpts("run", spec, "--size", "64M", "--profile", tiny, "--tests", "throughput", "--destroy-data",
               "--results", str(results), "--trace-stimulus", check=False)
    assert p.returncode == 2, p
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("ssdpts: error: --trace-stimulus ")
    assert "drop --trace-stimulus" in p.stderr
    assert not (tmp_path / "scratch.img").exists()
    listed = ssdpts("list", "--results", str(results), check=False)
    assert "no results database" in listed.stderr or listed.stdout.strip() == "no runs yet"


@requires_devices
def test_without_root_the_flag_is_refused(loopdev, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(SsdptsError, match=r"^--trace-stimulus reads .*needs root; run as root, or drop --trace-stimulus$"):
        check_traceable(open_target(loopdev))


@requires_devices
def test_two_devices_at_once_are_refused(loop_factory, results, tiny):
    a, b = loop_factory(64 * MIB), loop_factory(64 * MIB)
    p = ssdpts("run", a, b, "--profile", tiny, "--tests", "throughput", "--destroy-data", "--results", str(results),
               "--trace-stimulus", check=False)
    assert p.returncode == 2 and "--sequential" in p.stderr and p.stderr.count("\n") == 1, p
