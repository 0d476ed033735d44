"""The gatekeeper: the small process that lets each fio cell go the moment the one before it ends.

Every fio job of a cell waits in `exec_prerun` on its gate, a pipe the keeper holds: the job's shell
opens it through `/proc/KEEPER/fd/N` and its `read` blocks until the keeper writes a line. The keeper opens a gate at the previous cell's predicted end (time-based cells: the
last clone's start + runtime), when every clone of the previous cell has reported its end
(`exec_postrun`), or after a requested idle. It runs apart from the engine's Python process because
there the timers and the hooks' reports waited for the GIL and for the main thread's work (parsing
fio's JSON, committing rounds): 5-25 ms late at round boundaries on a busy host, all of it device
idle. Here it is one single-threaded loop at the lowest real-time priority where allowed, stdlib
only (started by path, without the package), woken by `select` on its inputs and its next timer.

Why a pipe and not a lock file: a waiting job is one shell blocked in `read` (two wake-ups to the
first I/O: the shell, then fio's thread) where `flock` added its own process. Why through /proc:
when the keeper dies (it dies with the engine) the pipe loses its only writer and every waiting
`read` sees EOF, and a shell that comes later finds no /proc entry and fails at once: no shell is
ever left blocked behind a dead engine (a named FIFO would block a late one in open() for good).

Protocol, one line each. Engine -> keeper (stdin):
  new GID CLONES RUNTIME_NS WAIT
                              a closed gate for a cell of CLONES jobs that waits on gate WAIT (-1: none);
                              RUNTIME_NS > 0: the cell runs exactly that long. Acknowledged `n GID FD`
                              (the pipe's descriptor in the keeper).
  delay GID IDLE_NS           keep the device idle IDLE_NS after GID's cell ends before opening GID
  open GID                    open now
  release GID                 open now unless a requested idle is under way (a process ended)
  grace NS                    a time-based cell whose end reports have not all come NS after its
                              predicted end is reported `late GID T` (fio stopped making progress); so is
                              one none of whose clones has started runtime + NS after its turn came (the
                              gate it waits on opened): a fio stopped before it reached that cell, whose
                              predicted end is never known. (A session's first cell waits on no gate: it
                              is watched once its clones have started, like every cell.)
  sync N                      acknowledged `y N` once every report received before it is out
  stat PATH                   append the block-layer counters of PATH (/sys/block/DEV/stat) to every `s`
                              and `f` report and to every `o`: read here, the moment the report arrives
                              (not when the engine's thread gets to it), and for `o` just before the gate's
                              line is written, when none of its cell's I/O can have reached the device
                              (engines/stimulus.py)
fio's hooks -> keeper (the ctl FIFO): `wGID` (a clone of GID's cell is set up and waits), `sGID` (it
was let go), `GID` (it finished).
Keeper -> engine (stdout), times CLOCK_REALTIME ns: `w GID T`, `s GID T [STAT]`, `f GID T [STAT]`, `o GID T [STAT]`
(gate opened), `late GID T`. STAT, after `stat` commands: CLOCK_MONOTONIC ns, then each file's fields joined
by commas.
"""

from __future__ import annotations

import heapq
import os
import select
import sys
import time
from dataclasses import dataclass

from . import prefer_cpu
from .timing import LOOK_AFTER_NS, LOOK_BEFORE_NS
from .window import Window

SPARE_LINES = 16384      # one line lets one waiting job go: enough for every clone, late ones too


@dataclass
class _Gate:
    fds: tuple[int, int]           # the pipe (read end, write end)
    clones: int
    runtime_ns: int
    wait: int                      # the gate this cell waits on (closed once the cell is under way)
    delay_ns: int = 0
    starts: int = 0
    fires: int = 0
    opened: bool = False
    due_ns: int | None = None      # when the scheduled opening falls
    timed: bool = False            # the scheduled opening ends a requested idle


class _Keeper:
    """The child's state machine (one thread: no locks)."""

    def __init__(self, out, window: Window | None = None):
        self.out = out
        self.gates: dict[int, _Gate] = {}
        self.timers: list[tuple[int, int]] = []     # (due_ns, gid), lazily invalidated
        self.window = window
        self.spans: list[tuple[int, int]] = []      # when the samplers must look closely (from, until)
        self.grace_ns = 0                           # 0: no watch for cells that never end
        self.watch: list[tuple[int, int]] = []      # (predicted end + grace, gid)
        self.start_watch: list[tuple[int, int]] = []   # (turn + runtime + grace, gid): clones yet to start
        self.waiters: dict[int, list[int]] = {}     # gate -> the gates whose cells wait on it (until it opens)
        self.stat_fds: list[int] = []               # block-layer counters appended to s/f reports

    def look(self, from_ns: int, until_ns: int) -> None:
        self.spans.append((from_ns, until_ns))

    def publish(self, now: int) -> int | None:
        """Write the current (or next) close-look window for the samplers; when it ends, if others wait."""
        if self.window is None:
            return None
        self.spans = sorted(s for s in self.spans if s[1] > now)
        if not self.spans:
            self.window.set(0, 0)
            return None
        start, until = self.spans[0]
        for s, u in self.spans[1:]:
            if s > until:
                break
            until = max(until, u)
        self.window.set(start, until)
        return until if len(self.spans) > 1 else None

    def say(self, line: str) -> None:
        self.out.write(line + "\n")

    def schedule(self, gid: int, at_ns: int, timed: bool) -> None:
        g = self.gates[gid]
        g.due_ns, g.timed = at_ns, timed
        heapq.heappush(self.timers, (at_ns, gid))
        self.look(at_ns - LOOK_BEFORE_NS, at_ns + LOOK_AFTER_NS)
        if timed:      # the requested idle begins when the cell ends, `delay` earlier
            self.look(at_ns - g.delay_ns - LOOK_BEFORE_NS, at_ns - g.delay_ns + LOOK_AFTER_NS)

    def open(self, gid: int, now: int) -> None:
        g = self.gates.get(gid)
        if g is None or g.opened:
            return
        g.opened = True
        self.look(now, now + LOOK_AFTER_NS)
        stats = self.stat_words()     # before the write: none of this cell's I/O can be in them yet
        try:
            os.write(g.fds[1], b"\n" * SPARE_LINES)
        except BlockingIOError:
            pass                  # already full of lines from an earlier write: nobody can be left waiting
        self.say(f"o {gid} {now}{stats}")
        self.retire(g.wait)       # this cell is under way (or its process is gone): its own gate is done
        for nxt in self.waiters.pop(gid, ()):     # their turn has come (not a scan: a long run makes thousands)
            self.watch_start(nxt, now)

    def watch_start(self, gid: int, turn_ns: int) -> None:
        """Gate `gid`'s cell may start from `turn_ns`: a time-based one not under way runtime + grace later is
        late (the watch on its predicted end is armed only once every clone has started)."""
        g = self.gates[gid]
        if self.grace_ns and g.runtime_ns and g.starts == 0:
            heapq.heappush(self.start_watch, (turn_ns + g.runtime_ns + self.grace_ns, gid))

    def retire(self, gid: int) -> None:
        """Close a gate nobody can wait on any more (a long run makes thousands)."""
        g = self.gates.get(gid)
        if g is not None and g.opened and g.fds[0] >= 0:
            for fd in g.fds:
                os.close(fd)
            g.fds = (-1, -1)

    def command(self, words: list[str]) -> None:
        op, now = words[0], time.time_ns()
        if op == "new":
            gid, clones, runtime, wait = (int(x) for x in words[1:5])
            r, w = os.pipe()
            os.set_blocking(w, False)
            self.gates[gid] = _Gate((r, w), clones, runtime, wait)
            self.say(f"n {gid} {w}")
            before = self.gates.get(wait)
            if before is not None and before.opened:     # its turn has come already
                self.watch_start(gid, now)
            elif before is not None:
                self.waiters.setdefault(wait, []).append(gid)
        elif op == "stat":
            self.stat_fds.append(os.open(" ".join(words[1:]), os.O_RDONLY))
        elif op == "delay":
            g = self.gates[int(words[1])]
            g.delay_ns = int(words[2])
            if g.due_ns is not None and not g.opened and not g.timed:   # predicted end known: move it
                self.schedule(int(words[1]), g.due_ns + g.delay_ns, True)
        elif op == "open":
            self.open(int(words[1]), now)
        elif op == "release":
            g = self.gates.get(int(words[1]))
            if g is not None and not (g.timed and g.due_ns is not None):
                self.open(int(words[1]), now)
        elif op == "grace":
            self.grace_ns = int(words[1])
        elif op == "sync":
            self.say(f"y {words[1]}")

    def stat_words(self) -> str:
        if not self.stat_fds:
            return ""
        try:
            return f" {time.monotonic_ns()} " + " ".join(b",".join(os.pread(fd, 4096, 0).split()).decode()
                                                       for fd in self.stat_fds)
        except OSError:
            return ""      # the device went away: that boundary has no counters (the engine says so)

    def report(self, word: str, now: int) -> None:
        if word.startswith("w"):          # a clone is set up and at its gate (for the engine only)
            if word[1:].isdigit():
                self.say(f"w {word[1:]} {now}")
            return
        started = word.startswith("s")
        if not word[started:].isdigit():
            return
        gid = int(word[started:])
        g = self.gates.get(gid)
        self.say(f"{'s' if started else 'f'} {gid} {now}{self.stat_words()}")
        if g is None:
            return
        if not started:
            # counted whatever the gate's state: a time-based cell's gate opens at its predicted end, before
            # its clones report; the hang watch judges the cell by these counts
            g.fires += 1
        if g.opened:
            return
        if started:
            g.starts += 1
            if g.starts == g.clones:
                self.retire(g.wait)
            if g.starts == g.clones and g.runtime_ns:
                # the cell ends `runtime` after its last clone started: open then (plus any idle asked)
                self.schedule(gid, now + g.runtime_ns + g.delay_ns, g.delay_ns > 0)
                if self.grace_ns:
                    heapq.heappush(self.watch, (now + g.runtime_ns + self.grace_ns, gid))
            return
        if g.fires == g.clones and g.due_ns is None:
            self.look(now, now + LOOK_AFTER_NS)      # an end nobody could predict: look from now on
        if g.fires == g.clones and g.timed and g.delay_ns and g.due_ns is not None and g.due_ns < now + g.delay_ns:
            # a time-based cell whose I/O ran past its predicted end (a busy host): the idle asked for is counted
            # from its real end, or the device would idle less than asked
            self.schedule(gid, now + g.delay_ns, True)
        elif g.fires == g.clones and (g.due_ns is None or not g.timed):
            if g.delay_ns:
                self.schedule(gid, now + g.delay_ns, True)
            else:
                self.open(gid, now)

    def due(self, now: int) -> float | None:
        """Open every gate whose time has come and publish the samplers' window; seconds until the
        next thing to do (None: nothing)."""
        next_at = None
        while self.timers:
            at, gid = self.timers[0]
            g = self.gates.get(gid)
            if g is None or g.opened or g.due_ns != at:
                heapq.heappop(self.timers)      # superseded
                continue
            if at > now:
                next_at = at
                break
            heapq.heappop(self.timers)
            self.open(gid, now)
        while self.watch and self.watch[0][0] <= now:
            _, gid = heapq.heappop(self.watch)
            if self.gates[gid].fires < self.gates[gid].clones:
                self.say(f"late {gid} {now}")
        while self.start_watch and self.start_watch[0][0] <= now:
            _, gid = heapq.heappop(self.start_watch)
            g = self.gates[gid]
            # none of its clones started or ended: the fio before it is stopped. Some started: the other clones'
            # jobs failed (a drive that failed or went), and the process's exit opens the gate, as it always did
            if g.starts == 0 and g.fires == 0 and not g.opened:
                self.say(f"late {gid} {now}")
        window_end = self.publish(now)
        next_watch = min((w[0][0] for w in (self.watch, self.start_watch) if w), default=None)
        wake = min((t for t in (next_at, window_end, next_watch) if t is not None), default=None)
        return None if wake is None else max(0.0, (wake - now) / 1e9)


class _Lines:
    """Complete lines from a non-blocking descriptor, the partial last one kept for the next read."""

    def __init__(self, fd: int):
        self.fd, self._rest = fd, b""

    def take(self) -> list[list[str]] | None:
        """The words of each complete line read now; None at end of file."""
        try:
            chunk = os.read(self.fd, 65536)
        except BlockingIOError:
            return []
        if not chunk:
            return None
        *lines, self._rest = (self._rest + chunk).split(b"\n")
        return [w for w in (line.decode().split() for line in lines) if w]


def keep(ctl_path: str, window: Window | None = None, commands=sys.stdin, out=sys.stdout) -> None:
    """The keeper's loop (the child process), until the engine closes its stdin."""
    keeper = _Keeper(out, window)
    reports = _Lines(os.open(ctl_path, os.O_RDWR | os.O_NONBLOCK))   # RDWR: never sees EOF
    os.set_blocking(commands.fileno(), False)
    engine = _Lines(commands.fileno())

    def take_reports() -> bool:
        now = time.time_ns()
        words = reports.take()
        for w in words:
            keeper.report(w[0], now)
        return bool(words)

    timeout = None
    while True:
        ready, _, _ = select.select([reports.fd, engine.fd], [], [], timeout)
        if reports.fd in ready:     # the hooks' reports first
            take_reports()
        if engine.fd in ready:
            lines = engine.take()
            if lines is None:
                return                             # the engine is gone or done
            for words in lines:
                if words[0] == "sync":     # a `sync` follows every report the hooks wrote before it was sent
                    while take_reports():
                        pass
                keeper.command(words)
        timeout = keeper.due(time.time_ns())
        out.flush()


if __name__ == "__main__":
    prefer_cpu()
    try:
        keep(sys.argv[1], Window(sys.argv[2], writable=True) if len(sys.argv) > 2 else None)
    except (KeyboardInterrupt, BrokenPipeError):
        pass
