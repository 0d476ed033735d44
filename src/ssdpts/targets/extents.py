"""What a file's blocks are, from the file system's extent map (FIEMAP ioctl, linux/fiemap.h): how many bytes are
allocated and how many of those are allocated but never written ("unwritten" extents: fallocate's, which the file
system answers with zeros without reading the drive). The file-reuse study records it before and after each pass.
"""

from __future__ import annotations

import fcntl
import os
import struct
from dataclasses import dataclass

FS_IOC_FIEMAP = 0xC020660B                 # _IOWR('f', 11, struct fiemap)
FIEMAP_FLAG_SYNC = 0x1                     # flush dirty data first, so delayed allocation shows
FIEMAP_EXTENT_LAST = 0x1
FIEMAP_EXTENT_UNWRITTEN = 0x800
_HEADER = struct.Struct("=QQIIII")         # fm_start, fm_length, fm_flags, fm_mapped_extents, fm_extent_count, reserved
_EXTENT = struct.Struct("=QQQQQI12x")      # fe_logical, fe_physical, fe_length, 2 reserved, fe_flags, 3 reserved
_BATCH = 256


@dataclass
class FileState:
    """A file's size and blocks at one moment. Byte counts None: the file system keeps no extent map (tmpfs)."""

    exists: bool
    size_bytes: int = 0
    allocated_bytes: int | None = None      # bytes with blocks on the file system
    unwritten_bytes: int | None = None      # of those, allocated but never written (reads return zeros, no drive I/O)

    @property
    def written_bytes(self) -> int | None:
        if self.allocated_bytes is None or self.unwritten_bytes is None:
            return None
        return self.allocated_bytes - self.unwritten_bytes

    def describe(self) -> str:
        if not self.exists:
            return "absent"
        if self.allocated_bytes is None:
            return f"{self.size_bytes / 2**20:,.1f} MiB, extent map not available"
        return (f"{self.size_bytes / 2**20:,.1f} MiB, {self.written_bytes / 2**20:,.1f} MiB written, "
                f"{self.unwritten_bytes / 2**20:,.1f} MiB allocated unwritten")


def _extents(fd: int) -> tuple[int, int]:
    """(allocated, unwritten) bytes of the open file, walking its extent map in batches."""
    allocated = unwritten = 0
    start = 0
    while True:
        buf = bytearray(_HEADER.pack(start, 2**64 - 1 - start, FIEMAP_FLAG_SYNC, 0, _BATCH, 0)
                        + bytes(_EXTENT.size * _BATCH))
        fcntl.ioctl(fd, FS_IOC_FIEMAP, buf)
        mapped = _HEADER.unpack_from(buf)[3]
        if not mapped:
            return allocated, unwritten
        for i in range(mapped):
            logical, _, length, _, _, flags = _EXTENT.unpack_from(buf, _HEADER.size + i * _EXTENT.size)
            allocated += length
            if flags & FIEMAP_EXTENT_UNWRITTEN:
                unwritten += length
            if flags & FIEMAP_EXTENT_LAST:
                return allocated, unwritten
            start = logical + length


def file_state(path: str) -> FileState:
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return FileState(exists=False)
    try:
        size = os.fstat(fd).st_size
        try:
            allocated, unwritten = _extents(fd)
        except OSError:                       # no FIEMAP on this file system
            return FileState(True, size)
        return FileState(True, size, allocated, unwritten)
    finally:
        os.close(fd)
