"""RWSW replays a captured mix with random and sequential streams in the same direction: a fio mix is captured
from one loop device, then `rwsw` applies it to another; every stream's share is judged from what the DEVICE
completed during each cell (its block-layer record, engines/stimulus.py), not from the job file, and each replayed
step's IOPS against the capture's. A replayed step whose window the cell before ran on into, or whose own run went
on into the next step's window, has a record mixed with its neighbour's: that is said, and its shares are judged
over the whole replay instead. About 25 s (a 2 s capture, then the run: 1 s cells)."""

from __future__ import annotations

import json

import pytest

from conftest import run_completed, ssdpts
from test_capture import _capture_fio, needs_tracefs
from test_rwsw import TINY, summary
from ssdpts.capture.model import StreamKey
from ssdpts.engines.stimulus import OVERLAP_SHARE
from ssdpts.pts.rwsw.composite import DirectionCounts, shares, stream_counts
from ssdpts.pts.rwsw.run import CARRIED_FRACTION, MIN_JUDGED_CELL_IOS, SHARE_TOLERANCE_PP, stream_iops

pytestmark = pytest.mark.no_end_report    # reads no end-of-run report (tests/conftest.py)

# random page reads beside a scan, random page writes: one fio job would run RND 4K R at ~35 % and make
# RND 128K R and SEQ 4K R (issue 28). fio's own I/O counts fix the shares (500 + 200 + 300); the rates spread
# them over 2 s, two 1 s steps at about 500 IOPS
MIX = [("rr", "randread", "4k", 2, 250, 500), ("sr", "read", "128k", 1, 100, 200),
       ("rw", "randwrite", "4k", 2, 150, 300)]
STREAMS = {"RND 4K R": 50, "SEQ 128K R": 20, "RND 4K W": 30}
MIN_SHARE = 5.0           # streams below this share are not judged (Done means of issue 28)
IOPS_TOLERANCE_PCT = 10.0
MIN_STEP_IOS = 100        # whole I/Os per second per stream: a step of a few I/Os cannot be held within 10 %
# a cell is judged on at least this many I/Os (ssdpts judges its cells from the same number): in a 100 ms pre-write
# of ~120 I/Os one I/O is almost a point, and each job's first I/Os go out before flow has anything to hold (one
# run measured 2.1 points off there)
MIN_CELL_IOS = MIN_JUDGED_CELL_IOS


def _profile(tmp_path, workload) -> str:
    p = tmp_path / "rwsw.toml"
    # top 3: the capture may call a scan's first read random (a 128K "RND" read beside the SEQ 128K ones)
    p.write_text(f'[profile]\nextends = "{TINY}"\n[steady_state]\nwindow = 2\nmax_rounds = 2\n'
                 f'[tests.rwsw]\nworkload = "{workload}"\ntop = 3\nthread_counts = [1]\nqueue_depths = [4]\n'
                 'precondition_time = "300ms"\nprewrite_time = "100ms"\noperating_prewrite_time = "100ms"\n'
                 'operating_measure_time = "100ms"\ncell_runtime = "1s"\nreplay_time_scale = 1.0\n')
    return str(p)


def _device_shares(cell, streams) -> dict[str, float | None]:
    s = cell.stimulus
    assert s is not None and s.measured, s
    return shares(stream_counts(DirectionCounts(s.read_ios, s.read_bytes, s.write_ios, s.write_bytes), streams))


def _fio_shares(cell, streams) -> dict[str, float]:
    """Each stream's share of the cell's I/Os (%) by fio's count of the one job that makes it."""
    ios = {x.label: cell.jobs[x.job_name].read.ios + cell.jobs[x.job_name].write.ios for x in streams}
    return {label: 100 * n / sum(ios.values()) for label, n in ios.items()}


def _judge(shares_seen: dict[str, float | None], requested: dict[str, float], where: str) -> None:
    for label, want in requested.items():
        if want >= MIN_SHARE:
            got = shares_seen.get(label)
            assert got is not None and abs(got - want) <= SHARE_TOLERANCE_PP, (where, label, want, shares_seen)


@needs_tracefs
def test_a_random_and_sequential_mix_is_replayed_stream_by_stream(loop_factory, tmp_path, results):
    captured = _capture_fio(loop_factory(2**30), tmp_path / "db.workload.json", MIX)
    assert {s.stream.label: round(100 * s.ios / captured.ios) for s in captured.top(3)} == STREAMS
    assert captured.share(StreamKey(131072, "read", "sequential")) > 0.15
    rid, store = run_completed(loop_factory(256 * 2**20), results, _profile(tmp_path, tmp_path / "db.workload.json"),
                               "rwsw", "--seed", "7")
    s = summary(store, rid)
    assert [g.name for g in s.applied.groups] == ["rnd4kr", "rnd4kw", "seq128kr"]
    assert s.applied.one_job_error_pp > 14 and s.applied.max_error_pp < 0.1
    requested = {x.label: x.requested_pct for x in s.applied.streams}

    # the full-intensity sweep: a job per stream held by flow; the device's counts per cell against the requested shares
    # (every rwsw cell has this mix, so a neighbour's I/O in a cell's window does not change the shares)
    sweep = [(r.round, c) for r in store.rounds(rid, "rwsw", "") for c in r.cells]
    assert sweep and all(set(c.jobs) == {"rnd4kr", "rnd4kw", "seq128kr"} for _, c in sweep)
    assert "flow=" in store.rounds(rid, "rwsw", "")[0].job_text
    judged = [(n, c) for n, c in sweep if c.read.ios + c.write.ios >= MIN_CELL_IOS]
    assert judged, [(c.name, c.read.ios + c.write.ios) for _, c in sweep]
    # a cell the device saw off the mix must be said by ssdpts (beside two busy loops and a loaded suite one cell's
    # 4K reads ran at 0.2 % of 50 %: a starved job); every other cell is held within the tolerance
    # A cell whose device record is mixed with a neighbour's (its window holds the next or previous cell's I/O) is
    # judged by fio's own count of each job, one stream each (at stop 49 at rest: fio's counts off the mix, the
    # mixed device record within it, and the note was checked against the device record)
    said = {n.split(":")[0] for n in s.notes if n.startswith("round ") and "not the workload's mix" in n}
    for n, c in judged:
        mixed = c.stimulus is not None and c.stimulus.mixed_with_neighbours
        seen = _fio_shares(c, s.applied.streams) if mixed else _device_shares(c, s.applied.streams)
        if f"round {n} cell {c.name}" in said:      # the note is true of the record it judged
            assert any(abs((seen.get(k) or 0.0) - v) > SHARE_TOLERANCE_PP for k, v in requested.items()), (c.name, seen)
            continue
        _judge(seen, requested, f"round {n} {c.name}")

    # the replay: every step with I/O, one job per stream at its own rate
    steps = [r for r in s.replay if r.captured_ios >= MIN_STEP_IOS]
    assert len(steps) >= 2, [(r.step, r.captured_ios) for r in s.replay]
    cells = sorted((c for rr in store.rounds(rid, "rwsw", "replay") for c in rr.cells), key=lambda c: c.name)
    assert [c.name for c in cells] == [f"rwsw_replay{r.step:04d}" for r in s.replay]
    # A step's window at the device is mixed with a neighbour's where, by its block-layer record, the cell before ran
    # on into it, or the step ran on into the next one's, for more than OVERLAP_SHARE of it: a time-based cell's
    # successor is let go at its predicted end, and beside two busy loops a late-started 128K-read job's last 6 reads
    # were counted in the next step's 437 ms window (64 ms overlap): 24.2 % SEQ 128K R there where fio ran 20.2 %.
    # ssdpts must say so of exactly those steps, with the record's figures, and claim no off mix of them
    overlapped: dict[int, tuple[float, float, float]] = {}
    for i, (r, c) in enumerate(zip(s.replay, cells)):
        rec = c.stimulus
        assert rec is not None and rec.measured, (c.name, rec)
        after = cells[i + 1].stimulus.overlap_ms if i + 1 < len(cells) else 0.0
        if max(rec.overlap_ms, after) > OVERLAP_SHARE * rec.elapsed_ms:
            overlapped[r.step] = (rec.overlap_ms, after, rec.elapsed_ms)
    mixed = {int(n.split()[2].rstrip(":")): n for n in s.notes
             if n.startswith("replay step ") and "is mixed with its neighbour's" in n}
    assert set(mixed) == set(overlapped), (overlapped, mixed)
    for step, (before, after, window) in overlapped.items():
        if before > OVERLAP_SHARE * window:
            assert f"the cell before ran on {before:,.0f} ms into the step's {window:,.0f} ms window" in mixed[step]
        if after > OVERLAP_SHARE * window:
            assert f"the step ran on {after:,.0f} ms into the next step's window" in mixed[step]
        assert not [n for n in s.notes if n.startswith(f"replay step {step}: the device saw")], (step, s.notes)
    # A stream whose job fio could not run at its rate (a loop device on a busy host: 128K reads at QD 1 slower
    # than its 100 IOPS need) is the device's limit, not the replay's: such a step must be said (the note names
    # the stream and fio's figures) and is not judged; every step the device could carry is, by fio's counts, and by
    # the device's record of its own window where that window is not mixed with a neighbour's
    for r in steps:
        want = {x.label: x.requested_pct for x in r.composite.streams}
        assert r.measured_pct is not None
        ran = {label: got / asked for label, got, asked in stream_iops(r)}     # fio's count / rate, per stream
        if min(ran.values()) < CARRIED_FRACTION:
            assert [n for n in s.notes if n.startswith(f"replay step {r.step}: ") and "could not carry" in n], \
                (r.step, ran, s.notes)
            continue
        _judge(r.delivered_pct, want, f"replay step {r.step} (fio)")
        assert abs(r.iops_error_pct) <= IOPS_TOLERANCE_PCT, (r.step, r.captured_iops, r.iops)
        if r.step not in overlapped:
            _judge(r.measured_pct, want, f"replay step {r.step}")
    for r in steps:                       # the summary's measured shares are the device's record of the cell
        assert r.measured_pct == pytest.approx(_device_shares(cells[s.replay.index(r)], r.composite.streams))
    carried = {r.step for r in steps if min(got / asked for _, got, asked in stream_iops(r)) >= CARRIED_FRACTION}
    assert not [n for n in s.notes if "the replayed mix is not the capture's" in n
                and int(n.split()[2].rstrip(":")) in carried]
    # The steps' windows follow one another: a step's tail counted in the next window is still the replay's. Unless
    # the cell before the replay ran on into its first window, the device's counts over all of them are fio's, per
    # stream (each step runs the same streams, one job each): the mixed steps' I/O is judged here
    first = cells[0].stimulus
    if first.overlap_ms <= OVERLAP_SHARE * first.elapsed_ms:
        streams = s.replay[0].composite.streams
        assert all({x.label for x in r.composite.streams} == {x.label for x in streams} for r in s.replay)
        fio = {x.label: sum(c.jobs[y.job_name].read.ios + c.jobs[y.job_name].write.ios
                            for r, c in zip(s.replay, cells) for y in r.composite.streams if y.label == x.label)
               for x in streams}
        device = DirectionCounts(*(sum(getattr(c.stimulus, k) for c in cells)
                                   for k in ("read_ios", "read_bytes", "write_ios", "write_bytes")))
        _judge(shares(stream_counts(device, streams)), shares(fio), "the whole replay")

    shown = ssdpts("show", rid, "--results", str(results)).stdout
    assert "stream shares per step: captured, requested, applied (fio), measured (device)" in shown
    assert "SEQ 128K R" in shown and ("(+" in shown or "(-" in shown)      # the replayed IOPS' error
    data = json.loads(ssdpts("show", rid, "--json", "--results", str(results)).stdout)
    assert "measured_pct" in json.dumps(data)
