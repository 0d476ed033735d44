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
import threading
import time
from pathlib import Path
from typing import Sequence

from ..errors import SsdptsError
from ..workload import Workload, render
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

    def __init__(self, binary: str = "fio", workdir: str | Path | None = None):
        self.binary = binary
        self.version = fio_version(binary)
        self.workdir = Path(workdir) if workdir else None

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
                if done:
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


class FioRound:
    def __init__(self, session: "FioSession", cells: Sequence[Workload], tag: str):
        self.session = session
        self.cells = list(cells)
        self.tag = tag
        s = session
        s._count += 1
        self.dir = s.dir / f"round-{s._count:05d}"
        self.dir.mkdir()
        job = render(self.cells, s.target.fio_filename, s.target.size_bytes, s.target.logical_block_size)
        self.wait_gate = s._last_gate
        self.gates: list[int] = []
        prev = s._last_gate
        for (name, opts), w in zip(job.sections, self.cells):
            gid = s.gates.new(w.threads)
            opts["new_group"] = ""
            if prev is not None:
                opts["exec_prerun"] = f"{s.gates.dir}/gate-wait {prev}"
            opts["exec_postrun"] = f"{s.gates.dir}/gate-fire {gid}"
            self.gates.append(gid)
            prev = gid
        s._last_gate = prev
        self.job_text = job.text()
        self.job_path = self.dir / "job.fio"
        self.job_path.write_text(self.job_text)
        self.out_path = self.dir / "out.json"
        self.command = [s.engine.binary, "--output-format=json+", f"--output={self.out_path}", str(self.job_path)]
        self.started_at = time.time()
        self.proc = subprocess.Popen(
            self.command, cwd=self.dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True, preexec_fn=_die_with_parent)
        self._result: RoundOutput | None = None
        # Whatever happens to this process, never leave later rounds waiting on its gates.
        self._watch = threading.Thread(target=self._release_on_exit, daemon=True)
        self._watch.start()
        if self.wait_gate is None:
            pass  # first round of the session: its first cell has no predecessor to wait for

    def _release_on_exit(self) -> None:
        self.proc.wait()
        for gid in self.gates:
            self.session.gates.open(gid)

    def cancel(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()

    def result(self) -> RoundOutput:
        if self._result is not None:
            return self._result
        stdout, stderr = self.proc.communicate()
        ended = time.time()
        text = self.out_path.read_text(errors="replace") if self.out_path.exists() else stdout
        if self.proc.returncode != 0:
            last = next((l for l in reversed(stderr.strip().splitlines()) if l.strip()), f"exit code {self.proc.returncode}")
            raise SsdptsError(f"fio failed on {self.session.target.path} ({last.strip()}); job file: {self.job_path}")
        doc, cells = parse_output(text)
        gates = self.session.gates
        released = gates.released()

        def gap(before: int | None, after_release_of: int | None) -> float | None:
            if before is None or not gates.fires.get(before) or after_release_of not in released:
                return None
            return max(0.0, (released[after_release_of] - max(gates.fires[before])) / 1e6)

        inside = [g for g in (gap(self.gates[i - 1], self.gates[i - 1]) for i in range(1, len(self.gates))) if g is not None]
        self._result = RoundOutput(
            cells=cells,
            engine="fio",
            job_text=self.job_text,
            command=self.command,
            raw_output=text,
            stderr=stderr,
            started_at=self.started_at,
            ended_at=ended,
            gap_before_ms=gap(self.wait_gate, self.wait_gate),
            gaps_inside_ms=inside,
            fio_version=doc.get("fio version", self.session.engine.version),
        )
        return self._result


class FioSession:
    def __init__(self, engine: FioEngine, target):
        self.engine = engine
        self.target = target
        base = engine.workdir or Path(os.environ.get("TMPDIR", "/tmp"))
        base.mkdir(parents=True, exist_ok=True)
        import tempfile

        self.dir = Path(tempfile.mkdtemp(prefix="ssdpts-fio-", dir=base))
        self.gates = _Gates(self.dir / "gates")
        self._last_gate: int | None = None
        self._count = 0
        self._rounds: list[FioRound] = []

    def submit(self, cells: Sequence[Workload], tag: str = "") -> FioRound:
        r = FioRound(self, cells, tag)
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
