"""A failing drive is a result (docs/faults.md): faults injected under a real kernel while ssdpts runs, each
once some rounds are stored. scsi_debug gives medium errors on an LBA range (reads) and a disk that vanishes
(its SCSI device deleted); `blockdev --setro` a drive that turns read-only; dm-delay a multi-second stall far
shorter than the hang watch's grace. The expected outcomes come from the kernel's and fio's own words."""

from __future__ import annotations

import json
import shlex

import pytest

from vm.testbed import HERE

SD_OPTS = "/sys/bus/pseudo/drivers/scsi_debug/opts"
STALL_MS = 2000


@pytest.fixture(scope="module")
def sd(vm):
    """A 32 MiB scsi_debug disk whose reads of sectors 16384-20479 fail with a medium error once opts is 2."""
    vm.run("modprobe -r scsi_debug; modprobe scsi_debug dev_size_mb=32 medium_error_start=16384 "
           "medium_error_count=4096 opts=0 && udevadm settle 2>/dev/null; sleep 1", check=True)
    name = vm.run("ls /sys/bus/pseudo/drivers/scsi_debug/adapter0/host*/target*/*/block/", check=True).out.split()[0]
    yield f"/dev/{name}"
    vm.run("modprobe -r scsi_debug")


def fault_run(vm, inject: str, *targets: str, rounds: int = 1, name: str) -> dict:
    r = vm.run(" ".join(["python", shlex.quote(str(HERE / "fault_run.py")), f"/tmp/faults-{name}", str(rounds),
                         shlex.quote(inject), *targets]), timeout=600, check=True)
    got = json.loads(r.out.strip().splitlines()[-1])
    print(f"{name}: {r.seconds:.0f} s in the guest; run exit {got['rc']}; {got['err'].strip()}")
    print(got["show"]["out"][:1500], got["check"]["out"][:800], sep="\n")
    assert got["injected"] is not None, f"the run ended before the fault was injected: {got['err']}"
    return got


def assert_drive_failed(got: dict, drive: str, errnos: set[int], kernel: str | None) -> dict:
    assert got["rc"] == 1 and "Traceback" not in got["err"] and "internal error" not in got["err"]
    assert f"drive {drive} failed" in got["err"]
    doc = got["doc"]
    assert doc["run"]["status"] == "drive-failed"
    [f] = [f for f in doc["conformance"]["drive_failures"] if f["drive"] == drive]
    assert f["test"] == "iops" and f["cell"] == "rnd_4K_65-35" and f["errors"] > 0 and f["errno"] in errnos
    if kernel is not None:
        assert any(kernel in line for line in f["kernel_log"]), f["kernel_log"]
    # every round completed before the fault is kept
    assert len([c for c in got["cells"] if not c[0].startswith("healthy/")]) >= got["rounds_before"] >= 1
    assert got["check"]["rc"] == 1 and got["check"]["out"].startswith(f"DRIVE FAILED: drive {drive} failed")
    assert got["show"]["rc"] == 0
    assert f"drive-failed: drive {drive} failed" in got["show"]["out"].splitlines()[0]
    return f


def test_medium_errors_on_a_range(vm, sd):
    got = fault_run(vm, f"echo 2 > {SD_OPTS}", sd, name="errors")
    vm.run(f"echo 0 > {SD_OPTS}", check=True)
    f = assert_drive_failed(got, sd, {61}, "critical medium error")     # ENODATA: scsi_debug's medium error
    assert 16384 * 512 <= f["offset"] < (16384 + 4096) * 512


def test_drive_turns_read_only(vm, sd):
    got = fault_run(vm, f"blockdev --setro {sd}", sd, name="readonly")
    vm.run(f"blockdev --setrw {sd}", check=True)
    assert_drive_failed(got, sd, {1, 30}, None)     # EPERM from the block device; the kernel logs nothing


def test_parallel_run_goes_on_without_the_failed_drive(vm, sd):
    healthy = vm.disk("spare")
    got = fault_run(vm, f"echo 2 > {SD_OPTS}", sd, healthy, name="parallel")
    vm.run(f"echo 0 > {SD_OPTS}", check=True)
    assert_drive_failed(got, sd, {61}, "critical medium error")
    assert [f["drive"] for f in got["doc"]["conformance"]["drive_failures"]] == [sd]
    # the test ran again on the healthy drive alone, to its end, under phase healthy/
    [iops] = got["doc"]["tests"]
    assert iops["status"] == "drive-failed" and iops["summary"] is not None
    assert any(c[0].startswith("healthy/") for c in got["cells"])


def test_drive_vanishes_mid_round(vm, sd):
    got = fault_run(vm, f"echo 1 > /sys/block/{sd.rsplit('/', 1)[1]}/device/delete", sd, name="vanish")
    assert_drive_failed(got, sd, {5, 6, 19}, None)


def test_stall_shorter_than_the_grace_is_latency(vm):
    """dm-delay holds every I/O STALL_MS for 3 s: the run completes, and a cell's max latency shows it."""
    disk = vm.disk("spare")
    size = vm.run(f"blockdev --getsz {disk}", check=True).out.strip()
    linear, delay = f"0 {size} linear {disk} 0", f"0 {size} delay {disk} 0 {STALL_MS}"
    vm.run(f"dmsetup create tbstall --table '{linear}'", check=True)
    try:
        got = fault_run(vm, f"dmsetup load tbstall --table '{delay}' && dmsetup resume tbstall && sleep 3 && "
                            f"dmsetup load tbstall --table '{linear}' && dmsetup resume tbstall",
                        "/dev/mapper/tbstall", name="stall")
    finally:
        vm.run("dmsetup remove tbstall")
    assert got["injected"]["rc"] == 0, got["injected"]
    assert got["rc"] == 0 and "Traceback" not in got["err"], got["err"]
    assert got["doc"]["run"]["status"] == "completed"
    assert "stall" not in got["check"]["out"] + got["err"]
    assert max(c[3] for c in got["cells"]) >= STALL_MS * 1e6
