"""`ssdpts capture`: a known fio mix captured from a loop device through tracefs is recovered (stream shares,
queue depths); fio iologs and blkparse text import; bad input is one line. About 10 s in all (three live
captures of 2-3 s; the rest is sub-second)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from click.testing import CliRunner

from conftest import _can_make_devices, sigint_as_at_a_terminal
from ssdpts import cli
from ssdpts.capture import model
from ssdpts.capture.model import CaptureSource, StreamKey
from ssdpts.capture.reduce import IoEvent, Reducer

INSTANCES = Path("/sys/kernel/tracing/instances")
needs_tracefs = pytest.mark.skipif(_can_make_devices() is not None or not (INSTANCES.parent / "events/block").is_dir(),
                                   reason=_can_make_devices() or "no tracefs block events")

# the mix: each job's I/O count fixes its share (600 + 300 + 100); rate_iops 300/150/50 spreads them over 2 s
# (low rates: kept on a loaded machine); fio keeps at most 4 + 2 + 1 = 7 I/Os in flight
MIX = [("rr", "randread", "4k", 4, 300, 600), ("sw", "write", "64k", 2, 150, 300),
       ("rw", "randwrite", "128k", 1, 50, 100)]
TOTAL_QD = sum(job[3] for job in MIX)


def _capture(*args: str):
    """The CLI in this process (a subprocess costs a second or two on a loaded machine)."""
    return CliRunner().invoke(cli.main, ["capture", *args])


def _own_instances() -> list[Path]:
    return sorted(INSTANCES.glob("ssdpts-*"))


def _start_capture(dev: str, out: Path, *args: str) -> subprocess.Popen:
    """The capture in the background; returns once its tracefs instance records (before: nothing is seen)."""
    before = set(_own_instances())
    p = subprocess.Popen([sys.executable, "-m", "ssdpts", "capture", dev, "--out", str(out), "-q", *args],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=sigint_as_at_a_terminal)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and p.poll() is None:
        new = [i for i in set(_own_instances()) - before if i.name.startswith(f"ssdpts-{p.pid}-")]
        if new and (new[0] / "events/block/block_rq_complete/enable").read_text().strip() == "1":
            return p
        time.sleep(0.02)
    p.kill()
    raise AssertionError(f"capture did not start: {p.communicate()}")


def _capture_fio(dev: str, out: Path, jobs, *job_options: str) -> model.WorkloadCapture:
    """Capture while fio runs `jobs` (name, rw, bs, iodepth, rate_iops, I/Os) to their end, then Ctrl-C: the
    capture holds every I/O of the jobs, however late a loaded machine starts them."""
    Path(f"/sys/block/{Path(dev).name}/queue/nomerges").write_text("2")   # the device sees fio's I/Os as they are
    args = ["fio", "--ioengine=libaio", "--direct=1", f"--filename={dev}", "--minimal", *job_options]
    for name, rw, bs, qd, rate, ios in jobs:
        args += [f"--name={name}", f"--rw={rw}", f"--bs={bs}", f"--iodepth={qd}", f"--number_ios={ios}",
                 f"--size={ios * 4}m"] + ([f"--rate_iops={rate}"] if rate else [])
    p = _start_capture(dev, out, "--duration", "10m", "--step", "1s")
    try:
        subprocess.run(args, capture_output=True, text=True, timeout=120, check=True)
    finally:
        p.send_signal(signal.SIGINT)
        _, stderr = p.communicate(timeout=60)
    assert p.returncode == 130, stderr
    assert not [i for i in _own_instances() if i.name.startswith(f"ssdpts-{p.pid}-")], "instance left behind"
    w = model.load(out)
    assert "stopped early" in w.source.note and w.source.device == dev
    return w


@needs_tracefs
def test_capture_recovers_a_known_fio_mix(loop_factory, tmp_path):
    dev = loop_factory(2**30)           # sparse on tmpfs; ~40 MB are written
    w = _capture_fio(dev, tmp_path / "mix.workload.json", MIX)
    assert w.ios == 1000 and w.source.kind == "tracefs"
    assert w.device_size_bytes == 2**30 and 0 <= w.lba_min_bytes < w.lba_max_bytes <= 2**30
    shares = {key: 100 * w.share(key) for key in (StreamKey(4096, "read", "random"),
                                                   StreamKey(65536, "write", "sequential"),
                                                   StreamKey(131072, "write", "random"))}
    assert list(shares.values()) == pytest.approx([60, 30, 10], abs=2), (shares, w.streams)
    assert [s.stream for s in w.top(3)] == list(shares)
    # queue depth: one sample per I/O; never more in flight than fio allows; at least the issued one
    assert w.queue_depth.samples == w.ios
    assert 1 <= min(w.queue_depth.histogram) and max(w.queue_depth.histogram) <= TOTAL_QD
    assert 1.0 <= w.queue_depth.mean <= TOTAL_QD
    # 1 s steps that add up to the whole
    assert len(w.steps) >= 2 and all(s.duration_s == 1.0 for s in w.steps[:-1]) and w.steps[-1].duration_s <= 1.0
    assert sum(s.ios for s in w.steps) == w.ios
    assert sum(s.queue_depth.samples for s in w.steps) == w.queue_depth.samples


@needs_tracefs
def test_capture_sees_the_queue_depth_fio_keeps(loop_factory, tmp_path):
    """fio submits 4 reads at once, waits for all 4, thinks 1 ms: each batch's issues see 1, 2, 3, 4 in flight
    (fewer when some complete before the batch is all issued: a loaded machine), never more."""
    dev = loop_factory(64 * 2**20)
    w = _capture_fio(dev, tmp_path / "qd.workload.json", [("qd4", "randread", "4k", 4, 0, 400)],
                     "--iodepth_batch_submit=4", "--iodepth_batch_complete_min=4", "--thinktime=1000",
                     "--thinktime_blocks=4")
    qd = w.queue_depth
    assert qd.samples == 400 and max(qd.histogram) == 4 and 1.5 <= qd.mean <= 2.5, qd


@needs_tracefs
def test_capture_of_a_fixed_duration(loopdev, tmp_path):
    """An idle device for 2.5 s in 1 s steps: three steps, the last one 0.5 s, all empty; exit 0."""
    out = tmp_path / "idle.workload.json"
    p = _start_capture(loopdev, out, "--duration", "2500ms", "--step", "1s")
    _, stderr = p.communicate(timeout=60)
    assert p.returncode == 0, stderr
    w = model.load(out)
    assert [(s.start_s, s.duration_s, s.ios) for s in w.steps] == [(0.0, 1.0, 0), (1.0, 1.0, 0), (2.0, 0.5, 0)]
    assert w.source.duration_s == 2.5 and w.ios == 0 and w.streams == []
    assert not [i for i in _own_instances() if i.name.startswith(f"ssdpts-{p.pid}-")]


def test_fio_iolog_import(tmp_path):
    """fio's own iolog of a small sequential job: 32 writes of 8 KiB, all sequential (the first one too, once its
    stream is recognised at the third)."""
    log = tmp_path / "job.iolog"
    subprocess.run(["fio", "--name=seq", f"--filename={tmp_path / 'data'}", "--rw=write", "--bs=8k", "--size=256k",
                    f"--write_iolog={log}", "--minimal"], capture_output=True, check=True, timeout=60)
    out = tmp_path / "job.workload.json"
    assert _capture("--from-iolog", str(log), "--out", str(out), "--step", "1s").exit_code == 0
    w = model.load(out)
    assert {(s.stream.label, s.ios, s.bytes) for s in w.streams} == {("SEQ 8K W", 32, 32 * 8192)}
    assert w.source.kind == "fio-iolog" and "version 3" in w.source.note
    assert w.source.command == f"ssdpts capture --from-iolog {log} --step 1s --out {out}"
    assert w.queue_depth.samples == 0 and "queue depths are not known" in w.source.note
    assert (w.lba_min_bytes, w.lba_max_bytes) == (0, 256 * 1024)


BLKPARSE = """\
  7,0    1        1     0.000000000  100  Q   R 0 + 8 [app]
  7,0    1        2     0.000010000  100  D   R 0 + 8 [app]
  7,0    1        3     0.000020000  100  D   R 800 + 8 [app]
  7,0    1        4     0.000030000  100  D  WS 64 + 128 [app]
  7,0    0        5     0.000100000    0  C   R 0 + 8 [0]
  7,0    1        6     0.000200000  100  D  WS 192 + 128 [app]
  7,0    1        7     0.000300000  100  D  FN 0 + 0 [app]
  7,0    0        8     0.001000000    0  C   R 800 + 8 [0]
  7,0    1        9     1.500000000  100  D   D 4096 + 2048 [app]
  7,0    1       10     1.600000000  100  D   R 8 + 8 [app]
"""


def test_blkparse_text_import(tmp_path):
    """blkparse's default output (blkparse(1) format; written by hand here: blktrace's relay is refused on
    this machine): D issues and C completions give streams, depths and steps; discards and flushes kept out."""
    d = tmp_path / "traces"
    d.mkdir()
    (d / "sda.txt").write_text(BLKPARSE)
    out = tmp_path / "bt.workload.json"
    assert _capture("--from-blktrace", str(d), "--out", str(out), "--step", "1s").exit_code == 0
    w = model.load(out)
    # two requests in a row are a pair, not yet a stream (a stream opens at its third): all random
    assert {(s.stream.label, s.ios) for s in w.streams} == {("RND 4K R", 3), ("RND 64K W", 2)}
    # in flight at each read/write issue: 1, 2, 3, then 3 (a read done),
    # then 5 (two writes, the flush and the discard never completed, and itself)
    assert w.queue_depth.histogram == {1: 1, 2: 1, 3: 2, 5: 1}
    assert [s.ios for s in w.steps] == [4, 1] and w.source.duration_s == pytest.approx(1.59999)
    assert "1 discard requests (1,048,576 bytes)" in w.source.note and "1 flush requests" in w.source.note


def test_reducer_sequential_rule_keeps_interleaved_streams():
    """Two sequential writers interleaved on one device stay sequential (a table of recent ends, not one), from
    their first writes on (counted once each stream is recognised, at its third)."""
    r = Reducer(0.0, 1.0)
    for i in range(10):
        for base in (0, 10**9):
            r.feed(IoEvent(i * 0.01, False, "write", base + i * 4096, 4096))
            r.feed(IoEvent(i * 0.01, True, "write", base + i * 4096, 4096))
    w = r.capture(CaptureSource("test", "x", "", 1.0, 1.0))
    assert {(s.stream.label, s.ios) for s in w.streams} == {("SEQ 4K W", 20)}
    assert w.queue_depth.histogram == {1: 20}


def test_a_window_of_ten_seconds_in_two_second_steps_has_five_steps():
    """CI at stop 48: a loaded host's last poll read the clock after a 10 s capture's end and its in-flight
    sample made a sixth step of no length. What comes after the window is not the capture's; an I/O at its very
    end (an imported trace's last event) belongs to the last step."""
    r = Reducer(0.0, 2.0, end=10.0)
    for i in range(10):
        r.feed_request(i + 0.5, False, "write", i * 8192, 8192)
        r.feed_request(i + 0.6, True, "write", i * 8192, 8192)
    r.feed_request(10.0, False, "write", 0, 8192)                  # at the end itself: the last step's
    r.feed_request(10.2, False, "write", 8192, 8192)               # after it: nobody's
    r.sample_in_flight(10.3, 4)
    w = r.capture(CaptureSource("tracefs", "/dev/x", "", 10.0, 2.0))
    assert [(s.start_s, s.duration_s, s.ios) for s in w.steps] == [(0, 2, 2), (2, 2, 2), (4, 2, 2), (6, 2, 2),
                                                                    (8, 2, 3)]
    assert w.queue_depth.histogram == {1: 11}          # each write done before the next; the sample is outside


@pytest.mark.parametrize("args, message", [
    (["/dev/null"], "is not a block device"),
    (["/etc/hostname"], "is not a block device"),
    (["/dev/ssdpts-no-such-device"], "No such file"),
    ([], "give one source"),
    (["/dev/loop0", "--duration", "10s", "--step", "1m"], "is longer than --duration"),
    (["/dev/loop0", "--duration", "ten"], "bad --duration"),
    (["--from-iolog", "/etc/hostname"], "does not start with 'fio version"),
    (["--from-iolog", "/etc/hostname", "--duration", "1m"], "--duration is for a live capture"),
])
def test_bad_input_is_one_line(tmp_path, args, message):
    out = tmp_path / "w.json"
    r = _capture(*args, "--out", str(out))
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2 and len(lines) == 1 and message in lines[0], r.stderr
    assert not out.exists() and not list(tmp_path.iterdir())


def test_existing_out_is_kept_without_force(tmp_path):
    out = tmp_path / "app.workload.json"
    out.write_text("mine")
    r = _capture("/dev/null", "--out", str(out))
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "--force" in r.stderr, r.stderr
    assert out.read_text() == "mine"
