"""Local fio engine.

Each submitted round is one fio process whose cells are separate jobs in their own reporting
groups. fio's own `stonewall` costs 100-300 ms of idle device time per transition (its job
launcher polls every 100 ms), so cells are chained with *gates* instead: every job starts
blocked in `exec_prerun` on a shared flock held by this engine, and its `exec_postrun` reports
to the engine, which unlocks the next cell's gate the moment all clones of the current cell have
finished. The next round's process is started early and waits on the same kind of gate, so the
device sees back-to-back I/O across cells and rounds; the measured gaps are stored with the round.

The hooks are the cheapest fio allows, because everything they do after the previous cell's last
I/O or after the gate opens is device idle: `exec_prerun` is one `flock` on an inherited descriptor
(it exits the moment the lock is granted), `exec_postrun` a shell builtin writing the gate id to the
engine's FIFO (no `date`, no script). fio does all per-job set-up that matters (buffer allocation and
fill, file set-up, random map) before `exec_prerun`, so the waiting jobs are ready. Gate-side times
are taken by the engine (fire received, gate opened); the device's own idle per transition comes from
the block-layer sampler (blockidle.py), stored next to them. A time-based cell's successor is let go
at the cell's predicted end (last clone's start + runtime) rather than after fio's teardown and the
postrun report, which cost 10-25 ms of device idle on a busy host (docs/device-idle.md).
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Sequence

from ..capabilities import Capability
from ..errors import SsdptsError
from ..workload import Workload, render_on
from ..workload.streams import StreamPositions
from .blockidle import IdleSampler, stat_path_for, unavailable_reason
from .fiojson import parse_output
from .results import DeviceIdle, RoundOutput

MIN_FIO = (3, 20)   # lat_percentiles/percentile_list on total latency, thread, json+ bins

def fio_version(binary: str = "fio") -> str:
    path = shutil.which(binary)
    if not path:
        raise SsdptsError("fio is not installed: install it with 'apt-get install fio' (or run 'make demo', which does)")
    out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    version = out.stdout.strip()
    m = re.match(r"fio-(\d+)\.(\d+)", version)
    if not m:
        raise SsdptsError(f"cannot read the fio version from {path!r} (printed {version!r})")
    if (int(m.group(1)), int(m.group(2))) < MIN_FIO:
        raise SsdptsError(f"{version} is too old: ssdpts needs fio >= {MIN_FIO[0]}.{MIN_FIO[1]}")
    return version


def _die_with_parent() -> None:
    # If ssdpts is killed (even SIGKILL), fio must stop too: an orphan round would keep writing.
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class FioEngine:
    name = "fio"
    # gates chain cells and rounds; timed gates give idle periods; one job can be cut into rounds
    capabilities = frozenset({Capability.GATED_CHAINING, Capability.TIMED_IDLE, Capability.STREAMING,
                              Capability.BANDWIDTH_LOG, Capability.HEALTH, Capability.PURGE,
                              Capability.LOCAL_BLOCK_LAYER, Capability.CHECKPOINT})

    def __init__(self, binary: str = "fio", workdir: str | Path | None = None, measure_idle: bool = True):
        self.binary = binary
        self.version = fio_version(binary)
        self.workdir = Path(workdir) if workdir else None
        self.measure_idle = measure_idle   # block-layer device-idle sampler (off only to measure its cost)
        self.failed: dict[str, str] = {}      # local targets do not drop out one by one: a failure ends the run

    def session(self, target) -> "FioSession":
        return FioSession(self, target)


class _Gates:
    """Engine-held exclusive flocks that fio jobs wait on, opened when all clones of a cell report."""

    def __init__(self, directory: Path, samplers: Sequence[IdleSampler] = ()):
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.ctl = self.dir / "ctl"
        os.mkfifo(self.ctl)
        self.samplers = list(samplers)
        self._lock = threading.Lock()
        self._held: dict[int, int] = {}          # gate id -> fd holding LOCK_EX
        self._expected: dict[int, int] = {}      # gate id -> clones that must report
        self._delay: dict[int, float] = {}       # gate id -> idle seconds before it opens
        self._timed: set[int] = set()            # gates whose cell finished and that open after a delay
        self.fires: dict[int, list[int]] = {}    # gate id -> times (ns) the engine heard each clone finish
        self.opened: dict[int, int] = {}         # gate id -> time (ns) the engine opened it
        self.starts: dict[int, list[int]] = {}   # gate id -> times (ns) each clone of its cell was let go
        self._runtime_ns: dict[int, int] = {}    # gate id -> its cell's fixed run time, when time-based
        self._next = 0
        self._ctl_fd = os.open(self.ctl, os.O_RDWR)   # RDWR: never sees EOF
        self._stop = False
        self._thread = threading.Thread(target=self._listen, daemon=True)
        self._thread.start()

    def wait_hook(self, wait_gid: int | None, gid: int) -> str:
        """exec_prerun of gate `gid`'s cell: block until gate `wait_gid` opens (flock on fd 9 returns when
        granted, runs nothing), then report the clone's start (a shell builtin)."""
        report = f'eval "echo s{gid} 1<>{self.ctl}"'
        return report if wait_gid is None else f"flock -s 9 9<{self.dir}/g{wait_gid} && {report}"

    def fire_hook(self, gid: int) -> str:
        """exec_postrun: report one finished clone of gate `gid`'s cell. fio appends '> FILE 2>&1' to the
        command, so the write to the FIFO is wrapped in eval to keep its own redirection (builtins only).
        Opened read-write (`1<>`): never blocks, even when the engine was killed and nobody reads."""
        return f'eval "echo {gid} 1<>{self.ctl}"'

    def new(self, clones: int, runtime_s: float | None = None) -> int:
        """A closed gate for a cell of `clones` jobs; `runtime_s`: the cell runs exactly that long (time-based)."""
        with self._lock:
            gid = self._next
            self._next += 1
            fd = os.open(self.dir / f"g{gid}", os.O_CREAT | os.O_RDWR, 0o644)
            fcntl.flock(fd, fcntl.LOCK_EX)
            self._held[gid] = fd
            self._expected[gid] = clones
            self.fires[gid] = []
            self.starts[gid] = []
            if runtime_s:
                self._runtime_ns[gid] = int(runtime_s * 1e9)
            return gid

    def set_delay(self, gid: int, seconds: float) -> None:
        """Keep the device idle `seconds` after gate `gid`'s cell ends, before the waiting cell starts."""
        with self._lock:
            self._delay[gid] = seconds

    def open(self, gid: int) -> None:
        with self._lock:
            fd = self._held.pop(gid, None)
        if fd is not None:
            os.close(fd)
            self.opened.setdefault(gid, time.time_ns())

    def _open_at_predicted_end(self, gid: int) -> None:
        """A time-based cell ends `runtime` after its last clone started; fio's teardown and the postrun
        report come 10-25 ms later on a busy host, all device idle. So the gate opens at the predicted
        end, and the next cell's own wake-up (about what the last clone's took) lands on the end of
        this one: gap or overlap of a few ms instead of the whole teardown. A cell whose successor must
        wait (timed idle) keeps waiting for the report."""
        with self._lock:
            if gid in self._delay or gid in self._timed:
                return
        self.open(gid)

    def _open_after_idle(self, gid: int, idle_s: float, finished_ns: int) -> None:
        """Open `gid` so that the device idles `idle_s`: counted from the device's last I/O when the
        sampler saw it (else from the last clone's report), less the usual gate-to-first-I/O lag."""
        start = finished_ns
        if self.samplers:
            quiet = self.samplers[0].quiet_since
            if quiet is not None and finished_ns - 1_000_000_000 < quiet <= finished_ns:
                start = quiet
        at = start + int(idle_s * 1e9) - self._wake_lag_ns()
        threading.Timer(max(0.0, (at - time.time_ns()) / 1e9), self.open, (gid,)).start()

    def _wake_lag_ns(self) -> int:
        """The shortest time from opening a gate to the device's next I/O over the last gates opened (at
        most 5 ms): opening that much early never cuts a requested idle short; a slower wake-up than
        that lengthens it (a host that starves the waking processes: nothing to compensate reliably)."""
        if not self.samplers:
            return 0
        with self._lock:
            recent = sorted(self.opened.values())[-16:]
        lags = [run.first_busy_ns - t for t in recent if (run := self.samplers[0].run_containing(t)) is not None]
        return min(min(lags), 5_000_000) if lags else 0

    def _listen(self) -> None:
        buf = b""
        while not self._stop:
            chunk = os.read(self._ctl_fd, 4096)
            heard = time.time_ns()
            if not chunk:
                continue
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                word = line.strip()
                if word.startswith(b"s") and word[1:].isdigit():
                    self._started(int(word[1:]), heard)
                    continue
                if not word.isdigit():
                    continue
                gid = int(word)
                with self._lock:
                    self.fires.setdefault(gid, []).append(heard)
                    done = len(self.fires[gid]) >= self._expected.get(gid, 1)
                    delay = self._delay.pop(gid, 0.0) if done else 0.0
                    if done and delay > 0:
                        self._timed.add(gid)
                if done:
                    if delay > 0:
                        self._open_after_idle(gid, delay, heard)
                    else:
                        self.open(gid)

    def _started(self, gid: int, heard: int) -> None:
        with self._lock:
            self.starts.setdefault(gid, []).append(heard)
            all_started = len(self.starts[gid]) == self._expected.get(gid, 1)
            runtime = self._runtime_ns.get(gid)
        if all_started and runtime:
            threading.Timer(max(0.0, (heard + runtime - time.time_ns()) / 1e9), self._open_at_predicted_end,
                            (gid,)).start()

    def open_unfinished(self, gid: int) -> None:
        """Open a gate whose process ended; a finished cell's timed idle still runs its course."""
        with self._lock:
            if gid in self._timed:
                return
        self.open(gid)

    def gate_gap_ms(self, gid: int | None) -> float | None:
        """Gate-side gap: from the last clone's report of the cell before `gid` to its opening."""
        if gid is None or not self.fires.get(gid) or gid not in self.opened:
            return None
        return max(0.0, (self.opened[gid] - max(self.fires[gid])) / 1e6)

    def device_idle(self, gid: int | None) -> DeviceIdle | None:
        """Block-layer idle of the transition at `gid` (None: no transition there or gate never opened).
        Several devices: the longest idle among them."""
        if gid is None or not self.fires.get(gid) or gid not in self.opened:
            return None
        if not self.samplers:
            return DeviceIdle(None)
        # window from the cell's reported end to the gate opening (the opening comes first when predicted)
        ends = sorted((max(self.fires[gid]), self.opened[gid]))
        found = [sp.idle_across(*ends) for sp in self.samplers]
        if any(f.ms is None for f in found):
            return DeviceIdle(None)
        return max(found, key=lambda d: d.ms or 0.0)

    def close(self) -> None:
        self._stop = True
        os.write(self._ctl_fd, b"stop 0\n")
        self._thread.join(timeout=2)
        for gid in list(self._held):
            self.open(gid)
        os.close(self._ctl_fd)


MAX_CELLS_PER_PROCESS = 32   # bounds the jobs (threads, buffers) one waiting fio process holds


class _FioProcess:
    """One fio process running some consecutive cells of a round, gated like all the others."""

    def __init__(self, session: "FioSession", cells: Sequence[Workload], interval_s: float | None):
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
            gid = s.gates.new(w.threads * len(s.members), timed and timed + (w.ramp_s or 0))
            if prev is not None and w.idle_before_s:
                s.gates.set_delay(prev, w.idle_before_s)
            self._waits.append(prev)
            self.gates.append(gid)
            prev = gid
        s._last_gate = prev
        self.job_path = self.dir / "job.fio"
        self.out_path = self.dir / "out.json"
        self.interval_s = interval_s
        self.proc = None
        self.started_at = time.time()
        self.launch_error = ""
        self.cancelled = False
        self._launched = threading.Event()
        self._threads: list[threading.Thread] = []
        self._stderr: list[str] = []
        self._stdout: list[str] = []
        self.docs: list[dict] = []          # streaming: every status document seen
        # a cell continuing a stream starts where the stream's previous cell stopped: its process is
        # written and started once that cell's process has ended (the gates keep the device busy meanwhile)
        streams = {w.stream for w in cells if w.stream and not w.random}
        before = {s.stream_procs[x] for x in streams if x in s.stream_procs}
        for x in streams:
            s.stream_procs[x] = self
        if before:
            threading.Thread(target=self._launch_after, args=(before,), daemon=True).start()
        else:
            self._launch()

    def _launch_after(self, before: set) -> None:
        try:
            for p in before:
                p._launched.wait()
                if p.proc is not None:
                    p.proc.wait()
                    p.advance_streams()
            self._launch()
            if self.proc is not None:
                # PR_SET_PDEATHSIG fires when the *thread* that started fio ends: outlive the process
                self.proc.wait()
        except BaseException as e:   # never leave the round (or the cells after it) waiting
            self.launch_error = f"{type(e).__name__}: {e}"
            for gid in self.gates:
                self.session.gates.open_unfinished(gid)
            self._launched.set()

    def advance_streams(self) -> None:
        """After this process ended: move its streams by the bytes each target's job really transferred."""
        s = self.session
        if not any(w.stream for w in self.cells) or not self.out_path.exists():
            return
        try:
            _, parsed = parse_output(self.out_path.read_text(errors="replace"))
        except (ValueError, SsdptsError):
            return
        n = len(s.members)
        for k, w in enumerate(self.cells):
            for i, m in enumerate(s.members):
                if w.stream and k * n + i < len(parsed):
                    c = parsed[k * n + i]
                    s.streams.advance(s.streams.place(w, i), i, c.read.bytes + c.write.bytes, m.size_bytes,
                                      m.logical_block_size)

    def _launch(self) -> None:
        s = self.session
        if self.cancelled:
            for gid in self.gates:
                s.gates.open_unfinished(gid)
            self._launched.set()
            return
        members = s.members
        job = render_on(self.cells, members, place=s.streams.place)
        for k, (prev, gid) in enumerate(zip(self._waits, self.gates)):
            for name, opts in job.sections[k * len(members):(k + 1) * len(members)]:
                opts["new_group"] = ""
                opts["exec_prerun"] = s.gates.wait_hook(prev, gid)
                opts["exec_postrun"] = s.gates.fire_hook(gid)
        self.job_text = job.text()
        self.job_path.write_text(self.job_text)
        interval_s = self.interval_s
        if interval_s:
            # periodic cumulative status documents on stdout, cut into intervals as they arrive
            self.command = [s.engine.binary, "--output-format=json+", f"--status-interval={int(interval_s * 1000)}ms",
                            str(self.job_path)]
        else:
            self.command = [s.engine.binary, "--output-format=json+", f"--output={self.out_path}", str(self.job_path)]
        self.started_at = time.time()
        self.proc = subprocess.Popen(
            self.command, cwd=self.dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True, preexec_fn=_die_with_parent)
        self._threads = [threading.Thread(target=self._drain, args=(self.proc.stderr, self._stderr), daemon=True)]
        if not interval_s:
            self._threads.append(threading.Thread(target=self._drain, args=(self.proc.stdout, self._stdout),
                                                  daemon=True))
        for t in self._threads:
            t.start()
        # Whatever happens to this process, never leave later cells waiting on its gates.
        threading.Thread(target=self._release_on_exit, daemon=True).start()
        self._launched.set()

    @staticmethod
    def _drain(stream, sink: list[str]) -> None:
        for line in stream:
            sink.append(line)

    def _release_on_exit(self) -> None:
        self.proc.wait()
        for gid in self.gates:
            self.session.gates.open_unfinished(gid)

    def documents(self):
        """Streaming mode: yield each cumulative status document as fio prints it."""
        import json

        self._launched.wait()
        if self.proc is None:
            return
        decoder = json.JSONDecoder()
        buf = ""
        for line in self.proc.stdout:
            self._stdout.append(line)
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
            buf = ""
            if isinstance(doc, dict) and "jobs" in doc:
                self.docs.append(doc)
                yield doc

    def cancel(self) -> None:
        self.cancelled = True
        if not self._launched.is_set():
            return   # its launcher sees `cancelled` and only releases the gates
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()

    def finish(self) -> tuple[str, str]:
        """Wait for the process; (output text, stderr). Raises on failure."""
        self._launched.wait()
        if self.proc is None:
            raise SsdptsError(f"fio round on {self.session.target.path} did not start "
                              f"({self.launch_error or 'cancelled'}); job file: {self.job_path}")
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
        if self.proc.returncode != 0:
            last = next((l for l in reversed(stderr.strip().splitlines()) if l.strip()),
                        f"exit code {self.proc.returncode}")
            raise SsdptsError(f"fio failed on {self.session.target.path} ({last.strip()}); job file: {self.job_path}")
        return text, stderr


class FioRound:
    """A submitted round: one or more gated fio processes running its cells back to back."""

    def __init__(self, session: "FioSession", cells: Sequence[Workload], tag: str, interval_s: float | None = None):
        self.session = session
        self.cells = list(cells)
        self.tag = tag
        self.interval_s = interval_s
        if interval_s:
            # one cell per process: fio's status dump waits for every running job, so a job gated in
            # exec_prerun behind another job of the same process would deadlock the dump
            chunks = [[c] for c in self.cells]
        elif any(c.stream for c in self.cells):
            # a continuing stream's cell is started late (once its position is known): its own process
            chunks = [[c] for c in self.cells]
        else:
            chunks = [self.cells[i:i + MAX_CELLS_PER_PROCESS] for i in range(0, len(self.cells), MAX_CELLS_PER_PROCESS)]
        self.procs = [_FioProcess(session, chunk, interval_s) for chunk in chunks]
        self.started_at = self.procs[0].started_at
        self._result: RoundOutput | None = None

    def cancel(self) -> None:
        for p in self.procs:
            p.cancel()

    def intervals(self):
        """Streaming rounds only: yield an Interval each time fio reports, for every cell that did I/O."""
        from .fiodiff import diff_job
        from .results import Interval

        from .results import aggregate

        labels = [m.label_id for m in self.session.members]
        for idx, proc in enumerate(self.procs):
            prev: list[dict | None] = [None] * len(labels)
            count, elapsed = 0, 0.0
            for doc in proc.documents():
                diffs = [diff_job(job, prev[i]) for i, job in enumerate(doc["jobs"][:len(labels)])]
                prev = list(doc["jobs"][:len(labels)])
                dur = max(d for _, d in diffs)
                if dur <= 0 or sum(r.read.ios + r.write.ios for r, _ in diffs) == 0:
                    continue
                count += 1
                name = self.cells[idx].name
                result = diffs[0][0] if len(labels) == 1 else aggregate(
                    {label: r for label, (r, _) in zip(labels, diffs)}, name)
                yield Interval(idx, name, count, elapsed, dur, result, doc["jobs"][0] if len(labels) == 1 else
                               {"jobs": doc["jobs"]})
                elapsed += dur

    def interval_output(self, iv) -> RoundOutput:
        """A stored-round view of one interval of a streaming round."""
        import json as _json

        proc = self.procs[iv.cell_index]
        now = time.time()
        return RoundOutput(cells=[iv.result], engine="fio", job_text=proc.job_text, command=proc.command,
                           raw_output=_json.dumps(iv.raw or {}), started_at=now - iv.duration_ms / 1000,
                           ended_at=now, fio_version=self.session.engine.version)

    def result(self) -> RoundOutput:
        if self._result is not None:
            return self._result
        texts, errs = [], []
        try:
            for p in self.procs:
                text, err = p.finish()
                texts.append(text)
                errs.append(err)
        except BaseException:
            self.cancel()
            raise
        ended = time.time()
        cells = []
        version = self.session.engine.version
        from .fiojson import parse_job

        for proc, text in zip(self.procs, texts):
            if self.interval_s:
                if not proc.docs:
                    raise SsdptsError(f"fio printed no status for {self.tag or 'a streaming round'}; "
                                      f"job file: {proc.job_path}")
                doc, parsed = proc.docs[-1], [parse_job(j) for j in proc.docs[-1]["jobs"]]
            else:
                doc, parsed = parse_output(text)
            version = doc.get("fio version", version)
            cells += parsed
        members = self.session.members
        if len(members) > 1:
            from .results import aggregate

            n = len(members)
            cells = [aggregate({m.label_id: c for m, c in zip(members, cells[k * n:(k + 1) * n])}, w.name)
                     for k, w in enumerate(self.cells)]
        gates = self.session.gates
        all_gates = [g for p in self.procs for g in p.gates]
        inside = [g for g in (gates.gate_gap_ms(x) for x in all_gates[:-1]) if g is not None]
        idle_inside = [d for d in (gates.device_idle(x) for x in all_gates[:-1]) if d is not None]
        logs = {f.name: f.read_text() for p in self.procs for f in sorted(p.dir.glob("*.log"))}
        self._result = RoundOutput(
            cells=cells, engine="fio", logs=logs,
            job_text="\n".join(p.job_text for p in self.procs),
            command=self.procs[0].command if len(self.procs) == 1 else [c for p in self.procs for c in p.command + [";"]][:-1],
            raw_output="\n".join(texts), stderr="".join(errs), started_at=self.started_at, ended_at=ended,
            gap_before_ms=gates.gate_gap_ms(self.procs[0].wait_gate), gaps_inside_ms=inside,
            device_idle_before=gates.device_idle(self.procs[0].wait_gate), device_idle_inside=idle_inside,
            device_idle_note=self.session.idle_note, fio_version=version)
        return self._result


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
        # the device's own idle at every transition, from the block layer (blockidle.py)
        reasons = [r for m in self.members if (r := unavailable_reason(m))] if engine.measure_idle else \
            ["not measured: device-idle sampling switched off"]
        self.idle_note = "; ".join(dict.fromkeys(reasons))
        stats = [] if reasons else list(dict.fromkeys(stat_path_for(m.path) for m in self.members))
        self.samplers = [IdleSampler(p) for p in stats]
        self.gates = _Gates(self.dir / "gates", self.samplers)
        self._last_gate: int | None = None
        self._count = 0
        self.streams = StreamPositions()          # where each continuing sequential stream stands
        self.stream_procs: dict[str, _FioProcess] = {}   # stream -> process running its latest cell
        self._rounds: list[FioRound] = []

    def submit(self, cells: Sequence[Workload], tag: str = "", interval_s: float | None = None) -> FioRound:
        """Queue cells to run right after everything submitted before. With `interval_s`, the round
        streams: iterate `intervals()` for per-interval results while it runs (one fio process)."""
        r = FioRound(self, cells, tag, interval_s)
        self._rounds.append(r)
        return r

    def close(self) -> None:
        for r in self._rounds:
            r.cancel()
        self.gates.close()
        for sp in self.samplers:
            sp.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> "FioSession":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
