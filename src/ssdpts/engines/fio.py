"""Local fio engine.

Each submitted round is one fio process whose cells are separate jobs in their own reporting
groups. fio's own `stonewall` costs 100-300 ms of idle device time per transition (its job
launcher polls every 100 ms), so cells are chained with *gates* instead: every job starts
blocked in `exec_prerun` on a gate (a pipe held by the gatekeeper process, realtime/gatekeeper.py),
and its `exec_postrun` reports to the keeper, which lets the next cell go the moment the current
one ends. The next round's process is started early and waits on the same kind of gate, so the
device sees back-to-back I/O across cells and rounds.

The hooks are the cheapest fio allows, because everything they do after the previous cell's last
I/O or after the gate opens is device idle: `exec_prerun` is one shell `read` (it returns when the
keeper writes a line), `exec_postrun` a shell builtin writing the gate id to the keeper's FIFO (no
`date`, no script, no other process). fio does all per-job set-up that matters (buffer allocation
and fill, file set-up, random map) before `exec_prerun`, so the waiting jobs are ready. A
time-based cell's successor is let go at the cell's predicted end (last clone's start + runtime)
rather than after fio's teardown and the postrun report, which cost 10-25 ms of device idle on a
busy host. Gate-side times come from the keeper; the device's own idle per transition comes from
the block-layer sampler (blockidle.py), stored next to them (docs/device-idle.md).
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Sequence

from ..capabilities import Capability
from ..errors import SsdptsError
from ..realtime import die_with_parent
from ..realtime.timing import FIO_EXIT_GRACE_S, HANG_GRACE_S, KILL_WAIT_S, STALL_RETRIES
from ..workload import Workload, render_on
from ..workload.ioengine import IoRequest
from ..workload.trace import write_iologs
from .blockidle import IdleSampler, stat_path_for, unavailable_reason
from .drivefault import DriveFailed, KernelLog, drive_failures, kernel_names, vanished
from .gates import Gates
from .ioengine import choose
from .fiolog import intervals_from_logs
from .fiojson import parse_output
from .fio_versions import fio_binary, fio_version
from .results import DeviceIdle, IoProgress, RoundOutput, Stall, size_bound_bytes
from .stimulus import BlockCounters, not_available, not_per_interval
from .tracecoverage import CoverageTracer

log = logging.getLogger("ssdpts")
STATUS_INTERVAL_S = 1.0   # fio's status documents for a round submitted with on_progress


def _start_reaper() -> subprocess.Popen:
    """A shell that kills the fio process started next, and what it forked, when ssdpts ends without telling
    it to go: it reads a line from a pipe only ssdpts holds, and the pipe closes (end of file, `read` fails)
    however ssdpts dies, kill -9 included. fio is stopped first so that its job processes are still its
    children when they are looked for (see `kill_fio`). `_stop_reaper` sends the line. Its own session: a
    Ctrl-C at the terminal does not reach it.

    It is started before fio, and learns fio's pid from fio itself: the first line on the pipe, written by
    the forked child before it execs fio (`_fio_preexec`). Until that exec the child holds the pipe too, so
    the reaper cannot see the end of file before it has the pid: there is no moment at which fio runs
    without a reaper (started after fio, a kill -9 of ssdpts between the two left fio and its job
    processes writing on)."""
    script = ('read pid || exit 0; [ "$pid" = done ] && exit 0; '
              'read line || { kill -STOP $pid; jobs=$(pgrep -P $pid); kill -STOP $jobs; '
              'for j in $jobs; do hooks="$hooks $(pgrep -P $j)"; done; kill -KILL $pid $jobs $hooks; }')
    return subprocess.Popen(["sh", "-c", script], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


def _stop_reaper(reaper: subprocess.Popen) -> None:
    try:
        reaper.stdin.write(b"done\n")
        reaper.stdin.close()
    except OSError:
        pass
    reaper.wait()


class FioEngine:
    name = "fio"
    # gates chain cells and rounds; timed gates give idle periods; one job can be cut into rounds
    capabilities = frozenset({Capability.GATED_CHAINING, Capability.TIMED_IDLE, Capability.STREAMING,
                              Capability.BANDWIDTH_LOG, Capability.HEALTH, Capability.PURGE,
                              Capability.LOCAL_BLOCK_LAYER, Capability.LOCAL_FILE_SYSTEM, Capability.CHECKPOINT})

    def __init__(self, binary: str | None = None, workdir: str | Path | None = None, measure_idle: bool = True,
                 hang_grace_s: float = HANG_GRACE_S, stall_retries: int = STALL_RETRIES,
                 io_request: IoRequest = IoRequest(), exit_grace_s: float = FIO_EXIT_GRACE_S):
        self.binary = binary or fio_binary()
        self.io_request = io_request     # the profile's ioengine; each session checks it on its drives (choose)
        self.hang_grace_s = hang_grace_s   # a time-based cell not ended this long after its due time is hung
        self.stall_retries = stall_retries   # re-runs of a round whose fio stalled before the run stops
        self.exit_grace_s = exit_grace_s   # a fio whose jobs all ended and that has not exited this long after is stuck
        # where the files of a failed or stalled fio process are kept (job file, stderr, evidence); the runner
        # sets it beside the run's log, the session's own directory is removed when it closes
        self.keep_dir: Path | None = None
        self.version = fio_version(self.binary)
        self.workdir = Path(workdir) if workdir else None
        self.measure_idle = measure_idle   # block-layer device-idle sampler (off only to measure its cost)
        # a waiting round's set-up runs as SCHED_IDLE where the normal policy can be given back (root)
        self.nice = os.getpriority(os.PRIO_PROCESS, 0)
        self.background_set_up = os.geteuid() == 0
        self.failed: dict[str, str] = {}      # local targets do not drop out one by one: a failure ends the run
        # the block layer's last I/O when a session ended by an exception (a stop): where a resume's pause begins
        self.last_io_at: float | None = None
        # run --trace-stimulus: each cell's LBA coverage from the device's block completions (tracecoverage.py)
        self.trace_stimulus = False

    def session(self, target) -> "FioSession":
        return FioSession(self, target)

    def purge(self, drive, method: str) -> None:
        """A local drive is purged by the host's own tools (targets/purge.py), not through fio."""
        return None


def _device_idle(gates: Gates, samplers: Sequence[IdleSampler], gid: int | None) -> DeviceIdle | None:
    """Block-layer idle of the transition at `gid` (None: no transition there or gate never opened).
    Several devices: the longest idle among them."""
    if gid is None or not gates.fires.get(gid) or gid not in gates.opened:
        return None
    if not samplers:
        return DeviceIdle(None)
    # window from the cell's reported end to the gate opening (the opening comes first when predicted)
    ends = sorted((max(gates.fires[gid]), gates.opened[gid]))
    found = [sp.idle_across(*ends, cell_due_ns=gates.due_ns(gid)) for sp in samplers]
    if any(f.ms is None for f in found):     # not measured on one device: that one, with its reason if it has one
        return next(f for f in found if f.ms is None)
    return max(found, key=lambda d: d.ms or 0.0)


def _first_io(samplers: Sequence[IdleSampler]) -> float | None:
    """A session's first I/O at the block layer (the latest among several devices: the longest pause before
    it), where every device was quiet when sampling began."""
    found = [sp.first_io() for sp in samplers]
    return max(found) / 1e9 if found and None not in found else None


def _last_io(samplers: Sequence[IdleSampler]) -> float | None:
    """The last I/O before the devices went quiet (the earliest among several: the longest pause after it)."""
    found = [sp.last_io() for sp in samplers]
    return min(found) / 1e9 if found and None not in found else None


def _fio_preexec(in_background: bool, reaper: subprocess.Popen | None = None):
    """Without `reaper`, fio dies with ssdpts (its jobs are threads); with one, the child tells it its pid
    before it execs fio (forked job processes do not die with ssdpts: the reaper kills them, fio included)."""
    parent = os.getpid()
    tell_fd = reaper.stdin.fileno() if reaper is not None else None

    def preexec() -> None:
        if tell_fd is not None:
            os.write(tell_fd, b"%d\n" % os.getpid())
        else:
            die_with_parent()
            if os.getppid() != parent:     # ssdpts ended before the death signal was asked for
                os._exit(1)
        if in_background:
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    return preexec


def _descendants(pid: int) -> list[int]:
    """Every process below `pid`. fio's forked job processes (thread=0) call setsid(): neither fio's process
    group nor its session holds them, only the parent links do (until fio ends and init adopts them)."""
    children: dict[int, list[int]] = {}
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            ppid = int((proc / "stat").read_text().rsplit(") ", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue   # ended meanwhile
        children.setdefault(ppid, []).append(int(proc.name))
    found, todo = [], [pid]
    while todo:
        kids = children.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def _fio_tasks(pid: int) -> list[Path]:
    """/proc/PID/task/TID of every thread of fio process `pid` and of the processes below it: its job
    processes (thread=0) and the hook shells its jobs started."""
    tasks = []
    for p in [pid, *_descendants(pid)]:
        tasks += Path(f"/proc/{p}/task").glob("*")
    return sorted(tasks, key=lambda t: int(t.name))


def _signal(pids, sig: int) -> None:
    for p in pids:
        try:
            os.kill(p, sig)
        except (ProcessLookupError, PermissionError):
            continue


def kill_fio(pid: int) -> None:
    """SIGKILL fio process `pid` (leader of its process group), its job processes and their hook shells.
    Everything is stopped first: fio forks no more jobs and they stay its children while they are looked
    for (a killed fio's job processes go to init, and keep writing to the device)."""
    _signal([pid], signal.SIGSTOP)
    below = _descendants(pid)
    _signal(below, signal.SIGSTOP)
    _signal({*below, *_descendants(pid)}, signal.SIGKILL)
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _to_foreground(pid: int, nice: int) -> None:
    """Give every thread of fio process `pid` and of the processes below it (its job processes, the hook
    shells its jobs started) the normal policy at priority `nice` (the engine's own)."""
    for task in _fio_tasks(pid):
        try:
            os.sched_setscheduler(int(task.name), os.SCHED_OTHER, os.sched_param(0))
            os.setpriority(os.PRIO_PROCESS, int(task.name), nice)
        except (ProcessLookupError, PermissionError):
            continue


class RoundStalled(SsdptsError):
    """A round's fio stopped making progress and was killed (the round runs again, STALL_RETRIES times)."""

    def __init__(self, stall: Stall):
        super().__init__(f"{stall.why}; evidence and job file: {stall.evidence_file}")
        self.stall = stall


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace").strip()
    except OSError as e:
        return f"(unreadable: {e.strerror})"


def stall_evidence(pid: int, members: Sequence) -> str:
    """Where a stalled fio process is: every thread's kernel stack and wait channel, its job processes'
    included (root reads the stacks),
    and the requests in flight on each device below it (0 in flight while fio waits: a completion was lost)."""
    lines = [f"fio pid {pid}, {time.strftime('%Y-%m-%d %H:%M:%S %z')}"]
    for m in members:
        stat = stat_path_for(m.path)
        if stat is not None:
            lines.append(f"{m.path}: in flight (read write) {_read(stat.parent / 'inflight')}; "
                         f"stat {_read(stat)}")
    for task in _fio_tasks(pid):
        lines.append(f"\n--- thread {task.name} of {task.parent.parent.name} ({_read(task / 'comm')}) state "
                     f"{_read(task / 'stat').split(') ')[-1][:1]} wchan {_read(task / 'wchan')}")
        lines.append(_read(task / "stack"))
    return "\n".join(lines)


MAX_CELLS_PER_PROCESS = 32   # bounds the jobs (threads, buffers) one waiting fio process holds


class _FioProcess:
    """One fio process running some consecutive cells of a round, gated like all the others."""

    def __init__(self, session: "FioSession", cells: Sequence[Workload], interval_s: float | None,
                 on_progress: Callable[[IoProgress], None] | None = None):
        s = session
        s._count += 1
        self.session = session
        self.dir = s.dir / f"proc-{s._count:05d}"
        self.dir.mkdir()
        self.cells = list(cells)
        self.wait_gate = s._last_gate
        self.gates: list[int] = []
        self._waits: list[int | None] = []
        prev = s._last_gate
        for w in cells:
            # every target's job of this cell starts at the same gate; the next cell waits for all of them
            timed = w.runtime_s if w.runtime_s and w.io_size is None else None
            gid = s.gates.new(w.clones * len(s.members), timed and timed + (w.ramp_s or 0), wait=prev)
            if prev is not None and w.idle_before_s:
                s.gates.set_delay(prev, w.idle_before_s)
            self._waits.append(prev)
            self.gates.append(gid)
            if s.tracer is not None:      # a streamed round's cells are stored by interval: no record
                s.tracer.register(gid, w, kept=not interval_s)
            prev = gid
        s._last_gate = prev
        self.job_path = self.dir / "job.fio"
        self.out_path = self.dir / "out.json"
        self.interval_s = interval_s
        self.on_progress = on_progress
        self.proc = None
        self.reaper: subprocess.Popen | None = None
        self.started_at = time.time()
        self.launch_error = ""
        self.hung = ""              # why the engine killed this process, if it did
        self.hung_cell = ""
        self.cancelled = False
        self._launched = threading.Event()
        self._threads: list[threading.Thread] = []
        self._stderr: list[str] = []
        self._stdout: list[str] = []        # streaming: only the text since the last complete document
        self.last_doc: dict | None = None   # streaming: the latest status document (fio's are cumulative)
        self.kept: Path | None = None       # where this process's files were kept after a failure
        self._launch()

    def _launch(self) -> None:
        s = self.session
        if self.cancelled:
            for gid in self.gates:
                s.gates.open_unfinished(gid)
            self._launched.set()
            return
        members = s.members
        job = render_on(self.cells, members, ioengine=s.io.ioengine, threads=s.io.threads)
        job.global_options.update(s.io.job_options())
        at = 0
        for w, prev, gid in zip(self.cells, self._waits, self.gates):
            n = len(w.fio_jobs()) * len(members)
            for k, (name, opts) in enumerate(job.sections[at:at + n]):
                if "read_iolog" in opts:     # a trace cell: one job per target, its iologs made for that target
                    t = members[k]
                    write_iologs(w.trace, [self.dir / f for f in opts["read_iolog"].split(":")], t.fio_filename,
                                 t.size_bytes, t.logical_block_size)
                opts["new_group"] = ""     # every job its own report: a several-job cell's jobs are merged below
                opts["exec_prerun"] = s.gates.wait_hook(prev, gid)
                opts["exec_postrun"] = s.gates.fire_hook(gid)
            at += n
        self.job_text = job.text()
        self.job_path.write_text(self.job_text)
        interval_s = self.interval_s or (self.on_progress and STATUS_INTERVAL_S)
        if interval_s:
            # periodic cumulative status documents on stdout, cut into intervals as they arrive (streaming)
            # or read for progress; the last one is fio's final result
            self.command = [s.engine.binary, "--output-format=json+", f"--status-interval={int(interval_s * 1000)}ms",
                            str(self.job_path)]
        else:
            self.command = [s.engine.binary, "--output-format=json+", f"--output={self.out_path}", str(self.job_path)]
        self.started_at = time.time()
        # A process that waits behind running cells sets up in the background (SCHED_IDLE): its jobs (up to
        # hundreds of threads allocating and filling buffers) otherwise take the CPU from the running cell's
        # threads, and on a CPU-bound device (zram at TC8/QD32) the device idled 35-56 ms at a time while
        # they did. The normal policy is given back once every job waits at its gate, or when its cells
        # are due (docs/device-idle.md has the measurements).
        background = s.engine.background_set_up and self.wait_gate is not None
        # forked job processes outlive fio's main process: a reaper, not PR_SET_PDEATHSIG, ends them all; it
        # is in place before fio starts (_start_reaper says how)
        self.reaper = None if s.io.threads else _start_reaper()
        try:
            self.proc = subprocess.Popen(
                self.command, cwd=self.dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                start_new_session=True, preexec_fn=_fio_preexec(background, self.reaper))
        except BaseException:
            if self.reaper is not None:
                _stop_reaper(self.reaper)
            raise
        if background:
            threading.Thread(target=self._foreground_when_set_up, daemon=True).start()
        self._threads = [threading.Thread(target=self._drain, args=(self.proc.stderr, self._stderr), daemon=True)]
        if self.on_progress and not self.interval_s:
            self._threads.append(threading.Thread(target=self._report_progress, daemon=True))
        elif not interval_s:
            self._threads.append(threading.Thread(target=self._drain, args=(self.proc.stdout, self._stdout),
                                                  daemon=True))
        for t in self._threads:
            t.start()
        # Whatever happens to this process, never leave later cells waiting on its gates.
        threading.Thread(target=self._release_on_exit, daemon=True).start()
        threading.Thread(target=self._watch_exit, daemon=True).start()
        self._launched.set()

    def _foreground_when_set_up(self) -> None:
        s = self.session
        s.gates.wait_set_up(self.gates, self.wait_gate, lambda: self.proc.poll() is not None)
        if self.proc.poll() is None:
            _to_foreground(self.proc.pid, s.engine.nice)

    @staticmethod
    def _drain(stream, sink: list[str]) -> None:
        for line in stream:
            sink.append(line)

    def _report_progress(self) -> None:
        """Every status document fio prints becomes an IoProgress for the round's callback (its last one is
        fio's final result, kept in `_stdout` as a streaming round keeps it)."""
        total = size_bound_bytes(self.cells, len(self.session.members))
        for doc in self.documents():
            jobs = doc["jobs"]
            done = sum(int((j.get(d) or {}).get("io_bytes", 0)) for j in jobs for d in ("read", "write"))
            ms = max((float((j.get(d) or {}).get("runtime", 0)) for j in jobs for d in ("read", "write")), default=0.0)
            try:
                self.on_progress(IoProgress(done, total, ms / 1000))
            except Exception:   # never stop reading: fio would block on a full pipe
                log.exception("progress report failed")
        self.out_path.write_text("".join(self._stdout))   # the final result, where a kept round's files are

    def _release_on_exit(self) -> None:
        self.proc.wait()
        if self.reaper is not None:
            _stop_reaper(self.reaper)
        for gid in self.gates:
            self.session.gates.open_unfinished(gid)

    def _watch_exit(self) -> None:
        """Kill this fio, as a stall, when its main process has not exited `exit_grace_s` after its jobs all
        reported their end: the hang watch judges cells only until those reports come, so a fio stuck in its
        teardown would otherwise hold the round, and the run, for ever."""
        ended_ns = self.session.gates.wait_ended(self.gates, lambda: self.proc.poll() is not None)
        if ended_ns is None:
            return        # the process ended first (or was killed, or the session closed)
        grace = self.session.engine.exit_grace_s
        try:
            self.proc.wait(max(0.0, ended_ns / 1e9 + grace - time.time()))
        except subprocess.TimeoutExpired:
            self.kill_hung(self.cells[-1].name,
                           f"fio's jobs ended {time.time() - ended_ns / 1e9:.1f} s ago but its main process did not "
                           f"exit (allowed {grace:g} s; stuck in its teardown? its threads' stacks are in the evidence)")

    def documents(self):
        """Streaming mode: yield each cumulative status document as fio prints it."""
        import json

        self._launched.wait()
        if self.proc is None:
            return
        decoder = json.JSONDecoder()
        buf = ""
        for line in self.proc.stdout:
            buf += line
            if line.rstrip() != "}":
                continue
            doc = None
            # normally one document per "}" line; if text got in between, retry from the last header
            for start in (buf.find("{"), buf.rfind('{\n  "fio version"')):
                if start < 0:
                    continue
                try:
                    doc, _ = decoder.raw_decode(buf, start)
                    break
                except (json.JSONDecodeError, ValueError):
                    doc = None
            if doc is None:
                continue
            if isinstance(doc, dict) and "jobs" in doc:
                # a process can live for hours with a document every interval: keep the latest only
                self.last_doc, self._stdout = doc, [buf]
                buf = ""
                yield doc
            buf = ""

    def kill_hung(self, cell: str, why: str) -> None:
        """Stop a process that stopped making progress, keeping what shows where it was stuck first."""
        if self.proc is None or self.proc.poll() is not None:
            return
        (self.dir / "stall.txt").write_text(f"{why}\n\n{stall_evidence(self.proc.pid, self.session.members)}")
        self.hung, self.hung_cell = why, cell
        kill_fio(self.proc.pid)

    def keep(self) -> Path:
        """Copy this process's files (job file, output, stderr, evidence) where they outlive the session."""
        if self.kept is None:
            base = self.session.engine.keep_dir or self.session.dir.parent
            base.mkdir(parents=True, exist_ok=True)
            self.kept = Path(tempfile.mkdtemp(prefix=f"fio-{'stall' if self.hung else 'failed'}-", dir=base))
            (self.kept / "stderr.txt").write_text("".join(self._stderr))
            for f in self.dir.iterdir():
                if f.is_file() and f.suffix in (".fio", ".txt", ".json"):
                    shutil.copy2(f, self.kept / f.name)
        return self.kept

    def _wait_killed(self) -> None:
        try:
            self.proc.wait(timeout=KILL_WAIT_S)
        except subprocess.TimeoutExpired:
            raise SsdptsError(f"fio (pid {self.proc.pid}) on {self.session.target.path} did not exit "
                              f"{KILL_WAIT_S:g} s after SIGKILL: it is stuck in the kernel; see "
                              f"{self.keep()}/stall.txt and the kernel log") from None

    def cancel(self) -> None:
        self.cancelled = True
        if not self._launched.is_set():
            return   # its launcher sees `cancelled` and only releases the gates
        if self.proc is None:
            return
        if self.proc.poll() is None:
            kill_fio(self.proc.pid)
        self._wait_killed()

    def _raise_if_drive_failed(self, text: str, stderr: str) -> None:
        """fio failed because a drive failed I/O: raise DriveFailed with the evidence (drivefault.py)."""
        members = self.session.members
        failures = drive_failures(text, stderr, [(m.label_id, m.fio_filename) for m in members])
        failed = {f.drive for f in failures}
        for m in members:
            if m.label_id not in failed and m.kind == "block" and m.host is None:
                gone = vanished(m.label_id, m.path, self.cells[0].name)
                failures += [gone] if gone else []
        if failures:
            names = [n for m in members if m.label_id in {f.drive for f in failures} for n in kernel_names(m.path)]
            kept = str(self.keep())
            for f in failures:
                f.kernel_log = self.session.kernel_log.since(self.started_at, names)
                f.evidence_dir = kept
            raise DriveFailed(failures)

    def finish(self) -> tuple[str, str]:
        """Wait for the process; (output text, stderr). Raises on failure."""
        self._launched.wait()
        if self.proc is None:
            raise SsdptsError(f"fio round on {self.session.target.path} did not start "
                              f"({self.launch_error or 'cancelled'}); job file: {self.job_path}")
        if self.hung:
            self._wait_killed()
        self.proc.wait()
        for t in self._threads:
            t.join()
        stderr = "".join(self._stderr)
        if self.interval_s:
            for _ in self.documents():   # drain anything left
                pass
            text = "".join(self._stdout)
        else:
            text = self.out_path.read_text(errors="replace") if self.out_path.exists() else "".join(self._stdout)
        if self.hung:
            raise RoundStalled(Stall(self.hung_cell, self.hung, str(self.keep() / "stall.txt")))
        if self.proc.returncode != 0:
            self._raise_if_drive_failed(text, stderr)
            last = next((l for l in reversed(stderr.strip().splitlines()) if l.strip()),
                        f"exit code {self.proc.returncode}")
            raise SsdptsError(f"fio failed on {self.session.target.path} ({last.strip()}); job file: "
                              f"{self.keep() / 'job.fio'}")
        return text, stderr


class FioRound:
    """A submitted round: one or more gated fio processes running its cells back to back."""

    def __init__(self, session: "FioSession", cells: Sequence[Workload], tag: str, interval_s: float | None = None,
                 on_progress: Callable[[IoProgress], None] | None = None):
        self.session = session
        self.cells = list(cells)
        self.tag = tag
        self.interval_s = interval_s
        # progress needs fio's status dumps, which a job gated behind another of its process would deadlock (below)
        self.on_progress = None if interval_s else on_progress
        if interval_s and any(c.jobs for c in self.cells):
            raise ValueError("a streamed round runs one fio job per cell; a cell of several jobs cannot stream")
        if interval_s or self.on_progress:
            # one cell per process: fio's status dump waits for every running job, so a job gated in
            # exec_prerun behind another job of the same process would deadlock the dump
            chunks = [[c] for c in self.cells]
        else:
            chunks = [self.cells[i:i + MAX_CELLS_PER_PROCESS] for i in range(0, len(self.cells), MAX_CELLS_PER_PROCESS)]
        self._chunks = chunks
        self.stalls: list[Stall] = []
        self._result: RoundOutput | None = None
        self.arm()

    def arm(self) -> None:
        """Start (or, after a stall, start again) this round's processes behind everything submitted so far."""
        if self.session.tracer is not None and getattr(self, "procs", None):
            self.session.tracer.forget([g for p in self.procs for g in p.gates])
        self.procs = [_FioProcess(self.session, chunk, self.interval_s, self.on_progress) for chunk in self._chunks]
        self.started_at = self.procs[0].started_at

    def cancel(self) -> None:
        for p in self.procs:
            p.cancel()

    def intervals(self):
        """Streaming rounds only: yield an Interval each time fio reports, for every cell that did I/O."""
        from .fiodiff import slices
        from .results import Interval, aggregate

        labels = [m.label_id for m in self.session.members]
        for idx, proc in enumerate(self.procs):
            elapsed = 0.0
            name = self.cells[idx].name
            for count, piece in enumerate(slices(proc.documents(), len(labels), self.interval_s), 1):
                result = piece.results[0] if len(labels) == 1 else aggregate(dict(zip(labels, piece.results)), name)
                result.stimulus = not_available(self.session.block_note) if self.session.block is None else \
                    not_per_interval("the block-layer counters")
                yield Interval(idx, name, count, elapsed, piece.duration_ms, result,
                               piece.jobs[0] if len(labels) == 1 else {"jobs": piece.jobs})
                elapsed += piece.duration_ms

    def interval_output(self, iv) -> RoundOutput:
        """A stored-round view of one interval of a streaming round."""
        import json as _json

        proc = self.procs[iv.cell_index]
        now = time.time()
        first = proc.wait_gate is None and iv.cell_index == 0 and iv.index == 1   # the session's first I/O in it
        return RoundOutput(cells=[iv.result], engine="fio", job_text=proc.job_text, command=proc.command,
                           raw_output=_json.dumps(iv.raw or {}), started_at=now - iv.duration_ms / 1000,
                           ended_at=now, fio_version=self.session.engine.version,
                           first_io_at=_first_io(self.session.samplers) if first else None)

    def result(self) -> RoundOutput:
        if self._result is not None:
            return self._result
        while True:
            try:
                texts, errs = zip(*[p.finish() for p in self.procs])
                break
            except RoundStalled as e:
                self.stalls.append(e.stall)
                # a stream's intervals are stored as they come: it cannot be re-run from its start
                if self.interval_s or len(self.stalls) > self.session.engine.stall_retries:
                    self.cancel()
                    n = len(self.stalls)
                    raise SsdptsError(f"fio on {self.session.target.path}: {e.stall.why}"
                                      + (f" (stalled {n} times: the round was run {n} times)" if n > 1 else "")
                                      + f"; evidence and job file: {e.stall.evidence_file}") from None
                self.session.restart_from(self)
            except BaseException:
                self.cancel()
                raise
        ended = time.time()
        cells = []
        version = self.session.engine.version
        from .fiojson import parse_job

        for proc, text in zip(self.procs, texts):
            if self.interval_s:
                if proc.last_doc is None:
                    raise SsdptsError(f"fio printed no status for {self.tag or 'a streaming round'}; "
                                      f"job file: {proc.keep() / 'job.fio'}")
                doc, parsed = proc.last_doc, [parse_job(j) for j in proc.last_doc["jobs"]]
            else:
                doc, parsed = parse_output(text)
            version = doc.get("fio version", version)
            cells += parsed
        members = self.session.members
        cells = _merge_cell_jobs(self.cells, cells, len(members))
        if len(members) > 1:
            from .results import aggregate

            n = len(members)
            cells = [aggregate({m.label_id: c for m, c in zip(members, cells[k * n:(k + 1) * n])}, w.name)
                     for k, w in enumerate(self.cells)]
        gates = self.session.gates
        gates.sync()      # every end report of these processes is in
        samplers = self.session.samplers
        all_gates = [g for p in self.procs for g in p.gates]
        if len(all_gates) == len(cells):
            for cell, gid in zip(cells, all_gates):
                cell.host_cpu = gates.host_cpu(gid)
                cell.stimulus = self.session.stimulus(gid)
            if self.session.tracer is not None and not self.interval_s:
                for cell, cov in zip(cells, self.session.tracer.finish(all_gates)):
                    cell.coverage = cov
        inside = [g for g in (gates.gate_gap_ms(x) for x in all_gates[:-1]) if g is not None]
        idle_inside = [d for d in (_device_idle(gates, samplers, x) for x in all_gates[:-1]) if d is not None]
        # fio's log files, and the iolog a trace cell replayed (kept with the results like the job file)
        logs = {f.name: f.read_text() for p in self.procs
                for f in sorted([*p.dir.glob("*.log"), *p.dir.glob("*.iolog")])}
        for w, c in zip(self.cells, cells):    # a cell that asked for interval logs gets them as its intervals
            if w.log_interval_ms and not c.intervals:
                c.intervals = intervals_from_logs(logs, w.name, w.log_interval_ms)
        self._result = RoundOutput(
            cells=cells, engine="fio", logs=logs,
            job_text="\n".join(p.job_text for p in self.procs),
            command=self.procs[0].command if len(self.procs) == 1 else [c for p in self.procs for c in p.command + [";"]][:-1],
            raw_output="\n".join(texts), stderr="".join(errs), started_at=self.started_at, ended_at=ended,
            gap_before_ms=gates.gate_gap_ms(self.procs[0].wait_gate), gaps_inside_ms=inside,
            device_idle_before=_device_idle(gates, samplers, self.procs[0].wait_gate), device_idle_inside=idle_inside,
            device_idle_note=self.session.idle_note, fio_version=version, stalls=list(self.stalls),
            first_io_at=_first_io(samplers) if self.procs[0].wait_gate is None else None)
        for sp in samplers:      # every transition of this round is judged; later rounds' come after it began
            sp.forget_before(int(self.started_at * 1e9))
        return self._result


def _merge_cell_jobs(workloads: Sequence[Workload], parsed: list, targets: int) -> list:
    """fio's results (one per job, in job-file order: cell, target, job) with a several-job cell's jobs merged
    into one result per cell and target (each job's own kept in `jobs`, by JobMix name)."""
    from .results import merge_jobs

    out, at = [], 0
    for w in workloads:
        if not w.jobs:
            out += parsed[at:at + targets]
            at += targets
            continue
        for _ in range(targets):
            mine = parsed[at:at + len(w.jobs)]
            out.append(merge_jobs({j.name: r for j, r in zip(w.jobs, mine)}, w.name))
            at += len(w.jobs)
    return out


def _remove_stale_sessions(base: Path) -> None:
    """Session directories of ssdpts processes that were killed (SIGKILL leaves no chance to clean up)."""
    for d in base.glob("ssdpts-fio-*-*"):
        try:
            pid = int(d.name.split("-")[2])
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(d, ignore_errors=True)
        except (ValueError, IndexError, PermissionError):
            continue


class FioSession:
    def __init__(self, engine: FioEngine, target):
        self.engine = engine
        self.target = target
        base = engine.workdir or Path(os.environ.get("TMPDIR", "/tmp"))
        base.mkdir(parents=True, exist_ok=True)
        _remove_stale_sessions(base)
        self.dir = Path(tempfile.mkdtemp(prefix=f"ssdpts-fio-{os.getpid()}-", dir=base))
        self.members = list(target.drives())
        self.io = choose(engine.io_request, self.members, engine.binary, engine.version)
        # the device's own idle at every transition, from the block layer (blockidle.py)
        reasons = [r for m in self.members if (r := unavailable_reason(m))] if engine.measure_idle else \
            ["not measured: device-idle sampling switched off"]
        self.idle_note = "; ".join(dict.fromkeys(reasons))
        stats = [] if reasons else list(dict.fromkeys(stat_path_for(m.path) for m in self.members))
        # what each cell's I/O looked like at the block layer (stimulus.py), on every target that has one
        block_reasons = [r for m in self.members if (r := unavailable_reason(m))]
        self.block = None if block_reasons else BlockCounters(
            list(dict.fromkeys(stat_path_for(m.path) for m in self.members)))
        self.block_note = "; ".join(dict.fromkeys(block_reasons))
        self.gates = Gates(self.dir / "gates", hang_grace_s=engine.hang_grace_s, on_late=self._cell_late,
                           block_stats=self.block.paths if self.block else [])
        self.samplers = [IdleSampler(p, self.gates.window) for p in stats]
        try:
            self.tracer = CoverageTracer(self.members[0].path, self.gates, target.size_bytes,
                                         target.logical_block_size) if engine.trace_stimulus else None
        except BaseException:
            self.gates.close()
            for sp in self.samplers:
                sp.close()
            raise
        self._last_gate: int | None = None
        self._count = 0
        self._rounds: list[FioRound] = []
        self.kernel_log = KernelLog()     # what the kernel says about the drives while rounds run

    def _cell_late(self, gid: int) -> None:
        """A time-based cell that is far past its end: stop its fio process (the round then fails, saying why)."""
        for r in self._rounds:
            for p in r.procs:
                if gid in p.gates:
                    if p.proc is None or p.proc.poll() is not None:
                        return     # the process has ended (its own error, if any, is what the round reports)
                    w = p.cells[p.gates.index(gid)]
                    p.kill_hung(w.name, f"cell {w.name} had not ended {self.engine.hang_grace_s:g} s after its "
                                f"{w.runtime_s:g} s run; fio stopped making progress (an I/O lost below fio? "
                                "see the kernel log)")
                    return

    def stimulus(self, gid: int):
        """The block layer's record of gate `gid`'s cell."""
        if self.block is None:
            return not_available(self.block_note)
        record = self.block.between(*self.gates.block_between(gid))
        record.overlap_ms = self.gates.overlap_ms(gid)
        return record

    def restart_from(self, stalled: FioRound) -> None:
        """Run a stalled round again, and every round submitted after it (they may have run meanwhile: a
        time-based cell lets the next go at its predicted end), in their order, behind a fresh open gate."""
        rounds = self._rounds[self._rounds.index(stalled):]
        for r in rounds:
            r.cancel()
        self._last_gate = self.gates.new(1)
        self.gates.open(self._last_gate)
        for r in rounds:
            r.arm()

    def submit(self, cells: Sequence[Workload], tag: str = "", interval_s: float | None = None,
               on_progress: Callable[[IoProgress], None] | None = None) -> FioRound:
        """Queue cells to run right after everything submitted before. With `interval_s`, the round
        streams: iterate `intervals()` for per-interval results while it runs (one fio process).
        `on_progress` is called (from another thread) with each of fio's periodic status reports."""
        r = FioRound(self, cells, tag, interval_s, on_progress)
        self._rounds.append(r)
        return r

    def close(self) -> None:
        for r in self._rounds:
            r.cancel()
        self.gates.close()
        for sp in self.samplers:
            sp.close()
        if self.tracer is not None:
            self.tracer.close()
        self.kernel_log.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> "FioSession":
        return self

    def __exit__(self, *exc) -> None:
        if exc[0] is not None:       # a stop: its processes are killed first, then the device's last I/O is read
            for r in self._rounds:
                r.cancel()
            self.engine.last_io_at = _last_io(self.samplers)
        self.close()
