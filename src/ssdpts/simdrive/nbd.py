"""NBD server exposing the simulated SSD in real time.

``serve(params, socket_path)`` listens on a unix socket and speaks the
fixed-newstyle NBD protocol (options EXPORT_NAME, GO, INFO, LIST, ABORT;
commands READ, WRITE, TRIM, FLUSH, DISC; simple replies). Any NBD client can
use it, e.g. fio's nbd engine::

    fio --name=t --ioengine=nbd --uri='nbd+unix:///?socket=/tmp/sim.sock' \\
        --rw=randwrite --bs=4k --iodepth=4 --runtime=10 --time_based

Timing: simulated time runs at wall-clock speed from the moment the server
starts. Each request is submitted to the model at its arrival time and its
reply is sent when the model says it completes (the server sleeps until
then), so the client observes the model's latency and throughput. Gaps with
no request in flight are passed to the model as idle time (background GC /
SLC folding run). If the server cannot keep up (Python overhead is tens of
µs per request), requests simply arrive "late"; use it at rates of a few
thousand IOPS or a slowed-down preset. ``SimNbdServer.reply_timing()`` says
how far the host kept it from the model's time: replies sent after their due
time, and time with nothing in flight (the client's turn-around), so a
client's figure can be told apart from a busy host's.

Data is NOT stored: writes are discarded and reads return zeros. The server
is a timing model, not a disk.
"""

from __future__ import annotations

import heapq
import os
import socket
import stat
import struct
import threading
import time
from dataclasses import dataclass
from typing import Any

from ..errors import SsdptsError
from ..inputs import output_file

NBDMAGIC = 0x4E42444D41474943  # "NBDMAGIC"
IHAVEOPT = 0x49484156454F5054  # "IHAVEOPT"
REPLY_MAGIC_OPT = 0x3E889045565A9
REQUEST_MAGIC = 0x25609513
SIMPLE_REPLY_MAGIC = 0x67446698

FLAG_FIXED_NEWSTYLE = 1 << 0
FLAG_NO_ZEROES = 1 << 1
CFLAG_NO_ZEROES = 1 << 1

OPT_EXPORT_NAME = 1
OPT_ABORT = 2
OPT_LIST = 3
OPT_INFO = 6
OPT_GO = 7

REP_ACK = 1
REP_SERVER = 2
REP_INFO = 3
REP_ERR_UNSUP = (1 << 31) | 1
REP_ERR_INVALID = (1 << 31) | 3

INFO_EXPORT = 0
INFO_BLOCK_SIZE = 3

TFLAG_HAS_FLAGS = 1 << 0
TFLAG_SEND_FLUSH = 1 << 2
TFLAG_SEND_FUA = 1 << 3
TFLAG_SEND_TRIM = 1 << 5
TFLAG_CAN_MULTI_CONN = 1 << 8

CMD_READ, CMD_WRITE, CMD_DISC, CMD_FLUSH, CMD_TRIM = 0, 1, 2, 3, 4
CMD_WRITE_ZEROES = 6

EIO, EINVAL, ENOSPC, ENOTSUP = 5, 22, 28, 95

_OPS = {CMD_READ: "read", CMD_WRITE: "write", CMD_FLUSH: "flush", CMD_TRIM: "trim",
        CMD_WRITE_ZEROES: "write"}


@dataclass(frozen=True)
class ReplyTiming:
    """How well the server kept the model's time. Each reply is due at the model's completion time (on the
    wall clock); a busy host wakes the reply thread late, and the client then sees the host, not the model."""

    replies: int
    late_total_s: float    # over all replies: sent minus due
    late_max_s: float
    # time with no request in flight between a reply and the next request: the client's turn-around (its own
    # and the host's), time the model sat idle that a client keeping its queue full would not have left
    empty_s: float

    def share_of(self, seconds: float, slots: int = 1) -> float:
        """The part of a client's `seconds` (fio's runtime) lost to the host: late replies (spread over `slots`,
        the client's queue depth) and time with nothing in flight: about the share of the model's rate missing
        from the client's for those reasons (an estimate: a late reply at a deep queue may cost nothing)."""
        return (self.late_total_s / slots + self.empty_s) / seconds if seconds > 0 else 0.0


class SimNbdServer:
    """Threaded NBD server around one ``SimDrive`` (shared by all connections).

    Per connection a reader thread parses requests and submits them to the
    model at their arrival time; a writer thread sends each reply when the
    simulated completion time is reached (``threading.Condition`` timed
    waits: ~0.1 ms precision, unlike asyncio's 1 ms timer granularity).
    """

    def __init__(self, params: dict[str, Any] | Any, socket_path: str, *, export_name: str = ""):
        from ssdpts._sim import SimDrive

        self.drive = params if isinstance(params, SimDrive) else SimDrive(params)
        self.socket_path = socket_path
        self.export_name = export_name
        self.size = self.drive.capacity_bytes
        self.block = self.drive.logical_block_size
        self.lock = threading.Lock()  # guards the drive and `inflight`
        self.inflight = 0
        self.t0_wall = 0
        self.t0_sim = 0
        self.requests = 0
        self._replies = 0
        self._late_total_ns = 0
        self._late_max_ns = 0
        self._empty_ns = 0
        self._empty_since: int | None = None   # when the last request in flight was answered
        self._sock: socket.socket | None = None
        self._threads: list[threading.Thread] = []

    # ---------------------------------------------------------------- time
    def sim_now(self) -> int:
        return self.t0_sim + (time.monotonic_ns() - self.t0_wall)

    def wall_ns_of(self, sim_ns: int) -> int:
        return self.t0_wall + (sim_ns - self.t0_sim)

    def reply_timing(self) -> ReplyTiming:
        """How late the replies sent so far were against the model's completion times."""
        with self.lock:
            return ReplyTiming(self._replies, self._late_total_ns / 1e9, self._late_max_ns / 1e9,
                               self._empty_ns / 1e9)

    # ---------------------------------------------------------------- protocol
    @staticmethod
    def _recv(conn: socket.socket, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = conn.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("client closed")
            buf += chunk
        return bytes(buf)

    def _handshake(self, conn: socket.socket) -> bool:
        conn.sendall(struct.pack(">QQH", NBDMAGIC, IHAVEOPT, FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES))
        (cflags,) = struct.unpack(">I", self._recv(conn, 4))
        no_zeroes = bool(cflags & CFLAG_NO_ZEROES)
        tflags = TFLAG_HAS_FLAGS | TFLAG_SEND_FLUSH | TFLAG_SEND_TRIM | TFLAG_SEND_FUA | TFLAG_CAN_MULTI_CONN

        def opt_reply(opt: int, rtype: int, data: bytes = b"") -> None:
            conn.sendall(struct.pack(">QIII", REPLY_MAGIC_OPT, opt, rtype, len(data)) + data)

        while True:
            magic, opt, length = struct.unpack(">QII", self._recv(conn, 16))
            if magic != IHAVEOPT:
                return False
            data = self._recv(conn, length) if length else b""
            if opt == OPT_EXPORT_NAME:
                conn.sendall(struct.pack(">QH", self.size, tflags) + (b"" if no_zeroes else b"\0" * 124))
                return True
            if opt == OPT_ABORT:
                opt_reply(opt, REP_ACK)
                return False
            if opt == OPT_LIST:
                name = self.export_name.encode()
                opt_reply(opt, REP_SERVER, struct.pack(">I", len(name)) + name)
                opt_reply(opt, REP_ACK)
            elif opt in (OPT_INFO, OPT_GO):
                if len(data) < 6:
                    opt_reply(opt, REP_ERR_INVALID)
                    continue
                opt_reply(opt, REP_INFO, struct.pack(">HQH", INFO_EXPORT, self.size, tflags))
                opt_reply(opt, REP_INFO, struct.pack(">HIII", INFO_BLOCK_SIZE, 1, self.block, 32 << 20))
                opt_reply(opt, REP_ACK)
                if opt == OPT_GO:
                    return True
            else:  # STRUCTURED_REPLY, META_CONTEXT, EXTENDED_HEADERS, STARTTLS, ...
                opt_reply(opt, REP_ERR_UNSUP)

    def _submit(self, cmd: int, offset: int, length: int) -> tuple[int, int]:
        """Returns (simulated completion ns, errno)."""
        op = _OPS.get(cmd)
        with self.lock:
            now = self.sim_now()
            self.inflight += 1
            if op is None:
                return now, EINVAL
            if offset + length > self.size:
                return now, (ENOSPC if cmd in (CMD_WRITE, CMD_WRITE_ZEROES) else EINVAL)
            if self.inflight == 1:
                if self._empty_since is not None:
                    self._empty_ns += time.monotonic_ns() - self._empty_since
                # idle gap with nothing in flight: let background GC / folding run
                clock = self.drive.clock_ns
                if now > clock:
                    self.drive.idle((now - clock) / 1e9)
            return self.drive.submit(op, offset, length, now), 0

    def _connection(self, conn: socket.socket) -> None:
        heap: list[tuple[int, int, bytes]] = []
        cond = threading.Condition()
        closing = [False]

        def writer() -> None:
            while True:
                with cond:
                    while True:
                        if heap:
                            wake = self.wall_ns_of(heap[0][0])
                            delay = (wake - time.monotonic_ns()) / 1e9
                            if delay <= 0:
                                _, _, msg = heapq.heappop(heap)
                                late = -int(delay * 1e9)
                                break
                            cond.wait(delay)
                        elif closing[0]:
                            return
                        else:
                            cond.wait()
                with self.lock:
                    self.inflight -= 1
                    self._replies += 1
                    self._late_total_ns += late
                    self._late_max_ns = max(self._late_max_ns, late)
                    if self.inflight == 0:
                        self._empty_since = time.monotonic_ns()
                try:
                    conn.sendall(msg)
                except OSError:
                    return

        wt = threading.Thread(target=writer, daemon=True)
        seq = 0
        try:
            if not self._handshake(conn):
                return
            wt.start()
            while True:
                magic, _flags, cmd, handle, offset, length = struct.unpack(">IHHQQI", self._recv(conn, 28))
                if magic != REQUEST_MAGIC:
                    break
                if cmd == CMD_WRITE:
                    self._recv(conn, length)  # data is discarded
                if cmd == CMD_DISC:
                    break
                done, err = self._submit(cmd, offset, length)
                msg = struct.pack(">IIQ", SIMPLE_REPLY_MAGIC, err, handle)
                if cmd == CMD_READ and not err:
                    msg += bytes(length)  # data is not stored: zeros
                self.requests += 1
                seq += 1
                with cond:
                    heapq.heappush(heap, (done, seq, msg))
                    cond.notify()
        except (ConnectionError, OSError, struct.error):
            pass
        finally:
            with cond:
                closing[0] = True
                cond.notify()
            if wt.is_alive():
                wt.join()
            try:
                conn.close()
            except OSError:
                pass

    # ---------------------------------------------------------------- lifecycle
    def start(self) -> None:
        if os.path.exists(self.socket_path):
            os.unlink(self.socket_path)
        self.t0_sim = self.drive.clock_ns
        self.t0_wall = time.monotonic_ns()
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(self.socket_path)
        s.listen(64)
        s.settimeout(0.1)
        self._sock = s

    def serve(self, stop: threading.Event | None = None) -> None:
        assert self._sock is not None, "call start() first"
        try:
            while stop is None or not stop.is_set():
                try:
                    conn, _ = self._sock.accept()
                except socket.timeout:
                    continue
                conn.settimeout(None)
                t = threading.Thread(target=self._connection, args=(conn,), daemon=True)
                t.start()
                self._threads.append(t)
        finally:
            self.close()

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        try:
            os.unlink(self.socket_path)
        except OSError:
            pass


_SUN_PATH_MAX = 107        # sockaddr_un.sun_path holds 108 bytes with the terminating NUL


def socket_file(path: str) -> str:
    """--socket, checked before anything starts: a new name (or an old socket, replaced) in a directory that
    exists and may be written, short enough for a unix socket address. A file of another kind is never removed."""
    if os.path.lexists(path) and not stat.S_ISSOCK(os.lstat(path).st_mode):
        raise SsdptsError(f"--socket {path} exists and is not a socket; give a new path (it would be replaced)")
    if not os.path.lexists(path):
        output_file(path, "--socket")
    if len(os.fsencode(os.path.abspath(path))) > _SUN_PATH_MAX:
        raise SsdptsError(f"--socket {path} is longer than a unix socket address allows ({_SUN_PATH_MAX} bytes); "
                          "give a shorter path, e.g. /tmp/sim.sock")
    return path


def serve(params: dict[str, Any] | Any, socket_path: str, *, ready: threading.Event | None = None,
          stop: threading.Event | None = None) -> None:
    """Serve the simulated drive on a unix socket until interrupted.

    ``params``: a dict from ``load_params()`` (or a ``SimDrive``). ``ready``
    is set once the socket accepts connections; setting ``stop`` shuts the
    server down (for tests / embedding in a thread).
    """
    srv = SimNbdServer(params, socket_path)
    srv.start()
    if ready is not None:
        ready.set()
    try:
        srv.serve(stop)
    except KeyboardInterrupt:
        pass


__all__ = ["serve", "SimNbdServer", "ReplyTiming"]
