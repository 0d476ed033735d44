"""Each cell's stimulus as the device saw it (engines/stimulus.py): checked against /sys/block/DEV/stat read by the
test itself, fio's own per-job counts in the stored raw output, and the simulator's counters; a device whose
max_sectors_kb is below the block size is named, one with default limits is not flagged."""

import contextlib
from dataclasses import replace
import json
from pathlib import Path

import pytest

from conftest import requires_devices, run_completed, ssdpts, tiny_with
from ssdpts.engines.results import CellResult, DirStats
from ssdpts.engines.stimulus import OVERLAP_SHARE, Stimulus, judge
from ssdpts.workload import Workload

pytestmark = pytest.mark.no_end_report    # writes the report it checks (tests/conftest.py)

HERE = Path(__file__).parent
TINY = str(HERE / "profiles" / "tiny.toml")
SIM_SMALL = f"sim:{HERE / 'profiles' / 'sim-small.toml'}"


@contextlib.contextmanager
def max_sectors_kb(dev: str, kb: int | None = None):
    """The device's request-size limit at `kb` (None: the default, its hardware limit) for the block; put back
    after: a loop device keeps its queue limits across detach and attach, so the next test's device would."""
    queue = Path(f"/sys/block/{Path(dev).name}/queue")
    old = (queue / "max_sectors_kb").read_text().strip()
    (queue / "max_sectors_kb").write_text(str(kb) if kb else (queue / "max_hw_sectors_kb").read_text().strip())
    try:
        yield
    finally:
        (queue / "max_sectors_kb").write_text(old)


def block_stat(dev: str) -> list[int]:
    return [int(x) for x in Path(f"/sys/block/{Path(dev).name}/stat").read_text().split()]


def fio_jobs(store, round_id: int) -> dict[str, dict]:
    """fio's own job documents of a stored round, by job name (one JSON document per fio process)."""
    text, jobs = store.raw_output(round_id), {}
    decoder, i = json.JSONDecoder(), text.find("{")
    while i != -1:
        doc, end = decoder.raw_decode(text, i)
        jobs.update({j["jobname"]: j for j in doc.get("jobs", [])})
        i = text.find("{", end)
    return jobs


def slowest_ms(job: dict) -> float:
    """fio's slowest completion (submission to completion) of a job, either direction, in ms."""
    return max(job[d]["lat_ns"]["max"] for d in ("read", "write")) / 1e6


def show_json(rid: str, results: Path) -> dict:
    return json.loads(ssdpts("show", rid, "--json", "--results", str(results)).stdout)


def stimulus_deviations(doc: dict, what: str = "") -> list[str]:
    """The run's `stimulus` findings (those containing `what`)."""
    return [d["evidence"] for d in doc["conformance"]["deviations"] if d["rule"] == "stimulus" and what in d["evidence"]]


@requires_devices
def test_every_cell_has_a_record_that_matches_the_block_layer_and_fio(loop_factory, results):
    dev = loop_factory(64 * 2**20)
    with max_sectors_kb(dev):
        before = block_stat(dev)
        rid, store = run_completed(dev, results, TINY, "iops", "--purge", "trim")
        after = block_stat(dev)
    seen = {"read_ios": 0, "write_ios": 0, "read_bytes": 0, "write_bytes": 0}
    fio_ios = {"read": 0, "write": 0}
    cells = 0
    mixed: set[tuple[str, int, str]] = set()
    previous_job = None        # fio's document of the cell that ran before, across rounds
    rounds = [(kind, r) for kind in ("precondition", "round") for r in store.rounds(rid, "iops", kind=kind)]
    for kind, r in rounds:
        jobs = fio_jobs(store, r.id)
        overran_before = True      # a round's first cell: the previous round's last one may have overrun
        for c in r.cells:
            cells += 1
            s = c.stimulus
            assert s is not None and s.measured and s.source == f"block layer: {Path(dev).name}", (r.round, c.name)
            for k in seen:
                seen[k] += getattr(s, k)
            job = jobs[c.name]
            # a cell whose record says it ran on into the next window (its I/O began late after its release: a
            # loaded host's fio) lacks its tail there, though fio's runtime is no longer than the window (a 64K write
            # cell's window held 96 MB where fio wrote 162 MB); the product says so ("overlap", checked below)
            overran = job["job_runtime"] > s.elapsed_ms + 10 or s.ran_on_ms > 10
            overran_near = overran or overran_before
            for d in ("read", "write"):
                fio_ios[d] += job[d]["total_ios"]
                # per cell: the cell's I/O, unless fio ran this cell or the one before past its successor's
                # release (a time-based cell's successor is let go at its predicted end; on a loaded host fio
                # overran a 200 ms cell by up to 175 ms, and that tail is the next cell's window: a 4K write
                # cell's window held 94.6 MB where fio wrote 62.8 MB); the sums below hold to 1 %
                if job[d]["total_ios"] >= 1000 and not overran_near:
                    assert getattr(s, f"{d}_bytes") == pytest.approx(job[d]["io_bytes"], rel=0.25), (r.round, c.name, d)
            overran_before = overran
            overlapped_job, previous_job = previous_job, job
            if s.overlap_ms > OVERLAP_SHARE * s.elapsed_ms:
                # the cell before ran on through much of this window (a loaded host: 210 ms of a 204 ms
                # window): requests of up to three cells completed in it, each carrying its time in queue
                # from before the window; the product judges such a record by the overlap alone (below)
                mixed.add((kind, r.round, c.name))
                continue
            # 1 x 8 outstanding; an overrun neighbour (above) adds its own 8 at most, and its requests that were
            # in flight when the window opened carry their whole time in queue into it: at most 8 of them, none
            # older than fio's slowest completion of that cell (a loaded host: 25.3 in a window 18.9 ms overlapped)
            carried_ms = 8 * slowest_ms(overlapped_job) if overlapped_job is not None and s.overlap_ms > 0 else 0.0
            assert 0 < s.queue_depth <= (16 if overran_near else 8) * 1.05 + carried_ms / s.elapsed_ms, (c.name, s)
            assert 0 < s.utilisation <= 1, (c.name, s)
    assert cells == 1 + 6 * 4 or cells >= 1 + 5 * 4
    # the cells' windows never overlap: together they hold no more than the device did in all, and fio's I/O
    assert seen["read_ios"] <= after[0] - before[0] and seen["write_ios"] <= after[4] - before[4]
    assert seen["read_bytes"] <= (after[2] - before[2]) * 512 and seen["write_bytes"] <= (after[6] - before[6]) * 512
    assert seen["write_ios"] == pytest.approx(fio_ios["write"], rel=0.01)
    assert seen["read_ios"] == pytest.approx(fio_ios["read"], rel=0.01)
    doc = show_json(rid, results)
    # default limits, 4K and 64K: no request split (must not trip); the whole run's other findings may only be
    # a loaded host's overrun cells (see above)
    assert stimulus_deviations(doc, "reached the device as") == []     # the split finding's words
    rows = next(t for t in doc["tests"] if t["name"] == "iops")["stimulus"]["cells"]
    assert len(rows) == cells and all(m["kind"] != "split" for r in rows for m in r["mismatches"])
    assert all([m["kind"] for m in r["mismatches"]] == ["overlap"] for r in rows if (r["kind"], r["round"], r["cell"]) in mixed)
    assert any(r["write_request_bytes"] == pytest.approx(4096, rel=0.01) for r in rows)
    # the device saw all fio's bytes (the sums above): no cell may be said to have reached it with less
    assert not [m for r in rows for m in r["mismatches"] if "saw less" in m["evidence"]]
    text = ssdpts("show", rid, "--results", str(results)).stdout
    assert f"stimulus at the device (block layer: {Path(dev).name}): {cells} of {cells} cells measured" in text
    tidy = ssdpts("export", rid, "--format", "tidy-json", "--out", str(results / "x"), "--results", str(results))
    lines = [json.loads(x) for f in (results / "x").glob("*.jsonl") for x in f.read_text().splitlines()]
    assert tidy.returncode == 0 and any(x["metric"] == "device_queue_depth" for x in lines)
    assert sum(x["value"] for x in lines if x["metric"] == "device_write_ios") == seen["write_ios"]


@requires_devices
def test_max_sectors_kb_below_the_block_size_is_named(loop_factory, results):
    dev = loop_factory(64 * 2**20)
    with max_sectors_kb(dev, 64):
        rid, store = run_completed(dev, results, TINY, "throughput", "--purge", "trim")
    found = stimulus_deviations(show_json(rid, results))
    assert any("128 KiB writes reached the device as 64 KiB requests: max_sectors_kb=64" in e for e in found), found
    assert any("128 KiB reads reached the device as 64 KiB requests: max_sectors_kb=64" in e for e in found), found
    text = ssdpts("show", rid, "--results", str(results)).stdout
    assert "NOT as asked" in text and "MISMATCH" in text
    check = ssdpts("check", rid, "--results", str(results), check=False)
    assert check.returncode == 1 and "[stimulus]" in check.stdout
    report = Path(ssdpts("report", rid, "--results", str(results), "--out", str(results / "rep")).stdout.strip())
    assert "NOT as asked" in report.read_text() and "max_sectors_kb=64" in report.read_text()


@requires_devices
def test_default_limits_with_128k_are_not_flagged(loop_factory, results):
    dev = loop_factory(64 * 2**20)
    with max_sectors_kb(dev):
        rid, _ = run_completed(dev, results, TINY, "throughput", "--purge", "trim")
    assert stimulus_deviations(show_json(rid, results), "requests") == []


def test_simulated_drive_gives_the_record_from_its_counters(results):
    rid, store = run_completed(SIM_SMALL, results, TINY, "throughput")
    for kind in ("precondition", "round"):
        for r in store.rounds(rid, "throughput", kind=kind):
            jobs = fio_jobs(store, r.id)
            for c in r.cells:
                s = c.stimulus
                assert s.source == "simulator counters" and s.utilisation is None
                # bytes from the drive's host counters, requests from its per-job counts
                assert (s.read_bytes, s.write_bytes) == (c.read.bytes, c.write.bytes)
                assert (s.read_ios, s.write_ios) == (jobs[c.name]["read"]["total_ios"], jobs[c.name]["write"]["total_ios"])
                assert 0 < s.queue_depth <= 8.001
    assert stimulus_deviations(show_json(rid, results)) == []


def _cell(read: int, write: int, bs: int) -> CellResult:
    return CellResult("c", DirStats(ios=read, bytes=read * bs), DirStats(ios=write, bytes=write * bs), runtime_ms=1000)


def test_judge_trips_on_a_mix_and_a_queue_that_are_not_the_cells():
    w = Workload("c", "randrw", bs=4096, read_pct=70, threads=1, iodepth=4, runtime_s=1)
    cell = _cell(7000, 3000, 4096)
    asked = Stimulus(source="t", elapsed_ms=1000, read_ios=7000, read_bytes=7000 * 4096, write_ios=3000,
                     write_bytes=3000 * 4096, busy_ms=900, in_queue_ms=3500)
    assert judge(w, cell, asked) == []
    skewed = Stimulus(**{**asked.to_dict(), "read_ios": 3000, "read_bytes": 3000 * 4096, "write_ios": 7000,
                         "write_bytes": 7000 * 4096})
    assert {m.kind for m in judge(w, cell, skewed)} >= {"mix"}
    crowded = Stimulus(**{**asked.to_dict(), "in_queue_ms": 9000})
    assert [m.kind for m in judge(w, cell, crowded)] == ["queue"]
    # buffered cells are not judged: the page cache lies between fio and the device
    assert judge(w.with_(direct=False), cell, skewed) == []


def test_smaller_requests_from_an_overrun_neighbour_are_an_overlap_not_a_split():
    """The record a fresh clone tripped on: a 64K cell whose window held 263 of the next 4K cell's requests
    (1,704 I/Os, 1,967 requests, 55.9 KiB mean). With the neighbour's overrun seen, no queue limit explaining
    it, the finding names the overlap; without one, or with a limit that explains it, it stays a split."""
    w = Workload("c", "randrw", bs=65536, read_pct=65, threads=1, iodepth=8, runtime_s=1)
    cell = _cell(3165, 1704, 65536)
    mixed = Stimulus(source="t", elapsed_ms=1000, read_ios=3165, read_bytes=3165 * 65536, write_ios=1967,
                     write_bytes=1704 * 65536 + 263 * 3500, busy_ms=900, in_queue_ms=4000,
                     max_sectors_kb=1280, max_segments=128, page_size=4096, overlap_ms=30)
    assert [m.kind for m in judge(w, cell, mixed)] == ["overlap"]
    unexplained = Stimulus(**{**mixed.to_dict(), "overlap_ms": 0.0})
    assert [m.kind for m in judge(w, cell, unexplained)] == ["split"]
    assert "no queue limit explains it" in judge(w, cell, unexplained)[0].what
    limited = Stimulus(**{**mixed.to_dict(), "max_sectors_kb": 32})
    assert [(m.kind, "max_sectors_kb=32" in m.what) for m in judge(w, cell, limited)] == [("split", True)]


def test_a_cell_that_ran_on_into_the_next_window_is_an_overlap_not_less_volume():
    """The record an at-rest fresh clone tripped on: a 64K write cell whose I/O began late after its release, so
    its tail completed in the next cell's window (fio wrote 162 MB, its own window held 96 MB). Its own record
    says how long it ran on (its end report after the next cell's release); within fio's bytes at its mean rate
    over that time, the finding is the overlap, not "the device saw less". A run-on too short to hold the missing
    bytes, or none, leaves it a volume finding (I/O that never reached the device must still be seen)."""
    w = Workload("c", "randwrite", bs=65536, read_pct=0, threads=1, iodepth=8, runtime_s=0.2)
    cell = CellResult("c", DirStats(), DirStats(ios=2472, bytes=2472 * 65536), runtime_ms=200)
    short = Stimulus(source="t", elapsed_ms=204, write_ios=1465, write_bytes=1465 * 65536, busy_ms=200,
                     in_queue_ms=1000, ran_on_ms=85)
    found = judge(w, cell, short)
    assert [m.kind for m in found] == ["overlap"] and "85 ms past it" in found[0].detail
    for ran_on in (0.0, 10.0):
        assert [(m.kind, "saw less write" in m.what) for m in judge(w, cell, replace(short, ran_on_ms=ran_on))] \
            == [("volume", True)]
    # an old record (stored before the figure was kept) reads back as not having run on
    assert Stimulus.from_dict({k: v for k, v in short.to_dict().items() if k != "ran_on_ms"}).ran_on_ms == 0.0


def test_a_streamed_tests_rounds_say_why_they_have_no_record(results, tmp_path):
    """slc-cache streams one sequential write cut into intervals: its rounds have no per-interval record, and
    `show` said "not recorded (stored before ssdpts recorded it)" of a run stored seconds before by this ssdpts.
    The truths: the run was made here, now (its stored start and ssdpts version), and its rounds are slices of
    one simulator job (one job text, and the simulator's interval log in the raw output, one row per round)."""
    import time

    from ssdpts import __version__

    profile = tiny_with(tmp_path / "slc.toml", '[tests.slc-cache]\ninterval = "100ms"\n')
    began = time.time()
    rid, store = run_completed(SIM_SMALL, results, profile, "slc-cache")
    run = store.run(rid)
    assert run["host"].ssdpts_version == __version__ and run["created"] >= began - 1
    rounds = store.rounds(rid, "slc-cache", "seq")
    assert len(rounds) > 3 and len({r.job_text for r in rounds}) == 1
    assert all(c.stimulus is not None and not c.stimulus.measured for r in rounds for c in r.cells)
    line = next(l for l in ssdpts("show", rid, "--results", str(results)).stdout.splitlines()
                if "stimulus at the device" in l)
    assert "stored before" not in line and "not measured per interval" in line
    assert "the simulator's counters are read at its start and end only" in line, line
