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

This module is the engine and its gated session (which cells go together, behind which gates, and a stalled
round run again); the rooms beside it: a process's job file and command line (fiojob.py), one fio process
supervised from launch to exit (fioprocess.py, with the process tree in fiotree.py), and reading a round's
results (fioread.py).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable, Iterator, Sequence

from ..capabilities import Capability
from ..errors import SsdptsError
from ..realtime.timing import FIO_EXIT_GRACE_S, HANG_GRACE_S, STALL_RETRIES
from ..workload import Workload
from ..workload.ioengine import IoChoice, IoRequest
from .blockidle import IdleSampler, stat_path_for, unavailable_reason
from .drivefault import KernelLog
from .fio_versions import fio_binary, fio_version
from .fiojob import process_chunks
from .fioprocess import FioProcess, RoundStalled
from .fioread import interval_output, last_io, round_intervals, round_output
from .gates import Gates
from .ioengine import engine_choice
from .results import Interval, IoProgress, RoundOutput, Stall
from .stimulus import BlockCounters, not_available
from .tracecoverage import CoverageTracer


class FioEngine:
    name = "fio"
    # gates chain cells and rounds; timed gates give idle periods; one job can be cut into rounds
    capabilities = frozenset({Capability.GATED_CHAINING, Capability.TIMED_IDLE, Capability.STREAMING,
                              Capability.BANDWIDTH_LOG, Capability.HEALTH, Capability.PURGE,
                              Capability.LOCAL_BLOCK_LAYER, Capability.LOCAL_FILE_SYSTEM, Capability.CHECKPOINT,
                              Capability.FIO_JOBS})

    def __init__(self, binary: str | None = None, workdir: str | Path | None = None, measure_idle: bool = True,
                 hang_grace_s: float = HANG_GRACE_S, stall_retries: int = STALL_RETRIES,
                 io_request: IoRequest = IoRequest(), exit_grace_s: float = FIO_EXIT_GRACE_S):
        self.binary = binary or fio_binary()
        self.io_request = io_request     # the profile's ioengine, checked once on the drives (ioengine.choose)
        self.io: IoChoice | None = None  # the choice every session renders (engines.engine_for sets it)
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

    def session(self, target) -> FioSession:
        return FioSession(self, target)

    def purge(self, drive, method: str) -> None:
        """A local drive is purged by the host's own tools (targets/purge.py), not through fio."""
        return None


class FioRound:
    """A submitted round: one or more gated fio processes running its cells back to back."""

    def __init__(self, session: FioSession, cells: Sequence[Workload], tag: str, interval_s: float | None = None,
                 on_progress: Callable[[IoProgress], None] | None = None):
        self.session = session
        self.cells = list(cells)
        self.tag = tag
        self.interval_s = interval_s
        # progress needs fio's status dumps, which a job gated behind another of its process would deadlock (fiojob.process_chunks)
        self.on_progress = None if interval_s else on_progress
        if interval_s and any(c.jobs for c in self.cells):
            raise ValueError("a streamed round runs one fio job per cell; a cell of several jobs cannot stream")
        self._chunks = process_chunks(self.cells, one_per_process=bool(interval_s or self.on_progress))
        self.stalls: list[Stall] = []
        self._result: RoundOutput | None = None
        self.arm()

    def arm(self) -> None:
        """Start (or, after a stall, start again) this round's processes behind everything submitted so far."""
        if self.session.tracer is not None and getattr(self, "procs", None):
            self.session.tracer.forget([g for p in self.procs for g in p.gates])
        self.procs = [FioProcess(self.session, chunk, self.interval_s, self.on_progress) for chunk in self._chunks]
        self.started_at = self.procs[0].started_at

    def cancel(self) -> None:
        for p in self.procs:
            p.cancel()

    def intervals(self) -> Iterator[Interval]:
        """Streaming rounds only: yield an Interval each time fio reports, for every cell that did I/O."""
        return round_intervals(self)

    def interval_output(self, iv: Interval) -> RoundOutput:
        """A stored-round view of one interval of a streaming round."""
        return interval_output(self, iv)

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
        self._result = round_output(self, texts, errs)
        # every transition of this round is judged; later rounds' come after it began
        for sp in self.session.samplers:
            sp.forget_before(int(self.started_at * 1e9))
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
    """The engine at work on one target: rounds chained behind gates in submission order, watched for hung cells,
    with the block layer's view of every transition (device idle, stimulus, coverage) until it closes."""

    def __init__(self, engine: FioEngine, target):
        self.engine = engine
        self.target = target
        base = engine.workdir or Path(os.environ.get("TMPDIR", "/tmp"))
        base.mkdir(parents=True, exist_ok=True)
        _remove_stale_sessions(base)
        self.dir = Path(tempfile.mkdtemp(prefix=f"ssdpts-fio-{os.getpid()}-", dir=base))
        self.members = list(target.drives())
        self.io = engine_choice(engine, self.members)
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

    def new_folder(self) -> Path:
        """A folder of its own for the next fio process (its job file, output, logs)."""
        self._count += 1
        folder = self.dir / f"proc-{self._count:05d}"
        folder.mkdir()
        return folder

    def chain(self, cells: Sequence[Workload], kept: bool) -> tuple[int | None, list[int | None], list[int]]:
        """Gates for `cells` behind everything submitted so far: (the gate the first waits at, each cell's gate to
        wait at, each cell's own gate). `kept`: the tracer records each cell (a streamed round's are stored by
        interval: no record)."""
        first = prev = self._last_gate
        waits, gids = [], []
        for w in cells:
            # every target's job of this cell starts at the same gate; the next cell waits for all of them
            timed = w.runtime_s if w.runtime_s and w.io_size is None else None
            gid = self.gates.new(w.clones * len(self.members), timed and timed + (w.ramp_s or 0), wait=prev)
            if prev is not None and w.idle_before_s:
                self.gates.set_delay(prev, w.idle_before_s)
            waits.append(prev)
            gids.append(gid)
            if self.tracer is not None:
                self.tracer.register(gid, w, kept=kept)
            prev = gid
        self._last_gate = prev
        return first, waits, gids

    def _cell_late(self, gid: int) -> None:
        """A time-based cell that is far past its end: stop its fio process (the round then fails, saying why)."""
        for r in self._rounds:
            for p in r.procs:
                if gid in p.gates:
                    if p.proc is None or p.proc.poll() is not None:
                        return     # the process has ended (its own error, if any, is what the round reports)
                    w = p.cells[p.gates.index(gid)]
                    if len(self.gates.starts.get(gid, ())) < self.gates.clones.get(gid, 0):
                        why = (f"cell {w.name} had not started {w.runtime_s:g} s + {self.engine.hang_grace_s:g} s "
                               "after its turn came; fio stopped making progress before it (stuck opening the "
                               "device? see the kernel log)")
                    else:
                        why = (f"cell {w.name} had not ended {self.engine.hang_grace_s:g} s after its "
                               f"{w.runtime_s:g} s run; fio stopped making progress (an I/O lost below fio? "
                               "see the kernel log)")
                    p.kill_hung(w.name, why)
                    return

    def stimulus(self, gid: int):
        """The block layer's record of gate `gid`'s cell."""
        if self.block is None:
            return not_available(self.block_note)
        record = self.block.between(*self.gates.block_between(gid))
        record.overlap_ms = self.gates.overlap_ms(gid)
        record.ran_on_ms = self.gates.ran_on_ms(gid)
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
            self.engine.last_io_at = last_io(self.samplers)
        self.close()
