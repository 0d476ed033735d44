"""The run's exclusive hold on a block device (O_EXCL open): nobody can mount it or start a second ssdpts run on it.
A file-system study lets go of it while it runs mkfs, mount or blkdiscard itself (`released`)."""

from __future__ import annotations

import errno
import os
from contextlib import contextmanager
from typing import Iterator

from ..errors import SsdptsError

_held: dict[str, int] = {}      # device path -> the O_EXCL file descriptor of this process


def _claim(path: str) -> int:
    try:
        return os.open(path, os.O_RDONLY | os.O_EXCL)
    except OSError as e:
        if e.errno == errno.EBUSY:
            raise SsdptsError(f"refusing {path}: it is in use (mounted, a RAID/LVM member, or another "
                              "ssdpts run); stop that use first") from None
        raise


@contextmanager
def held(path: str) -> Iterator[None]:
    """Hold `path` exclusively for the block."""
    _held[path] = _claim(path)
    try:
        yield
    finally:
        fd = _held.pop(path, None)      # None: a study could not take it back (it said so)
        if fd is not None:
            os.close(fd)


@contextmanager
def released(path: str) -> Iterator[None]:
    """Let go of this process's hold on `path` (if it has one) for the block, and take it back after."""
    fd = _held.pop(path, None)
    if fd is None:
        yield
        return
    os.close(fd)
    try:
        yield
    finally:
        _held[path] = _claim(path)
