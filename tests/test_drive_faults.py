"""A failing drive is a result: fio's error report (a recorded fio 3.33 run on a scsi_debug disk with injected
medium errors, tests/fixtures/fio-drive-errors) read into the drive's evidence, stored, and shown first by
check and show. The faults themselves are injected in the QEMU test bed (tests/vm/test_vm_faults.py)."""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import requires_devices, wait_for_rounds
from ssdpts.conformance import check
from ssdpts.engines.drivefault import NOT_NAMING_THE_DRIVE, DriveFailure, KernelLog, drive_failures
from ssdpts.runresult.model import load_run
from ssdpts.export.text import render_text
from ssdpts.store import Store

pytestmark = pytest.mark.no_end_report    # reads no end-of-run report (tests/conftest.py)

FIXTURES = Path(__file__).parent / "fixtures" / "fio-drive-errors"
OUTPUT = (FIXTURES / "medium-error.json").read_text()
STDERR = (FIXTURES / "medium-error.stderr").read_text()


def test_medium_errors_read_from_fio_json_and_stderr():
    doc = json.loads(OUTPUT)
    [f] = drive_failures(OUTPUT, STDERR, [("/dev/sdd", "/dev/sdd")], ["[16.509363] critical medium error, dev sdd"])
    assert f.drive == "/dev/sdd" and f.cell == doc["jobs"][0]["jobname"] == "r"
    assert f.errno == doc["jobs"][0]["error"] == errno.ENODATA
    # fio stops a job at its first error; the I/Os in flight fail too: one stderr line each
    assert f.errors == STDERR.count("io_u error") == 2
    assert f.offset == 8732672 and "read offset=8732672" in f.message
    assert f.kernel_log == ["[16.509363] critical medium error, dev sdd"]
    assert "drive /dev/sdd failed" in f.line() and "No data available" in f.line()


def test_parallel_jobs_name_their_drive():
    """Several targets: jobs `cell@index`; only the drive whose job failed is named."""
    doc = json.loads(OUTPUT)
    bad = dict(doc["jobs"][0], jobname="rnd_4K_100-0@1")
    good = dict(doc["jobs"][0], jobname="rnd_4K_100-0@0", error=0)
    text = json.dumps(dict(doc, jobs=[good, bad]))
    [f] = drive_failures(text, STDERR, [("/dev/sda", "/dev/sda"), ("/dev/sdd", "/dev/sdd")])
    assert (f.drive, f.cell, f.errors) == ("/dev/sdd", "rnd_4K_100-0", 2)


def test_fio_failures_that_are_not_the_drive_stay_errors():
    doc = json.loads(OUTPUT)
    text = json.dumps(dict(doc, jobs=[dict(doc["jobs"][0], error=errno.EINVAL)]))
    assert drive_failures(text, "fio: bad option\n", [("/dev/sdd", "/dev/sdd")]) == []
    assert drive_failures("", "fio: pid=1, err=22/file:ioengines.c\n", [("/dev/sdd", "/dev/sdd")]) == []


def test_stored_failure_heads_check_and_show(tmp_path):
    store = Store.in_dir(tmp_path)
    run_id = store.create_run(target_spec="/dev/sdd", target={"kind": "block", "path": "/dev/sdd"}, host={},
                              profile_name="tiny", profile={"profile": {"name": "tiny"}}, tests=["iops"],
                              options={}, engine="fio")
    store.set_test(run_id, "iops", "drive-failed")
    [f] = drive_failures(OUTPUT, STDERR, [("/dev/sdd", "/dev/sdd")], ["[16.5] critical medium error, dev sdd"])
    f.test = "iops"
    store.record_drive_failure(run_id, f)
    store.set_run_status(run_id, "drive-failed", f.line())
    assert store.drive_failures(run_id) == [DriveFailure.from_dict(f.to_dict())]
    run = load_run(store, run_id)
    verdict = check(run, store)
    assert not verdict.conformant and [x.deviation.rule for x in verdict.findings] == ["drive-failed"]
    lines = verdict.lines()
    assert lines[0].startswith("DRIVE FAILED: drive /dev/sdd failed (iops, cell r): 2 I/O error(s)")
    text = render_text(run, verdict).splitlines()
    assert text[0].startswith(f"run {run_id} — drive-failed: drive /dev/sdd failed")
    assert any(line.startswith("DRIVE FAILED") for line in text[:8])


# --- a drive removed while fio opens it -------------------------------------------------------------------


@requires_devices
def test_a_drive_whose_node_vanishes_between_rounds_is_a_drive_failure(loopdev, results, tiny, tmp_path):
    """What udev does when a drive is pulled out: its device node goes. The next round's fio fails at open
    and counts no I/O error (it must not create a regular file there: fio's default for a missing file); the
    run still ends as `drive-failed` (exit 1), naming the drive, not as fio's own failure (exit 2). The node
    is put back (same major:minor) before the loop device is released."""
    st = os.stat(loopdev)
    never_steady = tmp_path / "never.toml"
    never_steady.write_text(f'[profile]\nextends = "{tiny}"\n[steady_state]\nmax_range = 0.000001\nmax_rounds = 25\n')
    proc = subprocess.Popen([sys.executable, "-m", "ssdpts", "run", loopdev, "--profile", str(never_steady),
                             "--tests", "iops", "--destroy-data", "--results", str(results), "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        rid = wait_for_rounds(results / "ssdpts.db", "iops", 1)
        assert rid, f"the run never committed a round: {proc.kill() or proc.communicate()}"
        os.unlink(loopdev)
        out, err = proc.communicate(timeout=300)
        # fio, given a path that is gone, would create a regular file there and write the cell into /dev (RAM)
        left_in_its_place = os.path.exists(loopdev)
        if left_in_its_place and not stat.S_ISBLK(os.stat(loopdev).st_mode):
            os.unlink(loopdev)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if not os.path.exists(loopdev):
            os.mknod(loopdev, stat.S_IFBLK | 0o660, st.st_rdev)
    assert not left_in_its_place, f"something was created at {loopdev} after its node was removed"
    assert proc.returncode == 1, (proc.returncode, err)
    assert "Traceback" not in err and f"drive {loopdev} failed (iops, cell" in err, err
    store = Store.in_dir(results)
    assert store.run(rid)["status"] == "drive-failed"
    [f] = store.drive_failures(rid)
    assert (f.drive, f.errno, f.errors) == (loopdev, errno.ENODEV, 0) and f"{loopdev} is gone" in f.message
    assert len(store.rounds(rid, "iops", with_cells=False)) >= 1     # the rounds before the removal are kept


def _kmsg_pipe(tmp_path: Path, records: list[tuple[float, str]]):
    """A fake /dev/kmsg: a FIFO the KernelLog opens first (as it opens /dev/kmsg, before the records come),
    then recorded kmsg records ("PRIO,SEQ,USEC,FLAGS;text" and a " KEY=value" line) written into it."""
    fifo = tmp_path / "kmsg"
    os.mkfifo(fifo)
    log = KernelLog(str(fifo))
    writer = os.open(fifo, os.O_WRONLY)
    now = time.monotonic()
    text = "".join(f"6,{seq},{int((now + ago) * 1e6)},-;{line}\n SUBSYSTEM=block\n"
                   for seq, (ago, line) in enumerate(records, 1))
    os.write(writer, text.encode())
    os.close(writer)
    return log


RT_THROTTLING = "sched: RT throttling activated"


def test_kernel_log_keeps_the_lines_naming_the_drive(tmp_path):
    """Lines naming the drive (or its partitions) are its evidence: not another loop device whose name starts
    with the same letters, not the scheduler, not what came before the round."""
    log = _kmsg_pipe(tmp_path, [
        (-100.0, "I/O error, dev loop1, sector 0 op 0x1:(WRITE) flags 0x0 phys_seg 1 prio class 0"),  # before
        (-0.5, RT_THROTTLING),
        (-0.4, "I/O error, dev loop10, sector 8 op 0x1:(WRITE) flags 0x800 phys_seg 1 prio class 0"),
        (-0.3, "blk_update_request: I/O error, dev loop1, sector 2048 op 0x1:(WRITE) flags 0x0 phys_seg 1"),
        (-0.2, "Buffer I/O error on dev loop1p2, logical block 3, lost async page write"),
    ])
    try:
        got = log.since(time.time() - 10, ["loop1"])
    finally:
        log.close()
    assert [line.partition("] ")[2] for line in got] == [
        "blk_update_request: I/O error, dev loop1, sector 2048 op 0x1:(WRITE) flags 0x0 phys_seg 1",
        "Buffer I/O error on dev loop1p2, logical block 3, lost async page write"]


def test_kernel_log_without_the_drive_keeps_only_block_io_failures_marked(tmp_path):
    """No line names the drive: only block I/O failures in general are kept, each marked as not naming it;
    never the scheduler's RT throttling or a network card's link."""
    log = _kmsg_pipe(tmp_path, [
        (-0.6, RT_THROTTLING),
        (-0.5, "e1000e 0000:00:19.0 eth0: NIC Link is Up 1000 Mbps Full Duplex"),
        (-0.4, "nvme nvme3: I/O 17 QID 2 timeout, aborting"),
        (-0.3, "critical medium error, dev sdz, sector 16384 op 0x0:(READ) flags 0x0 phys_seg 1 prio class 2"),
    ])
    try:
        got = log.since(time.time() - 10, ["sdd"])
    finally:
        log.close()
    assert [line.partition("] ")[2] for line in got] == [
        "nvme nvme3: I/O 17 QID 2 timeout, aborting" + NOT_NAMING_THE_DRIVE,
        "critical medium error, dev sdz, sector 16384 op 0x0:(READ) flags 0x0 phys_seg 1 prio class 2"
        + NOT_NAMING_THE_DRIVE]
    assert not any(RT_THROTTLING in line for line in got)


def test_kernel_log_with_nothing_about_block_io_is_empty(tmp_path):
    log = _kmsg_pipe(tmp_path, [(-0.5, RT_THROTTLING)])
    try:
        assert log.since(time.time() - 10, ["sdd"]) == []
    finally:
        log.close()
