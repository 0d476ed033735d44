"""The zram device the benches measure on: configured for the bench, always reset afterwards."""

from __future__ import annotations

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
