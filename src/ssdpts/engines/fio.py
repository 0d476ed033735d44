"""Local fio engine.

Each submitted round is one fio process whose cells are separate jobs in their own reporting
groups. fio's own `stonewall` costs 100-300 ms of idle device time per transition (its job
launcher polls every 100 ms), so cells are chained with *gates* instead: every job starts
blocked in `exec_prerun` on a shared flock held by this engine, and its `exec_postrun` reports
to the engine, which unlocks the next cell's gate the moment all clones of the current cell have
finished. The next round's process is started early and waits on the same kind of gate, so the
device sees back-to-back I/O across cells and rounds; the measured gaps are stored with the round.
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
from .fiojson import parse_output
from .results import RoundOutput

MIN_FIO = (3, 20)   # lat_percentiles/percentile_list on total latency, thread, json+ bins

_WAIT_SH = """#!/bin/sh
# gate-wait ID: block until the engine unlocks gate ID, then log the release time
flock -s "{dir}/g$1" true
echo "$1 $(date +%s%N)" >> "{dir}/released"
"""
_FIRE_SH = """#!/bin/sh
# gate-fire ID: tell the engine one clone of cell ID has finished its I/O
echo "$1 $(date +%s%N)" > "{dir}/ctl"
"""


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

    def __init__(self, binary: str = "fio", workdir: str | Path | None = None):
        self.binary = binary
        self.version = fio_version(binary)
        self.workdir = Path(workdir) if workdir else None
        self.failed: dict[str, str] = {}      # local targets do not drop out one by one: a failure ends the run

    def session(self, target) -> "FioSession":
        return FioSession(self, target)


class _Gates:
    """Engine-held exclusive flocks that fio jobs wait on, opened when all clones of a cell report."""

    def __init__(self, directory: Path):
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.ctl = self.dir / "ctl"
        os.mkfifo(self.ctl)
        (self.dir / "gate-wait").write_text(_WAIT_SH.format(dir=self.dir))
        (self.dir / "gate-fire").write_text(_FIRE_SH.format(dir=self.dir))
        for f in ("gate-wait", "gate-fire"):
            (self.dir / f).chmod(0o755)
        self._lock = threading.Lock()
        self._held: dict[int, int] = {}          # gate id -> fd holding LOCK_EX
        self._expected: dict[int, int] = {}      # gate id -> clones that must report
        self._delay: dict[int, float] = {}       # gate id -> idle seconds before it opens
        self._timed: set[int] = set()            # gates whose cell finished and that open after a delay
        self.fires: dict[int, list[int]] = {}    # gate id -> fire timestamps (ns)
        self._next = 0
        self._ctl_fd = os.open(self.ctl, os.O_RDWR)   # RDWR: never sees EOF
        self._stop = False
        self._thread = threading.Thread(target=self._listen, daemon=True)
        self._thread.start()

    def new(self, clones: int) -> int:
        with self._lock:
            gid = self._next
            self._next += 1
            fd = os.open(self.dir / f"g{gid}", os.O_CREAT | os.O_RDWR, 0o644)
            fcntl.flock(fd, fcntl.LOCK_EX)
            self._held[gid] = fd
            self._expected[gid] = clones
            self.fires[gid] = []
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

    def _listen(self) -> None:
        buf = b""
        while not self._stop:
            chunk = os.read(self._ctl_fd, 4096)
            if not chunk:
                continue
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                parts = line.split()
                if len(parts) != 2 or parts[0] == b"stop":
                    continue
                gid, ts = int(parts[0]), int(parts[1])
                with self._lock:
                    self.fires.setdefault(gid, []).append(ts)
                    done = len(self.fires[gid]) >= self._expected.get(gid, 1)
                    delay = self._delay.pop(gid, 0.0) if done else 0.0
                    if done and delay > 0:
                        self._timed.add(gid)
                if done:
                    if delay > 0:
                        threading.Timer(delay, self.open, (gid,)).start()
                    else:
                        self.open(gid)

    def open_unfinished(self, gid: int) -> None:
        """Open a gate whose process ended; a finished cell's timed idle still runs its course."""
        with self._lock:
            if gid in self._timed:
                return
        self.open(gid)

    def released(self) -> dict[int, int]:
        """gate id -> first release time (ns) seen by a waiting job."""
        out: dict[int, int] = {}
        path = self.dir / "released"
        if path.exists():
            for line in path.read_text().split("\n"):
                parts = line.split()
                if len(parts) == 2:
                    gid, ts = int(parts[0]), int(parts[1])
                    out[gid] = min(ts, out.get(gid, ts))
        return out

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
            gid = s.gates.new(w.threads * len(s.members))
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
                if prev is not None:
                    opts["exec_prerun"] = f"{s.gates.dir}/gate-wait {prev}"
                opts["exec_postrun"] = f"{s.gates.dir}/gate-fire {gid}"
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
        released = gates.released()

        def gap(gid: int | None) -> float | None:
            if gid is None or not gates.fires.get(gid) or gid not in released:
                return None
            return max(0.0, (released[gid] - max(gates.fires[gid])) / 1e6)

        all_gates = [g for p in self.procs for g in p.gates]
        inside = [g for g in (gap(x) for x in all_gates[:-1]) if g is not None]
        logs = {f.name: f.read_text() for p in self.procs for f in sorted(p.dir.glob("*.log"))}
        self._result = RoundOutput(
            cells=cells, engine="fio", logs=logs,
            job_text="\n".join(p.job_text for p in self.procs),
            command=self.procs[0].command if len(self.procs) == 1 else [c for p in self.procs for c in p.command + [";"]][:-1],
            raw_output="\n".join(texts), stderr="".join(errs), started_at=self.started_at, ended_at=ended,
            gap_before_ms=gap(self.procs[0].wait_gate), gaps_inside_ms=inside, fio_version=version)
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
        self.gates = _Gates(self.dir / "gates")
        self.members = list(target.drives())
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
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> "FioSession":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
