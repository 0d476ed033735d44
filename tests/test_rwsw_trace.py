"""RWSW replays a kept trace I/O for I/O, and applies a capture's LBA hot spots and thread counts where it models.

Truths the code did not compute: fio's own counts of the captured mix, the block layer's counts during the
replayed cell (engines/stimulus.py), and a second capture (the kernel's tracepoints) of the whole rwsw run on
the target. About 60 s in all."""

from __future__ import annotations

import gzip
import json
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from conftest import run_completed, sigint_as_at_a_terminal, ssdpts
from test_capture import _own_instances, needs_tracefs
from test_rwsw import TINY, summary
from ssdpts.capture import model
from ssdpts.capture.reduce import Reducer
from ssdpts.engines.fio_versions import IOLOG_CLAT_FIXED, fio_version, parse_version
from ssdpts.engines.stimulus import judge
from ssdpts.workload import Workload
from ssdpts.workload.trace import MAGIC, RECORD, read_trace, trace_tasks

pytestmark = pytest.mark.no_end_report    # reads no end-of-run report (tests/conftest.py)

# random page reads beside a scan, random page writes, each job its own process (3 issuing tasks)
MIX = ["--name=rr", "--rw=randread", "--bs=4k", "--iodepth=2", "--number_ios=500", "--rate_iops=250",
       "--name=sr", "--rw=read", "--bs=128k", "--iodepth=1", "--number_ios=200", "--rate_iops=100",
       "--offset=256m", "--name=rw", "--rw=randwrite", "--bs=4k", "--iodepth=2", "--number_ios=300",
       "--rate_iops=150"]
ZONED = ["--name=zoned", "--rw=randread", "--bs=4k", "--iodepth=2", "--number_ios=4000", "--rate_iops=2000",
         "--norandommap", "--random_distribution=zoned:60/10:30/20:10/70"]


class Capture:
    """`ssdpts capture DEV` running in the background until `stop()` (a Ctrl-C)."""

    def __init__(self, dev: str, out: Path, *options: str):
        before = set(_own_instances())
        self.out = out
        self.p = subprocess.Popen([sys.executable, "-m", "ssdpts", "capture", dev, "--out", str(out), "-q",
                                   "--duration", "10m", "--step", "1s", *options], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, preexec_fn=sigint_as_at_a_terminal)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.p.poll() is None:
            new = [i for i in set(_own_instances()) - before if i.name.startswith(f"ssdpts-{self.p.pid}-")]
            if new and (new[0] / "events/block/block_bio_queue/enable").read_text().strip() == "1":
                return
            time.sleep(0.02)
        self.stop()
        raise AssertionError(f"the capture did not start: {self.p.communicate()}")

    def stop(self) -> model.WorkloadCapture:
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGINT)
        _, stderr = self.p.communicate(timeout=120)
        assert self.p.returncode == 130, stderr
        return model.load(self.out)


def _fio(*args: str) -> dict:
    return json.loads(subprocess.run(["fio", "--ioengine=libaio", "--direct=1", "--output-format=json", *args],
                                     capture_output=True, text=True, timeout=120, check=True).stdout)


def _capture_fio(dev: str, out: Path, fio_args: list[str], *options: str) -> tuple[model.WorkloadCapture, dict]:
    Path(f"/sys/block/{Path(dev).name}/queue/nomerges").write_text("2")   # the device sees fio's I/Os as they are
    cap = Capture(dev, out, *options)
    try:
        fio = _fio(f"--filename={dev}", *fio_args)
    finally:
        w = cap.stop()
    return w, fio


def _labels(w: model.WorkloadCapture) -> dict[str, float]:
    return {s.stream.label: 100 * s.ios / w.ios for s in w.streams}


def _profile(tmp_path, workload: Path, **extra) -> str:
    p = tmp_path / "rwsw.toml"
    lines = "".join(f"{k} = {json.dumps(v)}\n" for k, v in extra.items())
    p.write_text(f'[profile]\nextends = "{TINY}"\n[steady_state]\nwindow = 2\nmax_rounds = 2\n'
                 f'[tests.rwsw]\nworkload = "{workload}"\ntop = 3\nthread_counts = [1]\nqueue_depths = [4]\n'
                 'precondition_time = "300ms"\nprewrite_time = "100ms"\noperating_prewrite_time = "100ms"\n'
                 f'operating_measure_time = "100ms"\ncell_runtime = "1s"\n{lines}')
    return str(p)


@needs_tracefs
def test_a_kept_trace_is_replayed_io_for_io(loop_factory, tmp_path, results):
    source, target = loop_factory(2**30), loop_factory(256 * 2**20)
    out = tmp_path / "db.workload.json"
    captured, fio = _capture_fio(source, out, MIX, "--keep-trace")
    fio_ios = sum(j["read"]["total_ios"] + j["write"]["total_ios"] for j in fio["jobs"])

    # the trace: every I/O fio did, as the workload counts them; three issuing tasks (fio's job processes)
    trace = tmp_path / "db.trace.gz"
    assert captured.trace_file == trace.name and captured.ios == fio_ios == 1000
    ios = list(read_trace(trace))
    assert len(ios) == captured.ios and sum(io.size for io in ios) == sum(s.bytes for s in captured.streams)
    assert [io.t_ns for io in ios] == sorted(io.t_ns for io in ios)
    assert max(s.threads for s in captured.steps) == 3
    with gzip.open(trace) as f:
        assert len(f.read()) == len(MAGIC) + 1000 * RECORD.size

    # the run on another device, captured as a whole with its own kept trace: the truth of what the device did
    Path(f"/sys/block/{Path(target).name}/queue/nomerges").write_text("2")
    whole = Capture(target, tmp_path / "run.workload.json", "--keep-trace")
    try:
        rid, store = run_completed(target, results, _profile(tmp_path, out, replay_trace=True,
                                                             replay_time_scale=1.0), "rwsw", "--seed", "7")
    finally:
        whole.stop()
    s = summary(store, rid)
    t = s.trace_replay
    assert t is not None and not s.replay and t.captured_ios == 1000 and t.rate_pct == 100
    span_s = (ios[-1].t_ns - ios[0].t_ns) / 1e9                  # the captured I/Os' span (about 2 s)
    assert t.runtime_s >= 0.95 * span_s, (t.runtime_s, span_s)   # at the captured times, not as fast as it can
    # the block layer during the replayed cell: the trace's I/Os and bytes, up to the requests at its start: the
    # keeper reads the counters when the job's release report arrives (engines/gates.py) and the replay's first
    # I/O goes out at once (measured: 1,000 in five runs, 999 once, with the whole run captured beside it). The
    # second capture below is exact.
    straddle = 4                                                 # the cell's iodepth: the capture's deepest queue
    assert abs(t.device_ios - len(ios)) <= straddle, t
    assert abs(t.device_bytes - sum(io.size for io in ios)) <= straddle * 131072, t
    assert t.fio_ios == len(ios)
    # a fio thread per issuing task (fio's job processes; the kernel's workers where they issued requests), each
    # replaying its own task's I/Os in their captured order, offsets beyond the 256 MiB target wrapped around it
    tasks = trace_tasks(trace)
    assert len(tasks) >= 3 and t.threads == len(tasks)
    names = [f"rwsw_trace.{k}.iolog" for k in range(len(tasks))]
    rounds = store.rounds(rid, "rwsw", "replay")
    job = rounds[0].job_text
    assert f"read_iolog={':'.join(names)}\n" in job and f"numjobs={len(tasks)}\n" in job
    assert f"replay_redirect={target}\n" in job
    # the stimulus judgement takes the trace's bytes as asked (fio's byte counts of a replay are not reliable)
    assert judge(Workload.from_dict(rounds[0].workloads[0]), rounds[0].cells[0], rounds[0].cells[0].stimulus) == []
    logs = store.logs(rounds[0].id)                                # the iologs are kept with the results
    for name, pid in zip(names, tasks):
        lines = [x.split() for x in logs[name].splitlines()[1:] if x.split()[2] in ("read", "write")]
        assert [(op, int(off), int(size)) for _, _, op, off, size in lines] == [
            (io.op, io.offset % (256 * 2**20), io.size) for io in ios if io.pid == pid]
    wrapped = [(io.op, io.offset % (256 * 2**20), io.size) for io in ios]

    # the second capture: the run's last 1,000 requests (the replay is its last cell) are the trace's I/Os, each
    # one at its (wrapped) offset, size and direction; every stream at its captured share
    seen = list(read_trace(tmp_path / "run.trace.gz"))[-len(ios):]
    assert Counter((io.op, io.offset, io.size) for io in seen) == Counter(wrapped)
    replayed = Reducer(0.0, 3600.0)
    for io in seen:
        replayed.feed_request(io.t_ns / 1e9, False, io.op, io.offset, io.size)
    got = _labels(replayed.capture(model.CaptureSource("test", target, "", 1.0, 3600.0)))
    want = _labels(captured)
    for label, share in want.items():
        assert abs(got.get(label, 0.0) - share) <= 1.0, (label, want, got)

    shown = ssdpts("show", rid, "--results", str(results)).stdout
    assert "trace replay (" in shown and f"the device saw {t.device_ios:,}" in shown
    # fio 3.33 (here) sleeps between replayed I/Os without reaping: the replay's latencies are not the device's
    if parse_version(fio_version()) < IOLOG_CLAT_FIXED:
        assert any("the trace replay's latencies are not the device's" in n for n in s.notes)


@needs_tracefs
def test_lba_hot_spots_and_threads_of_a_capture_are_applied(loop_factory, tmp_path, results):
    """fio's zoned random reads (60 % of them in the first 10 % of the device) captured without a trace; the rwsw
    run on another device, captured as a whole, lands its I/O in the same zones within 2 points."""
    source, target = loop_factory(2**30), loop_factory(256 * 2**20)
    out = tmp_path / "z.workload.json"
    captured, _ = _capture_fio(source, out, ZONED + ["--numjobs=2"])
    zones = [100 * n / sum(captured.lba_zones) for n in captured.lba_zones]
    assert abs(sum(zones[:2]) - 60) <= 3 and abs(sum(zones[2:6]) - 30) <= 3, zones
    assert max(s.threads for s in captured.steps) == 2

    Path(f"/sys/block/{Path(target).name}/queue/nomerges").write_text("2")
    whole = Capture(target, tmp_path / "run.workload.json")
    try:
        rid, store = run_completed(target, results, _profile(tmp_path, out), "rwsw", "--seed", "7")
    finally:
        seen = whole.stop()
    s = summary(store, rid)
    assert s.lba_distribution.startswith("zoned:")
    assert "random_distribution=zoned:" in store.rounds(rid, "rwsw", "")[0].job_text
    got = [100 * n / sum(seen.lba_zones) for n in seen.lba_zones]
    for z, (want, was) in enumerate(zip(zones, got)):
        assert abs(was - want) <= 2.0, (z, zones, got)
    # each replayed step at the captured thread count: fio numjobs over the step's stream jobs
    steps = [r for r in s.replay if r.threads]
    assert steps and all(r.threads == 2 for r in steps)
    replay_text = "\n".join(r.job_text for r in store.rounds(rid, "rwsw", "replay"))
    assert "numjobs=2" in replay_text


def test_trace_replay_without_a_kept_trace_is_refused_before_anything_runs(tmp_path):
    from ssdpts.errors import SsdptsError
    from ssdpts.pts.context import TestContext
    from ssdpts.pts.rwsw.run import applied_workload
    from ssdpts.pts import registry
    from recording import fake_target

    settings = registry.settings_for({"tests": {"rwsw": {
        "workload": str(Path(__file__).parent / "workloads" / "hand.workload.json"), "replay_trace": True}}}, ["rwsw"]).of("rwsw")
    ctx = TestContext(run_id="x", test="rwsw", store=None, target=fake_target(), engine=None, settings=settings,
                      progress=None)
    with pytest.raises(SsdptsError, match="replay_trace = true, but it kept no trace; capture with 'ssdpts "
                                          "capture DEVICE --keep-trace"):
        applied_workload(ctx)


def test_the_iologs_wrap_offsets_beyond_the_target_one_per_task_at_their_captured_times(tmp_path):
    from ssdpts.workload.trace import TraceWriter, trace_tasks, write_iologs

    w = TraceWriter(tmp_path / "a.trace.gz")
    for t, op, off, size, pid in ((5000, "read", 0, 4096, 42), (6500, "write", 10 * 2**20 + 4096, 8192, 43),
                                  (2_005_000, "read", 2**20 - 4096, 8192, 42)):
        w.add(t, op, off, size, pid)
    w.close(keep=True)
    assert trace_tasks(tmp_path / "a.trace.gz") == [42, 43]
    outs = [tmp_path / "a.0.iolog", tmp_path / "a.1.iolog"]
    made = write_iologs(tmp_path / "a.trace.gz", outs, "/dev/x", 2**20, 4096)
    assert made.ios == 3 and made.bytes == 20480 and made.wrapped == 2
    head = ["fio version 3 iolog", "1 /dev/x add", "1 /dev/x open"]
    assert outs[0].read_text().splitlines() == head + [
        "1 /dev/x read 0 4096",                         # µs from the trace's first I/O, plus 1
        "2001 /dev/x read 1040384 8192",               # would run past the end: the last 8K
        "2001 /dev/x close"]
    assert outs[1].read_text().splitlines() == head + [
        "2 /dev/x write 4096 8192",                     # 10 MiB + 4K on a 1 MiB target: 4K
        "2001 /dev/x close"]


def test_the_lba_histogram_as_fio_zones_and_threads_shared_among_stream_jobs():
    from test_rwsw import capture
    from ssdpts.pts.rwsw.composite import composite
    from ssdpts.pts.rwsw.run import lba_distribution, stream_jobs

    cap = capture()
    assert lba_distribution(cap) == "random"                        # none recorded
    cap.lba_zones = [10] * 20
    assert lba_distribution(cap) == "random"                        # flat
    cap.lba_zones = [600, 0, 300] + [100 / 17] * 17
    assert lba_distribution(cap) == "zoned:60/5:0/5:30/5:" + ":".join(["1/5"] * 10 + ["0/5"] * 7)
    comp = composite(cap.top(3), cap.ios)
    jobs = stream_jobs(comp, 1000, 4, threads=4)
    assert sum(j.threads for j in jobs) == max(4, len(jobs)) and all(j.threads >= 1 for j in jobs)
    for j, s in zip(jobs, comp.streams):
        assert j.rate_iops == max(1, round(1000 * s.requested_pct / 100 / j.threads))


def test_trace_replay_on_the_simulated_drive_runs_and_says_what_it_keeps(tmp_path, results):
    """The simulated drive has no iolog replay: the trace cell runs as the trace's I/O count of its read share,
    and the notes say the simulator does not replay a kept trace."""
    from test_rwsw import capture, profile
    from ssdpts.workload.trace import TraceWriter

    cap = capture()
    w = TraceWriter(tmp_path / "hand.trace.gz")
    for k, s in enumerate(st for st in cap.streams for _ in range(st.ios)):
        w.add(k * 1000, s.stream.rw, (k * s.stream.bs) % 2**30, s.stream.bs, 7)
    w.close(keep=True)
    cap.trace_file = "hand.trace.gz"
    (tmp_path / "hand.workload.json").write_text(json.dumps(cap.to_json()))
    rid, store = run_completed("sim:client", results, profile(tmp_path, tmp_path / "hand.workload.json", 1.0,
                                                              replay_trace=True), "rwsw", "--seed", "7")
    s = summary(store, rid)
    assert s.trace_replay is not None and s.trace_replay.captured_ios == cap.ios and not s.replay
    assert any("not a kept trace" in n for n in s.notes)
    assert "trace replay (" in ssdpts("show", rid, "--results", str(results)).stdout
