"""The devices the benches measure on (zram, RAM-backed loop): configured for the bench, always released."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

ZRAM = Path("/sys/block/zram0")


@contextmanager
def zram(size: int):
    """/dev/zram0 with `size` bytes; exits with a message if someone else configured it."""
    if (ZRAM / "disksize").read_text().strip() != "0":
        print("/dev/zram0 is in use; reset it first (echo 1 > /sys/block/zram0/reset)", file=sys.stderr)
        raise SystemExit(2)
    (ZRAM / "disksize").write_text(str(size))
    try:
        yield "/dev/zram0"
    finally:
        (ZRAM / "reset").write_text("1")


@contextmanager
def fresh_zram(size: int):
    """A zram device of its own (hot_add), so a bench never competes with tests for /dev/zram0."""
    control = Path("/sys/class/zram-control")
    if not (control / "hot_add").exists():
        print("this kernel has no zram hot_add (modprobe zram)", file=sys.stderr)
        raise SystemExit(2)
    index = int((control / "hot_add").read_text())
    node = Path(f"/sys/block/zram{index}")
    try:
        (node / "disksize").write_text(str(size))
        yield f"/dev/zram{index}"
    finally:
        (node / "reset").write_text("1")
        (control / "hot_remove").write_text(str(index))


def fill(dev: str) -> None:
    """Write the device once, so reads hit stored pages (zram answers unwritten pages much faster)."""
    subprocess.run(["fio", "--name=fill", f"--filename={dev}", "--rw=write", "--bs=1M", "--direct=1",
                    "--ioengine=libaio", "--iodepth=8", "--output=/dev/null"], check=True)


@contextmanager
def loop_device(size: int, base: Path = Path("/dev/shm")):
    """A loop device with direct I/O on a file in `base` (default RAM-backed: nothing reaches the host's disks)."""
    backing = base / f"ssdpts-bench-{os.getpid()}.img"
    with open(backing, "wb") as f:
        f.truncate(size)
    dev = subprocess.check_output(["losetup", "--direct-io=on", "-f", "--show", str(backing)], text=True).strip()
    try:
        yield dev
    finally:
        subprocess.run(["losetup", "-d", dev], capture_output=True)
        backing.unlink(missing_ok=True)
