"""A failing drive is a result (docs/faults.md): faults injected under a real kernel while ssdpts runs, each
inside a measured cell after a completed round. scsi_debug gives medium errors on an LBA range (reads);
`blockdev --setro` a drive that turns read-only; QEMU pulls a hot-plugged NVMe drive out (`device_del`) mid-round; dm-delay holds
I/O for seconds, far less than the hang watch's grace. The expected outcomes come from the kernel's and fio's
own words (errno values as fio reports them for each fault).

Two runs go at once, in one guest command (fault_run.py), each on its own drives: a medium error on a lone
drive, and a parallel run of three drives where one turns read-only and one is pulled out; the stall's run
follows alone. Under TCG a run's start-up alone is half a minute of guest time: two faults share the
parallel run."""

from __future__ import annotations

import errno
import json
import shlex
import threading
import time
import tomllib

import pytest

from ssdpts.realtime.timing import HANG_GRACE_S
from ssdpts.units import parse_duration
from vm.testbed import GUEST_XFER, HERE, Drive

SD_OPTS = "/sys/bus/pseudo/drivers/scsi_debug/opts"
# dm-delay's hold on every I/O: above the TCG guest's own worst latency (3 s cells' max reached 1.8 and 3.3 s
# with no fault injected), far below the hang watch's grace
STALL_MS = 5000
# the two runs at once take 7-8 minutes of guest time at load ~3 on a 2-core host, twice that at load 6; the
# stall's alone about half that
GUEST_LIMIT_S = 1800
AWAIT_CELL = f"python3 {shlex.quote(str(HERE / 'await_cell.py'))}"
# the faults profile's one cell per round; fio runs it by the guest's clock and the next round's cell is let go
# at its end
CELL_S = parse_duration(tomllib.loads((HERE / "faults.toml").read_text())["tests"]["iops"]["cell_runtime"])
# the failing drives' faults are injected in the second round's cell: await_cell.py waits from the first
# measured read this long (the first cell over, and fio's writing of its output: the round's end the test
# judges by), then for the next read. Early in that cell: the pulled-out drive
# (the host answers in ~1 s) goes before the cell ends; a third round follows in any case. Waiting for a
# stored round instead came after the run's last I/O under load: ssdpts stored round 1 after rounds 2 and 3
NEXT_CELL_AFTER_S = CELL_S + 1.5
# then the fault, at once: await_cell.py prints the moment ("injected at NS", the guest's epoch ns) and
# fault_run.py counts the rounds stored as ended before it
NEXT_CELL = AWAIT_CELL + f" --next-after {NEXT_CELL_AFTER_S} {{disk}} --then {{fault}}"
# the parallel run's drives are 32 MiB each (its rounds, and the re-run on the healthy one, cost guest time by
# the byte): two hot-plugged NVMe drives (one turns read-only, one is pulled out) and the session's spare disk
READONLY = Drive("readonly", "nvme", "SSDPTSRDONLY", (32,))
VANISH = Drive("vanish", "nvme", "SSDPTSVANISH", (32,))
STALL_MIB = 32      # the stall's dm-delay device: the first 32 MiB of the session's NVMe drive
UPTIME = "echo \"delay {} at $(cut -d' ' -f1 /proc/uptime) s $(date +%s%N)\" >&2"   # the guest's clocks (uptime; epoch ns, as the device-idle records)
RUNS_IN_THE_TEST_BED = {"errors", "parallel", "stall"}


def fault_runs(vm, name: str, specs: list[dict], tick=lambda: None) -> dict:
    """The runs of `specs` made at once by one guest command (fault_run.py, results under /tmp/NAME, progress
    in XFER/NAME.log); `tick` is called every 0.2 s while they go (the host's part of a fault)."""
    specs = [s for s in specs if s["name"] in RUNS_IN_THE_TEST_BED]
    progress, result = vm.xfer / f"{name}.log", {}
    guest = threading.Thread(target=lambda: result.update(r=vm.run(
        " ".join(["python", shlex.quote(str(HERE / "fault_run.py")), f"/tmp/{name}", "1",
                  shlex.quote(json.dumps(specs)), f"{GUEST_XFER}/{progress.name}"]), timeout=GUEST_LIMIT_S)), daemon=True)
    guest.start()
    while guest.is_alive():
        tick()
        time.sleep(0.2)
    print(progress.read_text())
    r = result["r"].check()
    got = json.loads(r.out.strip().splitlines()[-1])
    for run, o in got.items():
        print(f"--- {run}: run exit {o['rc']}; {o['err'].strip()}\n{o['show']['out'][:2000]}\n"
              f"{o['check']['out'][:1200]}\n"
              f"injected: {o['injected']} at {o.get('injected_at_ns')} ns, after {o['rounds_before']} rounds; "
              f"cells (phase, round, cell, lat max ns): {o['cells']}")
        for r in o.get("rounds", []):
            print(f"  {r}")
    return got


@pytest.fixture(scope="module")
def faults(vm):
    """The failing drives' outcomes ({run name: what fault_run.py reports}), the runs made once for the
    module: a medium error on a lone drive, and a parallel run of three drives of which one turns read-only
    and one is pulled out (the third goes on alone)."""
    # a 32 MiB scsi_debug disk whose reads of sectors 16384-20479 fail with a medium error once opts is 2
    vm.run("modprobe -r scsi_debug; modprobe scsi_debug dev_size_mb=32 medium_error_start=16384 "
           "medium_error_count=4096 opts=0 && udevadm settle 2>/dev/null; sleep 1", check=True)
    sd = "/dev/" + vm.run("ls /sys/bus/pseudo/drivers/scsi_debug/adapter0/host*/target*/*/block/",
                          check=True).out.split()[0]
    readonly, vanish, healthy = vm.plug_nvme(READONLY), vm.plug_nvme(VANISH), vm.disk("spare")
    ready, pulled = vm.xfer / "vanish.ready", vm.xfer / "vanish.pulled"
    specs = [
        {"name": "errors", "targets": [sd], "rounds": 0,
         "inject": NEXT_CELL.format(disk=sd, fault=shlex.quote(f"echo 2 > {SD_OPTS}"))},
        # once the second round's I/O is on the drives, one turns read-only and the host pulls another out (QMP
        # device_del), both inside that round's cell (its 3 s leave room for the host's answer); read-only
        # first, its write failing at once, the round could end before the other drive had I/O in flight
        {"name": "parallel", "targets": [readonly, vanish, healthy], "rounds": 0,
         "inject": NEXT_CELL.format(disk=vanish, fault=shlex.quote(
             f"blockdev --setro {readonly} && touch {GUEST_XFER}/{ready.name} && "
             f"for i in $(seq 3000); do [ -e {GUEST_XFER}/{pulled.name} ] && exit 0; sleep 0.1; done; exit 1"))},
    ]

    def pull_out_when_ready() -> None:
        if ready.exists() and not pulled.exists():
            vm.qmp("device_del", id=f"tb{VANISH.name}")
            pulled.write_text("")

    try:
        got = fault_runs(vm, "faults", specs, pull_out_when_ready)
        got["drives"] = {"errors": sd, "readonly": readonly, "vanish": vanish, "healthy": healthy}
        yield got
    finally:
        vm.run(f"echo 0 > {SD_OPTS}; modprobe -r scsi_debug")
        vm.qmp("device_del", id=f"tb{READONLY.name}")


@pytest.fixture(scope="module")
def stall(vm):
    """The stall's outcome (what fault_run.py reports), its run made alone after the others: beside them the
    TCG guest's CPU went to three runs and the parallel run's faults landed after its last round's I/O."""
    stall_disk, size = vm.disk("nvme"), STALL_MIB * 2048
    linear, delay = f"0 {size} linear {stall_disk} 0", f"0 {size} delay {stall_disk} 0 {STALL_MS}"
    vm.run(f"dmsetup create tbstall --table '{linear}'", check=True)
    # the injection starts with the run and waits (await_cell.py) for the first read after the run's first
    # write: the first measured cell's I/O. Then every I/O is held STALL_MS until the device completes one (a
    # request held the whole STALL_MS: a fixed second past it was too short when the swap landed between two
    # rounds and the next round's fio started seconds later under TCG); the table swapped back releases the
    # I/Os still held. Waiting for a stored round came after the rounds' I/O had ended
    specs = [{"name": "stall", "targets": ["/dev/mapper/tbstall"], "rounds": 0,
              "inject": f"dmsetup load tbstall --table '{delay}' && {AWAIT_CELL} /dev/mapper/tbstall && "
                        f"dmsetup resume tbstall && {UPTIME.format('on')} && "
                        f"{AWAIT_CELL} --completion /dev/mapper/tbstall && dmsetup load tbstall --table '{linear}' && "
                        f"dmsetup resume tbstall && {UPTIME.format('off')}"}]
    try:
        yield fault_runs(vm, "stall", specs)["stall"]
    finally:
        vm.run("dmsetup remove tbstall")


def assert_drive_failed(got: dict, drive: str, errnos: set[int], kernel: str | None) -> dict:
    assert got["injected"] is not None, f"the run ended before the fault was injected: {got['err']}"
    assert got["rc"] == 1 and "Traceback" not in got["err"] and "internal error" not in got["err"], got["err"]
    assert f"drive {drive} failed" in got["err"]
    doc = got["doc"]
    assert doc["run"]["status"] == "drive-failed"
    [f] = [f for f in doc["conformance"]["drive_failures"] if f["drive"] == drive]
    assert f["test"] == "iops" and f["cell"] == "rnd_4K_65-35" and f["errno"] in errnos, f
    assert f["errors"] > 0 or f["errno"] == errno.ENODEV, f     # a drive gone between fio's I/Os: none counted
    if kernel is not None:
        assert any(kernel in line for line in f["kernel_log"]), f["kernel_log"]
    # every round fio completed before the fault (by fio's own output time: fault_run.py) is kept
    assert len([c for c in got["cells"] if not c[0].startswith("healthy/")]) >= got["rounds_before"] >= 1
    assert got["check"]["rc"] == 1 and got["check"]["out"].startswith("DRIVE FAILED: drive ")
    assert f"DRIVE FAILED: drive {drive} failed" in got["check"]["out"].split("conformance:")[0]
    assert got["show"]["rc"] == 0 and "Traceback" not in got["show"]["out"] + got["check"]["out"]
    assert f"drive {drive} failed" in got["show"]["out"].splitlines()[0]
    assert got["show"]["out"].splitlines()[0].startswith(f"run {got['run_id']} — drive-failed: drive ")
    return f


def test_medium_errors_on_a_range(faults):
    got = faults["errors"]
    f = assert_drive_failed(got, faults["drives"]["errors"], {errno.ENODATA}, "critical medium error")
    assert 16384 * 512 <= f["offset"] < (16384 + 4096) * 512
    assert [f["drive"] for f in got["doc"]["conformance"]["drive_failures"]] == [faults["drives"]["errors"]]


def test_drive_turns_read_only(faults):
    """`blockdev --setro` mid-run (one drive of the parallel run): the block device refuses the write itself
    (EPERM) and the kernel logs nothing."""
    assert_drive_failed(faults["parallel"], faults["drives"]["readonly"], {errno.EPERM, errno.EROFS}, None)


def test_drive_vanishes_mid_round(faults):
    """QEMU pulls the NVMe controller out (PCI hot-unplug, one drive of the parallel run): the I/O in flight
    and after it fails (ENOSPC from a removed disk's queue, EIO/ENODEV/ENXIO by timing)."""
    got, drive = faults["parallel"], faults["drives"]["vanish"]
    assert got["injected"]["rc"] == 0, got["injected"]
    f = assert_drive_failed(got, drive, {errno.EIO, errno.ENXIO, errno.ENODEV, errno.ENOSPC}, None)
    # fio counted the I/O that failed; or, where the unplug landed after fio's last I/O on it, the device is
    # missing when the round ends
    assert f["message"].startswith(f"io_u error on file {drive}: ") or (
        f["errno"] == errno.ENODEV and f["message"] == f"{drive} is gone: the kernel removed the drive during cell "
                                                       f"{f['cell']}"), f


def test_parallel_run_goes_on_without_the_failed_drives(faults):
    got, drives = faults["parallel"], faults["drives"]
    failed = {f["drive"] for f in got["doc"]["conformance"]["drive_failures"]}
    assert failed == {drives["readonly"], drives["vanish"]}
    assert f"drive {drives['healthy']} failed" not in got["check"]["out"] + got["show"]["out"] + got["err"]
    # the test ran again on the healthy drive alone, to its end, under phase healthy/: its results exist
    [iops] = got["doc"]["tests"]
    assert iops["status"] == "drive-failed" and iops["summary"] is not None
    assert any(c[0].startswith("healthy/") for c in got["cells"])


def test_stall_shorter_than_the_grace_is_latency(stall):
    """dm-delay holds every I/O STALL_MS, until one was held that long, from inside the first measured cell
    (the first read after the run's first write: tests/vm/await_cell.py): the run completes, no hang is recorded, and fio's own maximum latency of
    a cell carries the stall."""
    got = stall
    assert got["injected"] is not None and got["injected"]["rc"] == 0, got["injected"]
    assert "delay off at" in got["injected"]["err"], got["injected"]
    assert got["rc"] == 0 and "Traceback" not in got["err"], got["err"]
    assert got["doc"]["run"]["status"] == "completed" and not got["doc"]["conformance"]["drive_failures"]
    assert "stall" not in got["check"]["out"] + got["err"]
    # the delayed I/Os were measured, not killed: a cell's lat max (ns, from fio's JSON) is at least the delay
    # and far under the hang watch's grace
    assert STALL_MS * 1e6 <= max(c[3] for c in got["cells"]) < HANG_GRACE_S * 1e9, (got["cells"], got["injected"])
    # the transitions across which the device held the delayed requests (their block-layer idle runs hold the
    # moment the delay was on) store the hold as held, not as device idle: what the host left idle there is at
    # most the run's part before the held requests were submitted (under TCG a round's fio can start late), or,
    # where the table swap's suspension hid requests from the counters, "not measurable"
    on_ns = int(got["injected"]["err"].split("delay on at ")[1].split()[2])
    records = [d for r in got["rounds"] for d in [r["device_idle"].get("before"), *r["device_idle"].get("inside", [])]
               if d and d["last_io"] is not None and d["last_io"] * 1e9 <= on_ns <= d["next_io"] * 1e9]
    assert records, (on_ns, got["rounds"])
    for d in records:
        assert (d["ms"] is None and d["cause"].startswith("not measurable: ")) or d["held_ms"] >= 0.8 * STALL_MS, (
            d, got["rounds"], got["injected"])
