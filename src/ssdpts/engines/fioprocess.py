"""One fio process supervised from launch to exit: started under its reaper (or its death signal), set up in
the background while earlier cells run, its output drained, its progress reported, and stopped when it stops
making progress: a cell far past its due end (the session's hang watch calls `kill_hung`) or a main process
that has not exited `exit_grace_s` after its jobs all reported their end (`_watch_exit`). A stopped process
leaves its evidence and files (`keep`) and raises `RoundStalled`; a failed one says why, a failed drive as
`DriveFailed`. How the process tree is found and killed is fiotree.py; its job file fiojob.py."""

from __future__ import annotations

import logging
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from ..errors import SsdptsError
from ..realtime.timing import KILL_WAIT_S
from ..workload import Workload
from .drivefault import DriveFailed, drive_failures, kernel_names, vanished
from .fiojob import STATUS_INTERVAL_S, fio_command, gated_job
from .fioread import status_documents
from .fiotree import fio_preexec, kill_fio, stall_evidence, start_reaper, stop_reaper, to_foreground
from .results import IoProgress, Stall, size_bound_bytes

if TYPE_CHECKING:
    from .fio import FioSession

log = logging.getLogger("ssdpts")


class RoundStalled(SsdptsError):
    """A round's fio stopped making progress and was killed (the round runs again, STALL_RETRIES times)."""

    def __init__(self, stall: Stall):
        super().__init__(f"{stall.why}; evidence and job file: {stall.evidence_file}")
        self.stall = stall


class FioProcess:
    """One fio process running some consecutive cells of a round, gated like all the others."""

    def __init__(self, session: FioSession, cells: Sequence[Workload], interval_s: float | None,
                 on_progress: Callable[[IoProgress], None] | None = None):
        self.session = session
        self.dir = session.new_folder()
        self.cells = list(cells)
        # the gate it waits at, each cell's gate to wait at and its own (the session chains them behind the rest)
        self.wait_gate, self._waits, self.gates = session.chain(self.cells, kept=not interval_s)
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
        self.job_text = gated_job(self.cells, s.members, s.io, s.gates, self._waits, self.gates, self.dir)
        self.job_path.write_text(self.job_text)
        interval_s = self.interval_s or (self.on_progress and STATUS_INTERVAL_S)   # fio's status documents
        self.command = fio_command(s.engine.binary, self.job_path, self.out_path, interval_s)
        self.started_at = time.time()
        # A process that waits behind running cells sets up in the background (SCHED_IDLE): its jobs (up to
        # hundreds of threads allocating and filling buffers) otherwise take the CPU from the running cell's
        # threads, and on a CPU-bound device (zram at TC8/QD32) the device idled 35-56 ms at a time while
        # they did. The normal policy is given back once every job waits at its gate, or when its cells
        # are due (docs/device-idle.md has the measurements).
        background = s.engine.background_set_up and self.wait_gate is not None
        # forked job processes outlive fio's main process: a reaper, not PR_SET_PDEATHSIG, ends them all; it
        # is in place before fio starts (start_reaper says how)
        self.reaper = None if s.io.threads else start_reaper()
        try:
            self.proc = subprocess.Popen(
                self.command, cwd=self.dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                start_new_session=True, preexec_fn=fio_preexec(background, self.reaper))
        except BaseException:
            if self.reaper is not None:
                stop_reaper(self.reaper)
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
            to_foreground(self.proc.pid, s.engine.nice)

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
            stop_reaper(self.reaper)
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
        self._launched.wait()
        if self.proc is None:
            return
        for doc, text in status_documents(self.proc.stdout):
            # a process can live for hours with a document every interval: keep the latest only
            self.last_doc, self._stdout = doc, [text]
            yield doc

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
