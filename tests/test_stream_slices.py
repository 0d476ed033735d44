"""Cutting fio's streamed status documents into slices (engines/fiodiff.py `slices`) on fio's own output.

The fixture is a capture of the slc-cache study's streamed write on a 128 MiB loop device beside two busy
loops (fio 3.33, io_uring, 1 MiB at QD32, `--status-interval=100ms`), verbatim but for the loop device's
name and the session directory: its status document at 99 ms counts all 128 I/Os issued (`total_ios`) and
completed (`lat_ns.N`) but only 97 MiB in `io_bytes`; fio's final document, 19 ms later, adds the other
31 MiB and no I/O. The stored write was 97 of 128 MiB when that last piece was taken for a slice without I/O.
The truth here is fio's own final document."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path

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
    assert cut[-1].results[0].write.bytes == 31 * 2**20 and cut[-1].jobs[0] is docs[-1]["jobs"][0]


def test_a_last_document_with_io_but_no_runtime_gained_is_still_a_slice():
    # fio counts runtime in ms: bytes can arrive within the ms of the previous document
    docs = documents()
    docs[-1] = copy.deepcopy(docs[-1])
    docs[-1]["jobs"][0]["write"]["runtime"] = docs[-2]["jobs"][0]["write"]["runtime"]
    cut = list(slices(docs, 1, INTERVAL_S))
    assert sum(s.results[0].write.bytes for s in cut) == 128 * 2**20
    assert cut[-1].duration_ms == 0 and cut[-1].results[0].write.bytes == 31 * 2**20


def test_documents_without_io_still_give_their_time_to_the_next_slice():
    docs = documents()
    idle_start = docs[0]["jobs"][0]["write"]
    assert idle_start["io_bytes"] == 0 == idle_start["runtime"]   # before the first I/O: not a slice
    cut = list(slices(docs, 1, INTERVAL_S))
    assert len(cut) == 2 and cut[0].duration_ms == docs[1]["jobs"][0]["write"]["runtime"]
