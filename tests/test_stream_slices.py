"""Cutting fio's streamed status documents into slices (engines/fiodiff.py `slices`) on fio's own output.

The fixture is a capture of the slc-cache study's streamed write on a 128 MiB loop device beside two busy
loops (fio 3.33, io_uring, 1 MiB at QD32, `--status-interval=100ms`), verbatim but for the loop device's
name and the session directory: its status document at 99 ms counts all 128 I/Os issued (`total_ios`) and
completed (`lat_ns.N`) but only 97 MiB in `io_bytes`; fio's final document, 19 ms later, adds the other
31 MiB and no I/O. The stored write was 97 of 128 MiB when that last piece was taken for a slice without I/O; kept, it was
a slice of its own: a round of 0 IOPS. The truth here is fio's own final document."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path

import pytest

from ssdpts.engines.fiodiff import slices

CAPTURE = Path(__file__).parent / "fixtures" / "fio-stream-tail.json.gz"
INTERVAL_S = 0.1


def documents() -> list[dict]:
    text = gzip.decompress(CAPTURE.read_bytes()).decode()
    decoder, docs, at = json.JSONDecoder(), [], 0
    while (start := text.find('{\n  "fio version"', at)) >= 0:
        doc, at = decoder.raw_decode(text, start)
        docs.append(doc)
    return docs


def test_the_capture_is_the_case_that_lost_bytes():
    *_, status, final = documents()
    before, after = status["jobs"][0]["write"], final["jobs"][0]["write"]
    assert before["total_ios"] == after["total_ios"] == before["lat_ns"]["N"] == 128
    assert before["io_bytes"] == 97 * 2**20 and after["io_bytes"] == 128 * 2**20
    assert 0 < after["runtime"] - before["runtime"] < INTERVAL_S * 1000 / 2


def test_every_byte_and_io_of_fios_final_document_is_in_a_slice():
    docs = documents()
    final = docs[-1]["jobs"][0]["write"]
    cut = list(slices(docs, 1, INTERVAL_S))
    assert sum(s.results[0].write.bytes for s in cut) == final["io_bytes"] == 128 * 2**20
    assert sum(s.results[0].write.ios for s in cut) == final["total_ios"]
    assert sum(s.duration_ms for s in cut) == final["runtime"]
    assert cut[-1].jobs[0] is docs[-1]["jobs"][0]


def test_the_final_remainder_is_the_end_of_the_last_slice_not_a_round_of_zero_iops():
    """fio's final document, 19 ms after its last periodic one, adds 31 MiB and no I/O: as a slice of its own it
    was a round of 0 IOPS. It ends the slice before it: one slice, fio's own final counts over its runtime."""
    docs = documents()
    final = docs[-1]["jobs"][0]["write"]
    cut = list(slices(docs, 1, INTERVAL_S))
    assert len(cut) == 1
    (only,) = cut
    assert (only.results[0].write.ios, only.results[0].write.bytes, only.duration_ms) == (
        final["total_ios"], final["io_bytes"], final["runtime"])
    assert only.results[0].write.iops == final["total_ios"] / (final["runtime"] / 1000) > 0


def test_a_last_document_with_io_but_no_runtime_gained_ends_the_slice_before_it():
    # fio counts runtime in ms: bytes can arrive within the ms of the previous document
    docs = documents()
    docs[-1] = copy.deepcopy(docs[-1])
    docs[-1]["jobs"][0]["write"]["runtime"] = docs[-2]["jobs"][0]["write"]["runtime"]
    cut = list(slices(docs, 1, INTERVAL_S))
    assert len(cut) == 1 and cut[0].duration_ms == docs[-2]["jobs"][0]["write"]["runtime"] > 0
    assert cut[0].results[0].write.bytes == 128 * 2**20 and cut[0].results[0].write.iops > 0


def _cumulative(template: dict, intervals: int, extra_bytes: int = 0, extra_ms: int = 0) -> dict:
    """A status document `intervals` x the template's interval into a steady job: its counts (I/Os, bytes,
    latency histogram) times `intervals`, `extra_bytes` completed and `extra_ms` run after the last I/O counted."""
    doc = copy.deepcopy(template)
    w = doc["jobs"][0]["write"]
    w["total_ios"] *= intervals
    w["io_bytes"] = w["io_bytes"] * intervals + extra_bytes
    w["runtime"] = w["runtime"] * intervals + extra_ms
    w["lat_ns"]["N"] *= intervals
    w["lat_ns"]["bins"] = {k: v * intervals for k, v in w["lat_ns"]["bins"].items()}
    return doc


def test_a_long_stream_ends_in_full_slices_only():
    """A synthetic stream of four whole intervals, then fio's final document: the tail once with bytes but no
    I/O in 19 ms, once with neither I/O nor runtime (a zero-runtime remainder). No slice is shorter than half an
    interval or without I/O, and the slices add up to the final document."""
    start, periodic, _ = documents()
    one = copy.deepcopy(periodic)
    one["jobs"][0]["write"]["io_bytes"] = 128 * 2**20      # a whole interval: 128 I/Os of 1 MiB in 99 ms
    for extra_bytes, extra_ms in ((31 * 2**20, 19), (0, 0), (5 * 2**20, 0)):
        docs = [start] + [_cumulative(one, k) for k in range(1, 5)] + [_cumulative(one, 4, extra_bytes, extra_ms)]
        final = docs[-1]["jobs"][0]["write"]
        cut = list(slices(docs, 1, INTERVAL_S))
        assert [s.results[0].write.ios for s in cut] == [128] * 4
        assert all(s.duration_ms >= INTERVAL_S * 1000 / 2 and s.results[0].write.iops > 0 for s in cut)
        assert sum(s.results[0].write.bytes for s in cut) == final["io_bytes"]
        assert sum(s.duration_ms for s in cut) == final["runtime"] == 4 * 99 + extra_ms


def test_documents_without_io_still_give_their_time_to_the_next_slice():
    docs = documents()
    idle_start = docs[0]["jobs"][0]["write"]
    assert idle_start["io_bytes"] == 0 == idle_start["runtime"]   # before the first I/O: not a slice
    cut = list(slices(docs, 1, INTERVAL_S))
    assert len(cut) == 1 and cut[0].duration_ms == docs[-1]["jobs"][0]["write"]["runtime"]


def test_the_simulators_last_log_row_of_a_few_us_ends_the_slice_before_it():
    """The simulated drive cuts a sequential stream by its own interval log. 422 MiB of 1 MiB writes at QD32 on
    a purged sim:client run at ~2,110 MiB/s: 211 I/Os in the first 100 ms, 210 in the next, and the last I/O
    0.4 ms after that (the log's own last row). That row ends the second slice: no round of one I/O in 0.4 ms.
    The truths are the simulator's interval log and its job totals (the round's raw output)."""
    import json

    from ssdpts.engines.sim import SimEngine
    from ssdpts.targets.sim import open_sim_target
    from ssdpts.workload import Workload

    target = open_sim_target("sim:client")
    target.drive.purge()
    cell = Workload("tail", "write", bs=2**20, iodepth=32, io_size=422 * 2**20, runtime_s=30.0)
    with SimEngine().session(target) as s:
        r = s.submit([cell], tag="tail", interval_s=INTERVAL_S)
        cut = list(r.intervals())
        out = r.result()
    (job,) = json.loads(out.raw_output)["jobs"]
    rows = job["intervals"]
    ends = [0] + [row["t_ns"] for row in rows]
    assert [row["write_ios"] for row in rows][-1] == 1 and 0 < ends[-1] - ends[-2] < 1e6     # the edge: < 1 ms
    assert [iv.result.write.ios for iv in cut] == [rows[0]["write_ios"], rows[1]["write_ios"] + 1]
    assert sum(iv.result.write.ios for iv in cut) == job["write"]["total_ios"] == 422
    assert all(iv.duration_ms >= INTERVAL_S * 1000 / 2 for iv in cut)
    assert sum(iv.duration_ms for iv in cut) * 1e6 == pytest.approx(ends[-1])
