"""`ssdpts analyze workload`: the figures equal the workload file's counts, the charts are PNGs, streams
beyond the top N fold into 'other', bad files are one line. Captures are built by hand from capture.model
records (three streams, five steps), so nothing here needs a device; in-process except one real CLI call."""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner

from conftest import ssdpts
from ssdpts import cli
from ssdpts.capture.model import (SCHEMA, CaptureSource, QueueDepth, Step, StreamCount, StreamKey,
                                  WorkloadCapture)

RND4R = StreamKey(4096, "read", "random")
SEQ64W = StreamKey(65536, "write", "sequential")
RND128W = StreamKey(131072, "write", "random")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _count(key: StreamKey, ios: int) -> StreamCount:
    return StreamCount(key, ios, ios * key.bs)


def _step(i: int, counts: dict[StreamKey, int], depths: dict[int, int]) -> Step:
    return Step(start_s=60.0 * i, duration_s=60.0, streams=[_count(k, n) for k, n in counts.items() if n],
                queue_depth=QueueDepth(depths))


# five steps: RND 4K R grows, SEQ 64K W is steady, RND 128K W appears in step 3 only
STEPS = [
    _step(0, {RND4R: 60, SEQ64W: 30}, {1: 80, 2: 10}),
    _step(1, {RND4R: 70, SEQ64W: 30}, {1: 50, 4: 50}),
    _step(2, {RND4R: 80, SEQ64W: 30, RND128W: 10}, {2: 100, 8: 20}),
    _step(3, {RND4R: 90, SEQ64W: 30}, {1: 120}),
    _step(4, {RND4R: 100, SEQ64W: 0}, {16: 100}),
]
TOTALS = {RND4R: 400, SEQ64W: 120, RND128W: 10}
ALL_IOS = sum(TOTALS.values())
ALL_BYTES = sum(k.bs * n for k, n in TOTALS.items())


def _capture(**change) -> WorkloadCapture:
    depths: dict[int, int] = {}
    for st in STEPS:
        for d, c in st.queue_depth.histogram.items():
            depths[d] = depths.get(d, 0) + c
    fields = dict(schema=SCHEMA,
                  source=CaptureSource("tracefs", "/dev/loop7", "2026-11-24T12:00:00Z", 300.0, 60.0,
                                       "ssdpts capture /dev/loop7 --duration 5m --step 1m"),
                  device_size_bytes=2**30, lba_min_bytes=0, lba_max_bytes=2**29,
                  streams=[_count(k, n) for k, n in TOTALS.items()], queue_depth=QueueDepth(depths), steps=STEPS)
    fields.update(change)
    return WorkloadCapture(**fields)


@pytest.fixture
def workload_file(tmp_path):
    path = tmp_path / "app.workload.json"
    path.write_text(json.dumps(_capture().to_json()))
    return path


def _invoke(*args):
    return CliRunner().invoke(cli.main, ["analyze", "workload", *map(str, args)])


def _analysis(path, *extra) -> dict:
    r = _invoke(path, "--json", *extra)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_table_and_shares_equal_the_file_counts(workload_file):
    doc = _analysis(workload_file, "--top", "2")
    assert (doc["ios"], doc["bytes"], doc["stream_count"]) == (ALL_IOS, ALL_BYTES, 3)
    assert [(r["label"], r["ios"], r["bytes"]) for r in doc["top"]] == [
        ("RND 4K R", 400, 400 * 4096), ("SEQ 64K W", 120, 120 * 65536)]
    assert doc["top"][0]["ios_pct"] == pytest.approx(400 / 530 * 100)
    assert doc["top"][1]["bytes_pct"] == pytest.approx(120 * 65536 / ALL_BYTES * 100)
    assert doc["top_ios_pct"] == pytest.approx(520 / 530 * 100)
    assert doc["streams_for_80pct"] == 2          # 400/530 = 75.5 % < 80 % <= 520/530
    other = doc["other"]
    assert (other["label"], other["streams"], other["ios"], other["bytes"]) == ("other", 1, 10, 10 * 131072)
    splits = {s["label"]: s for s in doc["splits"]}
    assert (splits["read"]["ios"], splits["write"]["ios"]) == (400, 130)
    assert (splits["random"]["ios"], splits["sequential"]["ios"]) == (410, 120)
    assert (splits["write"]["streams"], splits["random"]["streams"]) == (2, 2)
    assert splits["write"]["bytes_pct"] == pytest.approx((120 * 65536 + 10 * 131072) / ALL_BYTES * 100)
    assert doc["source"]["device"] == "/dev/loop7" and doc["html"] is None


def test_steps_shares_and_queue_depths(workload_file):
    steps = _analysis(workload_file, "--top", "2")["steps"]
    assert [s["ios"] for s in steps] == [90, 100, 120, 120, 100]
    assert steps[2]["shares"] == pytest.approx({"RND 4K R": 80 / 120 * 100, "SEQ 64K W": 25.0,
                                                "other": 10 / 120 * 100})
    assert steps[4]["shares"] == {"RND 4K R": 100.0, "SEQ 64K W": 0.0, "other": 0.0}
    assert steps[0]["iops"] == pytest.approx(1.5) and steps[0]["read_pct"] == pytest.approx(60 / 90 * 100)
    # step 2: 50 issues at depth 1, 50 at 4 -> mean 2.5, p99 4; step 3: p99 of 100x2 + 20x8 is 8
    assert (steps[1]["queue_depth"]["mean"], steps[1]["queue_depth"]["p99"]) == (2.5, 4)
    assert (steps[2]["queue_depth"]["p99"], steps[2]["queue_depth"]["max"]) == (8, 8)
    assert steps[4]["queue_depth"] == {"samples": 100, "mean": 16.0, "p99": 16, "max": 16}


@pytest.mark.parametrize("top, named, other", [(1, ["RND 4K R"], (2, 130)), (3, ["RND 4K R", "SEQ 64K W", "RND 128K W"], None),
                                               (9, ["RND 4K R", "SEQ 64K W", "RND 128K W"], None)])
def test_top_n_folds_the_rest_into_other(workload_file, top, named, other):
    doc = _analysis(workload_file, "--top", top)
    assert [r["label"] for r in doc["top"]] == named
    assert (doc["other"] and (doc["other"]["streams"], doc["other"]["ios"])) == (other or None)
    for step in doc["steps"]:
        assert list(step["shares"]) == named + ["other"]
        assert sum(step["shares"].values()) == pytest.approx(100.0)


def test_html_charts_and_tables(workload_file, tmp_path):
    out = tmp_path / "report"
    doc = _analysis(workload_file, "--top", "2", "--out", out)
    assert doc["html"] == str(out / "workload.html")
    html = (out / "workload.html").read_text()
    for text in ("IO stream map", "RND 4K R", "other (1 stream)", "Queue depth", "/dev/loop7"):
        assert text in html
    for name in ("io-stream-map", "queue-depth", "iops"):
        assert (out / "plots" / f"{name}.png").read_bytes()[:8] == PNG_MAGIC
    with open(out / "tables" / "top-streams.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["stream"], int(r["ios"]), int(r["bytes"])) for r in rows] == [
        ("RND 4K R", 400, 400 * 4096), ("SEQ 64K W", 120, 120 * 65536), ("other (1 stream)", 10, 10 * 131072)]


def test_many_streams_render_and_fold(tmp_path):
    """Twelve streams, top 11: a colour each (tab20 past ten), one folded into 'other'."""
    keys = [StreamKey(512 * 2**i, rw, "random") for i in range(6) for rw in ("read", "write")]
    step = Step(0.0, 10.0, [_count(k, 100 - i) for i, k in enumerate(keys)], QueueDepth({1: 10}))
    capture = _capture(streams=step.streams, steps=[step], queue_depth=QueueDepth({1: 10}))
    path = tmp_path / "many.workload.json"
    path.write_text(json.dumps(capture.to_json()))
    doc = _analysis(path, "--top", "11", "--out", tmp_path / "out")
    assert len(doc["top"]) == 11 and (doc["other"]["label"], doc["other"]["ios"]) == ("other", 89)
    assert (tmp_path / "out" / "plots" / "io-stream-map.png").read_bytes()[:8] == PNG_MAGIC


def test_text_summary(workload_file):
    r = _invoke(workload_file, "--top", "2")
    assert r.exit_code == 0, r.output
    assert "530 I/Os" in r.stdout and "read 75.5 % of I/Os" in r.stdout
    assert "top 2 streams (the applied test workload) hold 98.1 % of the I/Os; 2 hold at least 80 %" in r.stdout
    assert "other (1 stream)" in r.stdout


def _damaged(data: dict, path: tuple, value):
    *parents, last = path
    node = data
    for key in parents:
        node = node[key]
    node[last] = value
    return data


def _broken(path: tuple, value) -> str:
    return json.dumps(_damaged(_capture().to_json(), path, value))


@pytest.mark.parametrize("content, message", [
    (None, "does not exist"),
    ("{not json", "not valid JSON"),
    ('{"schema": "ssdpts.results/1"}', "not an ssdpts workload file"),
    (json.dumps({"schema": SCHEMA}), "malformed workload file"),
    (_broken(("streams", 0, "ios"), "400"), "streams[0].ios is '400', not a whole number"),
    (_broken(("streams", 0, "stream", "rw"), "trim"), "malformed workload file"),
    (_broken(("steps", 1, "duration_s"), -60), "not a number of seconds"),
    (_broken(("queue_depth", "histogram"), {"2": -1}), "not a count"),
    (json.dumps(_capture(streams=[], steps=[]).to_json()), "holds no I/Os"),
    (json.dumps(_capture().to_json()).replace("60.0", "NaN", 1), "not a finite number"),
])
def test_bad_files_are_one_line_and_write_nothing(tmp_path, content, message):
    path = tmp_path / "bad.workload.json"
    if content is not None:
        path.write_text(content)
    out = tmp_path / "report"
    r = _invoke(path, "--out", out)
    assert r.exit_code == 2 and not out.exists(), r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ssdpts: error:") and message in lines[0], r.stderr


def test_bad_top_and_a_directory_are_one_line(workload_file, tmp_path):
    for args, message in (([workload_file, "--top", "0"], "--top 0"), ([tmp_path], "is a directory")):
        r = _invoke(*args)
        assert r.exit_code == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_the_real_cli(workload_file):
    """One subprocess, as a user runs it: the group registers the command and the numbers come out."""
    doc = json.loads(ssdpts("analyze", "workload", str(workload_file), "--json").stdout)
    assert [r["ios"] for r in doc["top"]] == [400, 120, 10] and doc["other"] is None


def test_a_capture_without_steps_has_tables_and_no_charts(tmp_path):
    path = tmp_path / "whole.workload.json"
    path.write_text(json.dumps(_capture(steps=[]).to_json()))
    doc = _analysis(path, "--out", tmp_path / "out")
    assert doc["steps"] == [] and [r["ios"] for r in doc["top"]] == [400, 120, 10]
    assert "no time steps" in (tmp_path / "out" / "workload.html").read_text()
    assert not list((tmp_path / "out" / "plots").iterdir())
