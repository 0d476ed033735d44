"""Which fio ssdpts runs, and which fio versions it supports.

The binary is `fio` on the PATH, or the one named by the environment variable SSDPTS_FIO (to test with a
build of another version without installing it). Every version in TESTED was built from its release tag
and ran the quick suite on a loop device; its JSON output is kept under tests/fixtures/fio/<version>/
and parsed in CI (docs/fio-versions.md says what differs between them).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from ..errors import SsdptsError
from ..realtime.timing import TOOL_TIMEOUT_S
from ..workload import Workload

FIO_ENV = "SSDPTS_FIO"
# RHEL 8's fio, the oldest tested: the quick suite runs and its JSON (json+ total-latency bins and
# percentiles, status-interval streams) parses as the newest's; older releases are untested, so refused
MIN_FIO = (3, 19)
# RHEL 8, Ubuntu 22.04, Debian 12, Ubuntu 24.04, newest release when tested
TESTED = ("fio-3.19", "fio-3.28", "fio-3.33", "fio-3.36", "fio-3.42")

_VERSION = re.compile(r"fio-(\d+)\.(\d+)")


def fio_binary() -> str:
    """The fio ssdpts runs: $SSDPTS_FIO when set (a fio executable's path or name), else `fio` on the PATH."""
    named = os.environ.get(FIO_ENV, "")
    if not named:
        return "fio"
    found = shutil.which(named)      # a path, or a name looked up on the PATH
    if found is None:
        raise SsdptsError(f"{FIO_ENV}={named!r} is not an executable file: set it to the path of a fio "
                          f"binary (e.g. /usr/local/bin/fio) or unset it to use fio on the PATH")
    return str(Path(found).resolve())


def parse_version(printed: str) -> tuple[int, int] | None:
    """(major, minor) from what `fio --version` prints ('fio-3.33', 'fio-3.42-12-gabc123'); None if not fio."""
    m = _VERSION.match(printed.strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


def fio_version(binary: str | None = None) -> str:
    """The version `binary` (default: fio_binary()) prints; refuses anything that is not a supported fio."""
    binary = binary or fio_binary()
    path = shutil.which(binary)
    if not path:
        raise SsdptsError("fio is not installed: install it with 'apt-get install fio' (or run 'make demo', "
                          f"which does), or set {FIO_ENV} to a fio binary")
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, errors="replace",
                             timeout=TOOL_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SsdptsError(f"cannot run {path} --version ({e}): give a fio binary") from None
    version = out.stdout.strip()
    found = parse_version(version)
    if found is None:
        printed = version.splitlines()[0][:60] if version else ""
        raise SsdptsError(f"{path} is not fio (its --version printed {printed!r}): "
                          f"give a fio binary, e.g. {FIO_ENV}=/usr/local/bin/fio")
    if found < MIN_FIO:
        raise SsdptsError(f"{path} is {version}, older than the oldest supported fio-{MIN_FIO[0]}.{MIN_FIO[1]}: "
                          f"install a newer fio, or build one and point {FIO_ENV} at it (docs/fio-versions.md)")
    return version


@dataclass(frozen=True)
class NewerOption:
    """A fio option ssdpts writes for some cells that older supported releases lack."""

    option: str                            # as the job file has it, and what it does
    first: tuple[int, int]                 # the first release that has it
    used_by: Callable[[Workload], bool]    # whether a cell's job sets it


NEWER_OPTIONS = (
    NewerOption("sync=dsync (O_DSYNC writes)", (3, 24), lambda w: w.sync == "dsync"),      # before: sync was O_SYNC only
    NewerOption("thinktime_iotime", (3, 28), lambda w: bool(w.thinktime_iotime_s)),
    NewerOption("read_iolog of a version 3 iolog (a kept trace's replay)", (3, 31), lambda w: bool(w.trace)),
)
# fio before this sleeps between replayed iolog I/Os without reaping completions (fio commit b85c01f7, "iolog.c:
# fix inaccurate clat when replay trace"): a replayed I/O's latency includes the wait for the next one
IOLOG_CLAT_FIXED = (3, 36)


def check_options(version: str, planned: Sequence[tuple[str, Workload]]) -> None:
    """Refuse up front a planned (test, cell) whose fio option `version` lacks (fio would drop the job
    mid-run); one line naming the test, the cell, the option, the release that has it and the fix."""
    found = parse_version(version)
    if found is None:                      # not fio (the simulated drive)
        return
    for opt in NEWER_OPTIONS:
        test, cell = next(((t, w) for t, w in planned if found < opt.first and opt.used_by(w)), (None, None))
        if cell is not None:
            raise SsdptsError(f"{version} lacks {opt.option}, which test {test} needs (cell {cell.name}; fio >= "
                              f"{opt.first[0]}.{opt.first[1]}): set {FIO_ENV} to a newer fio, or leave {test} "
                              f"out of --tests")
