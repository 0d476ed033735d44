"""The engine's side of the gates fio's cells wait on: the keeper process (realtime/gatekeeper.py, whose
docstring has the protocol and the reasons) does the timing; this records what it reports."""

from __future__ import annotations

import os
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..realtime import spawn
from ..realtime.timing import ACK_POLL_S, KEEPER_EXIT_WAIT_S, READER_JOIN_S, SET_UP_POLL_S
from ..realtime.window import create as create_window
from .hostcpu import HostCpu, cpu_count, read_ticks
from .stimulus import Snapshot


def _snapshot(words: list[str]) -> Snapshot | None:
    """The block-layer counters the keeper appended to an `s`/`f` report (None: none were)."""
    if len(words) < 5:
        return None
    return Snapshot(int(words[3]), tuple(tuple(int(x) for x in tok.split(",")) for tok in words[4:]))


@dataclass
class Gates:
    """The engine's side: makes gates, tells the keeper what each cell is, and records what it reports
    (times in CLOCK_REALTIME ns, as `time.time_ns()` returns)."""

    dir: Path
    hang_grace_s: float = 0.0       # > 0: watch time-based cells for ending this long after their due time
    on_late: Callable[[int], None] = lambda gid: None   # called with such a cell's gate (reader thread)
    fires: dict[int, list[int]] = field(default_factory=dict)    # gid -> each clone's end report
    starts: dict[int, list[int]] = field(default_factory=dict)   # gid -> each clone's release report
    opened: dict[int, int] = field(default_factory=dict)         # gid -> when the keeper opened it
    waiting: dict[int, int] = field(default_factory=dict)        # gid -> clones set up and at their gate
    clones: dict[int, int] = field(default_factory=dict)         # gid -> clones of its cell
    # /proc/stat ticks when a cell's first clone was released and when its last one ended (host CPU per cell)
    cpu_ticks: dict[int, list] = field(default_factory=dict)
    # the block layer's counters (engines/stimulus.py) at each cell's start and end, read by the keeper the
    # moment a report arrives or just before it opens a gate: its start is its gate's opening (its first clone's
    # release where a clone was not yet waiting), its end its last clone's report or its successor's gate
    # opening, whichever comes first (a time-based cell's successor is let go at its predicted end), so
    # consecutive cells never share I/O
    block_stats: list[Path] = field(default_factory=list)    # stat files the keeper reads at each report
    block_marks: dict[int, list] = field(default_factory=dict)
    waits_on: dict[int, int | None] = field(default_factory=dict)   # gid -> the gate its cell waits for
    followed_by: dict[int, int] = field(default_factory=dict)       # gid -> the gate whose cell waits for it
    runtimes_ns: dict[int, int] = field(default_factory=dict)       # gid -> a time-based cell's run (ramp included)

    def __post_init__(self) -> None:
        self.cpus = cpu_count()
        self.clock_ticks = os.sysconf("SC_CLK_TCK")
        self.dir.mkdir(parents=True, exist_ok=True)
        self.ctl = self.dir / "ctl"
        os.mkfifo(self.ctl)
        self._cond = threading.Condition()
        self._acks: set[str] = set()
        self._next = 0
        self._syncs = 0
        self._write_lock = threading.Lock()
        self._fds: dict[int, int] = {}     # gid -> the pipe's descriptor in the keeper
        self.window = self.dir / "window"      # when the block samplers must look closely (realtime/window.py)
        create_window(str(self.window))
        self.proc = spawn("gatekeeper", str(self.ctl), str(self.window), stdin=subprocess.PIPE)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if self.hang_grace_s:
            self._send(f"grace {int(self.hang_grace_s * 1e9)}")
        for path in self.block_stats:
            self._send(f"stat {path}")

    def _read(self) -> None:
        for line in self.proc.stdout:
            w = line.split()
            if w[0] == "late":
                self.on_late(int(w[1]))
                continue
            with self._cond:
                if w[0] == "n":
                    self._fds[int(w[1])] = int(w[2])
                    self._acks.add(f"n {w[1]}")
                elif w[0] == "y":
                    self._acks.add(" ".join(w))
                elif w[0] == "o":
                    self.opened.setdefault(int(w[1]), int(w[2]))
                    self._block_open(int(w[1]), _snapshot(w))
                elif w[0] == "w":
                    self.waiting[int(w[1])] = self.waiting.get(int(w[1]), 0) + 1
                elif w[0] == "s":
                    self.starts.setdefault(int(w[1]), []).append(int(w[2]))
                    if int(w[1]) not in self.cpu_ticks:      # the first clone's release only: /proc/stat once
                        self.cpu_ticks[int(w[1])] = [read_ticks(), None]
                        if int(w[1]) not in self.block_marks:     # its gate's opening did not mark it
                            self._block_mark(int(w[1]), _snapshot(w))
                elif w[0] == "f":
                    self.fires.setdefault(int(w[1]), []).append(int(w[2]))
                    gid = int(w[1])
                    # the last clone's end closes the cell (each clone reports one: read /proc/stat then, not per clone)
                    if gid in self.cpu_ticks and len(self.fires[gid]) >= self.clones.get(gid, 0):
                        self.cpu_ticks[gid][1] = read_ticks()
                        self._block_end(gid, _snapshot(w))
                self._cond.notify_all()
        with self._cond:
            self._acks.add("gone")
            self._cond.notify_all()

    def _block_mark(self, gid: int, snap: Snapshot | None) -> None:
        """Gate `gid`'s first clone was released: its cell starts, the one it waited for ends (if still open)."""
        if snap is None:
            return
        self.block_marks[gid] = [snap, None]
        self._block_end(self.waits_on.get(gid), snap)

    def _block_open(self, gid: int, snap: Snapshot | None) -> None:
        """Gate `gid` opened; the keeper read the counters just before, when none of its cell's I/O could have
        reached the device. They end the cell it waited for: its first clone's release report can reach the
        keeper late on a busy host, and counters read then held the new cell's first requests (a 64K cell's
        record had 263 small requests of the 4K cell after it). They start this cell when every clone was
        already waiting (otherwise the window would hold a process still setting up: its release starts it)."""
        if snap is None:
            return
        self._block_end(self.waits_on.get(gid), snap)
        if gid not in self.block_marks and self.waiting.get(gid, 0) >= self.clones.get(gid, 1):
            self.block_marks[gid] = [snap, None]

    def _block_end(self, gid: int | None, snap: Snapshot | None) -> None:
        mark = self.block_marks.get(gid) if gid is not None else None
        if mark is not None and mark[1] is None:
            mark[1] = snap

    def block_between(self, gid: int) -> tuple:
        """(start, end) snapshots of gate `gid`'s cell; None for one not seen."""
        start, end = self.block_marks.get(gid) or (None, None)
        return start, end

    def due_ns(self, gid: int) -> int | None:
        """When gate `gid`'s time-based cell was due to end (its last clone's release + its run, as the keeper
        predicts it); None for a cell that is not time-based or whose clones were not all released."""
        starts = self.starts.get(gid) or []
        if not self.runtimes_ns.get(gid) or len(starts) < self.clones.get(gid, 1):
            return None
        return max(starts) + self.runtimes_ns[gid]

    def overlap_ms(self, gid: int) -> float:
        """How long the cell before gate `gid`'s ran on after this cell's release (its last end report)."""
        prev = self.waits_on.get(gid)
        if prev is None or not self.fires.get(prev) or not self.starts.get(gid):
            return 0.0
        return max(0.0, (max(self.fires[prev]) - min(self.starts[gid])) / 1e6)

    def ran_on_ms(self, gid: int) -> float:
        """How long gate `gid`'s cell ran on after the next cell's release (that cell's `overlap_ms`); 0 where no
        cell waits on it or none has been released yet (a cell released after this one's end is no overlap)."""
        after = self.followed_by.get(gid)
        return 0.0 if after is None else self.overlap_ms(after)

    def _send(self, line: str) -> None:
        with self._write_lock:
            try:
                self.proc.stdin.write(line + "\n")
                self.proc.stdin.flush()
            except (BrokenPipeError, ValueError):
                pass       # the keeper is gone: the waiting jobs saw EOF and their fio process fails

    def _await(self, ack: str) -> None:
        """Until the keeper acknowledges, however long that takes while it lives (a host can stop a
        process for seconds); a keeper that has exited never will."""
        with self._cond:
            while not self._cond.wait_for(lambda: ack in self._acks or "gone" in self._acks, ACK_POLL_S):
                if self.proc.poll() is not None:
                    return

    def wait_hook(self, wait_gid: int | None, gid: int) -> str:
        """exec_prerun of gate `gid`'s cell: report that the clone is set up, block until gate `wait_gid`
        opens (a `read` of its pipe), then report the clone's release. fio appends '> FILE 2>&1' to the command: the report is
        wrapped in eval to keep its own redirection. Builtins only; `1<>`: never blocks."""
        report = f'eval "echo s{gid} 1<>{self.ctl}"'
        if wait_gid is None:
            return report
        return (f"echo w{gid} 1<>{self.ctl} && read gate < /proc/{self.proc.pid}/fd/{self._fds[wait_gid]} && "
                f"{report}")

    def fire_hook(self, gid: int) -> str:
        """exec_postrun: report one finished clone of gate `gid`'s cell (builtins only)."""
        return f'eval "echo {gid} 1<>{self.ctl}"'

    def new(self, clones: int, runtime_s: float | None = None, wait: int | None = None) -> int:
        """A closed gate for a cell of `clones` jobs that waits on gate `wait`; `runtime_s`: the cell
        runs exactly that long (time-based)."""
        with self._cond:
            gid = self._next
            self._next += 1
            self.fires[gid], self.starts[gid], self.clones[gid] = [], [], clones
            self.waits_on[gid] = wait
            if wait is not None:
                self.followed_by[wait] = gid
            self.runtimes_ns[gid] = int((runtime_s or 0) * 1e9)
        self._send(f"new {gid} {clones} {int((runtime_s or 0) * 1e9)} {-1 if wait is None else wait}")
        self._await(f"n {gid}")     # the keeper holds the pipe before any job can look for it
        if gid not in self._fds:
            raise OSError("the gatekeeper process is gone")
        return gid

    def _wait_until(self, reached: Callable[[], bool], gone: Callable[[], bool]) -> bool:
        """Block until `reached()` (True) or `gone()` or the keeper's end (False)."""
        with self._cond:
            while not self._cond.wait_for(lambda: reached() or "gone" in self._acks, SET_UP_POLL_S):
                if gone():
                    return False
            return reached()

    def wait_set_up(self, gids: list[int], wait_gid: int, gone) -> None:
        """Block until every clone of the cells at `gids` waits at its gate, gate `wait_gid` has opened
        (set-up or not, the cells are due) or `gone()` (their process ended)."""
        self._wait_until(lambda: all(self.waiting.get(g, 0) >= self.clones[g] for g in gids) or wait_gid in self.opened,
                         gone)

    def wait_ended(self, gids: list[int], gone) -> int | None:
        """Block until every clone of the cells at `gids` has reported its end: the last report's time (ns);
        None when `gone()` (their process ended) or the keeper ended first."""
        if self._wait_until(lambda: all(len(self.fires.get(g, ())) >= self.clones[g] for g in gids), gone):
            with self._cond:
                return max(t for g in gids for t in self.fires[g])
        return None

    def set_delay(self, gid: int, seconds: float) -> None:
        """Keep the device idle `seconds` after gate `gid`'s cell ends, before the waiting cell starts."""
        self._send(f"delay {gid} {int(seconds * 1e9)}")

    def open(self, gid: int) -> None:
        self._send(f"open {gid}")

    def open_unfinished(self, gid: int) -> None:
        """Open a gate whose process ended; a finished cell's requested idle still runs its course."""
        self._send(f"release {gid}")

    def sync(self) -> None:
        """Wait until every report the hooks made so far is recorded here."""
        with self._cond:
            self._syncs += 1
            n = self._syncs
        self._send(f"sync {n}")
        self._await(f"y {n}")

    def host_cpu(self, gid: int) -> HostCpu | None:
        """Whole-host CPU from the release of gate `gid`'s cell to its last clone's end."""
        start, end = self.cpu_ticks.get(gid) or (None, None)
        return HostCpu.between(start, end, self.cpus, self.clock_ticks)

    def gate_gap_ms(self, gid: int | None) -> float | None:
        """Gate-side gap: from the last clone's report of the cell before `gid` to its opening."""
        if gid is None or not self.fires.get(gid) or gid not in self.opened:
            return None
        return max(0.0, (self.opened[gid] - max(self.fires[gid])) / 1e6)

    def close(self) -> None:
        try:
            self.proc.stdin.close()       # the keeper exits; every FIFO still waited on reads EOF
        except (BrokenPipeError, OSError):
            pass
        try:
            self.proc.wait(timeout=KEEPER_EXIT_WAIT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(timeout=READER_JOIN_S)


