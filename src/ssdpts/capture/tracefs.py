"""Live capture from the kernel's block tracepoints (`block_rq_issue`, `block_rq_complete`) through tracefs.

Read-only: nothing is written to the device; the device is not even opened (its numbers come from stat,
its size and partition offset from sysfs). The capture uses a tracefs instance of its own
(instances/ssdpts-PID-MAJ-MIN), so parallel captures and other tracers do not see each other's events;
the instance is removed on every exit path, and instances left by a killed capture are removed by the
next one. The instance's clock is `mono`, so event times compare across CPUs and with time.monotonic().
"""

from __future__ import annotations

import errno
import heapq
import os
import re
import stat
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ..errors import SsdptsError
from ..realtime.timing import TOOL_TIMEOUT_S
from .reduce import SECTOR, IoEvent, op_of_rwbs

TRACEFS_MOUNTS = (Path("/sys/kernel/tracing"), Path("/sys/kernel/debug/tracing"))
EVENTS = ("block_rq_issue", "block_rq_complete")
INSTANCE_PREFIX = "ssdpts-"
BUFFER_KB = 8192            # per CPU: a few seconds of a busy device between two reads
REORDER_S = 0.5             # events are handed on this long after they happened (see TraceSession.events)

# "fio-16619 [001] ..... 16957.662145: block_rq_issue: 7,0 R 4096 () 7904 + 8 be,0,4 [fio]" (the part
# after the task and CPU; older kernels print no ioprio, "[000] d..1." flags vary)
_LINE = re.compile(r"\s(\d+\.\d+): (block_rq_issue|block_rq_complete): (\d+),(\d+) (\S+) (?:(\d+) )?\(.*?\) "
                   r"(\d+) \+ (\d+)")
_LOST = re.compile(r"LOST (\d+) EVENTS")


@dataclass(frozen=True)
class BlockDevice:
    """The captured device: where its requests appear in the trace and which sectors are its own."""

    path: str
    major: int               # the whole disk whose requests carry the events (a partition's parent)
    minor: int
    first_sector: int        # a partition's start on that disk; 0 for a whole disk
    sectors: int
    own: int = 0             # the path's own dev_t (a partition's, not its disk's): bios carry it
    bio_based: bool = False  # no request queue (zram, device-mapper, md): its I/O is seen as bios only

    @property
    def in_flight_file(self) -> Path:
        """The kernel's count of this device's requests in flight ("reads writes")."""
        return Path(f"/sys/dev/block/{self.own >> 20}:{self.own & ((1 << 20) - 1)}/inflight")

    @property
    def size_bytes(self) -> int:
        return self.sectors * SECTOR

    @property
    def event_filter(self) -> str:
        """tracefs filter: this disk's requests (the kernel's dev_t is MAJOR << 20 | MINOR), its sectors."""
        f = f"dev == {(self.major << 20) | self.minor}"
        if self.first_sector:
            f += f" && sector >= {self.first_sector} && sector < {self.first_sector + self.sectors}"
        return f


def block_device(path: str, bios: bool = False) -> BlockDevice:
    """The device at `path`, or one line saying why it cannot be captured. `bios`: a device without a request
    queue of its own is taken (its bios are traced) rather than refused."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise SsdptsError(f"{path}: {e.strerror}; give a block device such as /dev/nvme0n1") from None
    if not stat.S_ISBLK(st.st_mode):
        raise SsdptsError(f"{path} is not a block device; capture reads a block device's requests "
                          "(e.g. /dev/nvme0n1); for fio's iolog or blktrace files use --from-iolog/--from-blktrace")
    sysfs = Path(f"/sys/dev/block/{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}")
    sectors = int((sysfs / "size").read_text())
    disk, first = sysfs, 0
    if (sysfs / "partition").exists():
        disk, first = sysfs.resolve().parent, int((sysfs / "start").read_text())
    own = (os.major(st.st_rdev) << 20) | os.minor(st.st_rdev)
    if not (disk / "mq").is_dir() and bios:
        major, minor = (int(x) for x in (disk / "dev").read_text().split(":"))
        return BlockDevice(path, major, minor, first, sectors, own, bio_based=True)
    if not (disk / "mq").is_dir():
        below = sorted(p.name for p in (disk / "slaves").iterdir()) if (disk / "slaves").is_dir() else []
        raise SsdptsError(f"{path} passes its I/O to other devices without a request queue of its own "
                          f"(device-mapper, md, zram); capture a disk below it{': ' + ', '.join(below) if below else ''}")
    major, minor = (int(x) for x in (disk / "dev").read_text().split(":"))
    return BlockDevice(path, major, minor, first, sectors, own)


def tracefs_root() -> Path:
    for root in TRACEFS_MOUNTS:
        if (root / "events" / "block" / "block_rq_issue").is_dir():
            return root
    if _mount_tracefs(TRACEFS_MOUNTS[0]) and (TRACEFS_MOUNTS[0] / "events" / "block" / "block_rq_issue").is_dir():
        return TRACEFS_MOUNTS[0]
    raise SsdptsError("no block tracepoints in tracefs (/sys/kernel/tracing/events/block/); mount it with "
                      "'mount -t tracefs nodev /sys/kernel/tracing' (a kernel with CONFIG_BLK_DEV_IO_TRACE)")


def _mount_tracefs(where: Path) -> bool:
    """Mount tracefs where the kernel offers its mount point and nothing is mounted (a fresh machine without
    systemd's sys-kernel-tracing.mount): what the refusal would otherwise ask a root user to do by hand. The
    mount stays, as systemd would have left it."""
    if os.geteuid() != 0 or not where.is_dir() or os.path.ismount(where):
        return False
    try:
        return subprocess.run(["mount", "-t", "tracefs", "nodev", str(where)], capture_output=True,
                              timeout=TOOL_TIMEOUT_S).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def parse_line(line: str, device: BlockDevice) -> IoEvent | None:
    """One trace_pipe line as an event (offsets relative to the device), or None for other lines."""
    m = _LINE.search(line)
    if not m:
        return None
    t, name, _, _, rwbs, nbytes, sector, nr = m.groups()
    size = int(nr) * SECTOR or int(nbytes or 0)
    return IoEvent(float(t), name == "block_rq_complete", op_of_rwbs(rwbs),
                   (int(sector) - device.first_sector) * SECTOR, size)


def lost_events(line: str) -> int:
    m = _LOST.search(line)
    return int(m.group(1)) if m else 0


def require_root(what: str) -> None:
    """One line rather than a permission error from deep in tracefs."""
    if os.geteuid() != 0:
        raise SsdptsError(f"{what} reads the kernel's block tracepoints (tracefs), which only root may do; "
                          "run it as root (e.g. sudo ssdpts capture ...)")


def open_instance(instance: Path, device_path: str, buffer_kb: int) -> None:
    """Create tracefs instance `instance` (after removing those of killed captures) with the monotonic clock
    and `buffer_kb` per CPU; one line when it cannot be made. The caller removes it (`_remove`)."""
    _remove_stale(instance.parent)
    try:
        instance.mkdir()
    except PermissionError:
        raise SsdptsError(f"cannot create a tracefs instance in {instance.parent} (permission denied); "
                          "capture as root") from None
    except FileExistsError:
        raise SsdptsError(f"this process already captures {device_path} ({instance})") from None
    try:
        (instance / "trace_clock").write_text("mono")
        (instance / "buffer_size_kb").write_text(str(buffer_kb))
    except BaseException:
        _remove(instance)
        raise


def _remove_stale(instances: Path) -> None:
    """Instances of captures that were killed (their pid is gone): disable and remove them."""
    for inst in instances.glob(f"{INSTANCE_PREFIX}*"):
        pid = inst.name[len(INSTANCE_PREFIX):].split("-")[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            _remove(inst)


def _remove(inst: Path) -> None:
    try:
        (inst / "events" / "enable").write_text("0")
    except OSError:
        pass
    for _ in range(50):     # rmdir is refused (EBUSY) while a reader still holds trace_pipe
        try:
            inst.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as e:
            if e.errno != errno.EBUSY:
                return
            time.sleep(0.1)


class TraceSession:
    """A tracefs instance recording one device's issues and completions; use as a context manager.

    `read()` returns the events that arrived since the last call (never blocks); `start` is the capture's
    start on the events' clock (CLOCK_MONOTONIC)."""

    def __init__(self, device: BlockDevice, events: tuple[str, ...] = EVENTS):
        self.device = device
        self.names = events      # the tracepoints recorded (run --trace-stimulus reads completions only)
        self.lost = 0
        self.start = 0.0
        self._fd: int | None = None
        self._tail = b""
        self._pending: list[tuple[float, int, IoEvent]] = []     # a heap: (time, arrival, event)
        self._seq = 0
        root = tracefs_root()
        self.instance = root / "instances" / f"{INSTANCE_PREFIX}{os.getpid()}-{device.major}-{device.minor}"

    def __enter__(self) -> "TraceSession":
        open_instance(self.instance, self.device.path, BUFFER_KB)
        try:
            for name in self.names:
                (self.instance / "events" / "block" / name / "filter").write_text(self.device.event_filter)
            self._fd = os.open(self.instance / "trace_pipe", os.O_RDONLY | os.O_NONBLOCK)
            for name in self.names:
                (self.instance / "events" / "block" / name / "enable").write_text("1")
            self.start = time.monotonic()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def stop(self) -> None:
        """Stop recording (what is in the buffer can still be read)."""
        for name in self.names:
            try:
                (self.instance / "events" / "block" / name / "enable").write_text("0")
            except OSError:
                pass
        time.sleep(0.05)        # events being committed on other CPUs land in the buffer

    def events(self, before: float | None) -> Iterator[IoEvent]:
        """The events recorded before `before` (CLOCK_MONOTONIC; None: all so far), in time order.

        trace_pipe merges the CPUs' buffers by time, but only among the events already committed: a
        completion read on one CPU can come out before its issue, still being committed on another. So
        events wait here until they are REORDER_S old, then come out sorted."""
        self._read()
        while self._pending and (before is None or self._pending[0][0] < before):
            yield heapq.heappop(self._pending)[2]

    def read_lines(self) -> list[bytes]:
        """The complete lines trace_pipe has for us now, unparsed (never blocks)."""
        out: list[bytes] = []
        while self._fd is not None:
            try:
                chunk = os.read(self._fd, 1 << 20)
            except BlockingIOError:
                break
            if not chunk:
                break
            lines = (self._tail + chunk).split(b"\n")
            self._tail = lines.pop()
            out += lines
        return out

    def _read(self) -> None:
        for raw in self.read_lines():
            line = raw.decode("ascii", "replace")
            ev = parse_line(line, self.device)
            if ev is not None:
                self._seq += 1
                heapq.heappush(self._pending, (ev.t, self._seq, ev))
            else:
                self.lost += lost_events(line)

    def __exit__(self, *exc) -> None:
        self.stop()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        _remove(self.instance)
