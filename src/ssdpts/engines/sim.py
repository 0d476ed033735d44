"""The simulated-SSD engine: the same workload descriptions as fio, executed in simulated time.

Results come back shaped like fio's JSON jobs, so they go through the same parser as fio output
and every test, steady-state decision and report works unchanged. Rounds are chained with no idle
time, as the fio engine chains them with gates.
Several simulated drives tested at once (a TargetSet of them) each run every cell on their own drive, with
their own seeds and state, exactly as a one-drive run would; a cell's result is their aggregate (results.aggregate)
with each drive's own result in its parts, as the fio engine gives for several real drives.
The simulated drive stores no data, so a workload's `data_pattern` changes nothing: it models an
incompressible, non-deduplicating drive (every pattern behaves as `random`).
"""

from __future__ import annotations

import json
import time
import zlib
from typing import Sequence

from .._sim import version as sim_version
from ..capabilities import Capability
from ..workload import Workload
from ..workload.ioengine import IoChoice
from .blockidle import UNAVAILABLE_SIM
from .coverage import access_of, from_sim
from .fiojson import parse_job
from .results import SHORT_PIECE, CellResult, Interval, RoundOutput, aggregate, combine, fold_short_pieces
from .stimulus import Stimulus, not_per_interval
from .stimulus import from_sim as stimulus_from_sim
from .stimulus import side_by_side


def sim_job(w: Workload, capacity: int, lbs: int, seed: int) -> dict:
    # as fio: each SEQ clone walks its own slice from its start and wraps back to it (workload/fio.py)
    offset, size, increment = w.clone_slices(capacity, lbs)
    job = {
        "name": w.name, "rw": w.rw, "rwmixread": w.reads, "bs": w.bs, "numjobs": w.threads, "iodepth": w.iodepth,
        "offset": offset, "size": size, "offset_increment": increment,
        "runtime_ns": int((w.runtime_s or 0) * 1e9), "io_size": int(w.io_size or 0),
        "thinktime_ns": int(w.thinktime_us * 1000), "thinktime_iotime_ns": int(w.thinktime_iotime_s * 1e9),
        "seed": w.seed if w.seed is not None else seed, "log_interval_ns": int(w.log_interval_ms * 1e6),
        "percentiles": list(w.percentiles),
    }
    if w.bssplit:
        # the simulator takes one split for both directions, every I/O at a random offset
        job["bssplit"] = [list(x) for x in w.combined_bssplit()]
    if w.distribution.startswith("zoned:"):
        job["zones"] = [[float(a), float(b)] for a, b in (z.split("/") for z in w.distribution[6:].split(":"))]
    return job


def sim_cell(res: dict) -> CellResult:
    """A simulated job's result as fio's parser reads it, with the simulator's own LBA coverage."""
    cell = parse_job(res)
    cell.coverage = from_sim(res.get("coverage"), res.get("access", ""), cell.read.bytes + cell.write.bytes,
                             res.get("active_range"))
    return cell


class SimRound:
    def __init__(self, session: "SimSession", cells: Sequence[Workload], tag: str, interval_s: float | None = None):
        self.session = session
        self.cells = list(cells)
        self.tag = tag
        self.interval_s = interval_s
        self.cancelled = False
        self._result: RoundOutput | None = None
        self._streamed: list[list] | None = None

    def cancel(self) -> None:
        if self._result is None:
            self.cancelled = True

    def _run(self, w: Workload) -> tuple[dict, dict, Stimulus]:
        """(job, fio-shaped result, what the drive's own counters saw of it)."""
        s = self.session
        s.counter += 1
        job = sim_job(w, s.target.size_bytes, s.target.logical_block_size,
                      seed=zlib.crc32(f"{w.name}/{s.counter}".encode()))
        before = s.target.drive.counters()
        res = s.target.drive.run_job(job)
        seen = stimulus_from_sim(before, s.target.drive.counters(), res)
        # read back by sim_cell: coverage is judged against the cell's active range, not the job's
        res["access"] = access_of(w.rw, w.distribution)
        res["active_range"] = list(w.region(s.target.size_bytes, s.target.logical_block_size))
        return job, res, seen

    def intervals(self):
        """Run each cell in slices of `interval_s` simulated seconds, back to back (no idle between). No piece
        shorter than half a slice after the first is a slice of its own (results.fold_short_pieces): no round
        of a few µs, or of none."""
        assert self.interval_s, "intervals() needs a round submitted with interval_s"
        self._streamed = []
        drive = self.session.target.drive
        for idx, w in enumerate(self.cells):
            if w.idle_before_s:
                drive.idle(w.idle_before_s)
            # sequential: one job, cut by the simulator's own interval log, so each round continues where the
            # previous one stopped (a job per slice would restart at the range's start); its log's last row
            # (the job's end) can be µs or none after the row before: it ends that slice. A random cell's
            # slices are jobs of their own, each timed by the simulator, their coverage and stimulus its own.
            pieces = self._random_pieces(w) if w.random else fold_short_pieces(
                self._sequential_pieces(w), self.interval_s * 1000, lambda p: p[0].runtime_ms, _merged_rows)
            elapsed_ms = 0.0
            for n, (cell, raw) in enumerate(pieces, start=1):
                cell.stimulus = cell.stimulus or not_per_interval("the simulator's counters")
                yield Interval(idx, w.name, n, elapsed_ms, cell.runtime_ms, cell, raw)
                elapsed_ms += cell.runtime_ms

    def _random_pieces(self, w: Workload):
        """A random cell's slices: one simulator job each, its result and raw output. A runtime that is no
        whole number of slices gives its remainder to the last slice, if shorter than half a slice."""
        slices, written = [], 0
        remaining_s = w.runtime_s
        while True:
            step = self.interval_s if remaining_s is None else min(self.interval_s, remaining_s)
            if remaining_s is not None and remaining_s - step < self.interval_s * SHORT_PIECE:
                step = remaining_s
            per_clone = None
            if w.io_size is not None:
                per_clone = w.io_size - written
                if per_clone < w.max_bs:
                    break
            if step <= 1e-9:
                break
            # each slice continues the cell's random stream: a seeded cell's slices get their own
            # seeds (derived from it), or every slice would rewrite the same LBAs
            seed = None if w.seed is None else zlib.crc32(f"{w.seed}/{len(slices)}".encode())
            job, res, seen = self._run(w.with_(runtime_s=step, io_size=per_clone, idle_before_s=0.0,
                                               seed=seed if len(slices) else w.seed))
            cell = sim_cell(res)
            cell.stimulus = seen
            slices.append((job, res, cell))
            written += (cell.read.bytes + cell.write.bytes) // max(w.threads, 1)
            yield cell, res
            if remaining_s is not None:
                remaining_s -= step
            if cell.runtime_ms < step * 1000 * 0.999:   # io_size reached inside the slice
                break
        self._streamed.append(slices)

    def interval_output(self, iv) -> RoundOutput:
        now = time.time()
        return RoundOutput(cells=[iv.result], engine="sim", job_text=json.dumps(self.cells[iv.cell_index].to_dict()),
                           command=["ssdsim", "run_job", self.session.target.path], raw_output=json.dumps(iv.raw or {}),
                           started_at=now, ended_at=now, gap_before_ms=0.0, device_idle_note=UNAVAILABLE_SIM,
                           fio_version=self.session.engine.version)

    def _sequential_pieces(self, w: Workload):
        """A sequential cell's slices from the simulator's interval log of one job: their results and log rows."""
        from .results import DirStats

        job, res, seen = self._run(w.with_(log_interval_ms=int(self.interval_s * 1000), idle_before_s=0.0))
        whole = sim_cell(res)
        whole.stimulus = seen
        self._streamed.append([(job, res, whole)])
        prev_t = 0
        for iv in res.get("intervals", []):
            dur_ms = (iv["t_ns"] - prev_t) / 1e6
            prev_t = iv["t_ns"]
            secs = dur_ms / 1000 or 1e-9

            def d(kind: str) -> DirStats:
                ios, nbytes = iv[f"{kind}_ios"], iv[f"{kind}_bytes"]
                return DirStats(ios=ios, bytes=nbytes, iops=ios / secs, bw_bytes=nbytes / secs,
                                lat_mean_ns=iv["lat_mean_ns"] if ios else 0.0,
                                lat_max_ns=iv["lat_max_ns"] if ios else 0.0)

            yield CellResult(name=w.name, read=d("read"), write=d("write"), runtime_ms=dur_ms), iv

    def _execute(self) -> RoundOutput:
        s = self.session
        drive, t = s.target.drive, s.target
        jobs, raw, cells = [], [], []
        started = time.time()
        if self.interval_s:
            if self._streamed is None:
                for _ in self.intervals():
                    pass
            for w, slices in zip(self.cells, self._streamed):
                jobs += [j for j, _, _ in slices]
                raw += [r for _, r, _ in slices]
                cells.append(combine([c for _, _, c in slices], w.name))
                cells[-1].stimulus = sum((c.stimulus for _, _, c in slices[1:]), slices[0][2].stimulus) if slices \
                    else None
        else:
            for w in self.cells:
                if w.idle_before_s:
                    drive.idle(w.idle_before_s)
                ramp = None
                if w.ramp_s:   # fio ramp_time: the I/O runs first and is not counted (the device sees it)
                    ramp = self._run(w.with_(runtime_s=w.ramp_s, ramp_s=0.0))[2]
                job, res, seen = self._run(w)
                jobs.append(job)
                raw.append(res)
                cells.append(sim_cell(res))
                cells[-1].stimulus = seen if ramp is None else ramp.as_warmup() + seen
        gaps = [w.idle_before_s * 1000 for w in self.cells]
        return RoundOutput(cells=cells, engine="sim", job_text=json.dumps(jobs, indent=1),
                           command=["ssdsim", "run_job", t.path], raw_output=json.dumps({"jobs": raw}),
                           started_at=started, ended_at=time.time(), gap_before_ms=gaps[0],
                           gaps_inside_ms=gaps[1:], device_idle_note=UNAVAILABLE_SIM, fio_version=s.engine.version)

    def result(self) -> RoundOutput:
        if self._result is None:
            # rounds run in submission order, like the gated fio chain
            for r in self.session.queue:
                if r is self:
                    break
                if r._result is None and not r.cancelled:
                    r._result = r._execute()
            self._result = self._execute()
        return self._result


class SimSession:
    def __init__(self, engine: "SimEngine", target):
        self.engine = engine
        self.target = target
        self.queue: list[SimRound] = []
        self.counter = 0

    def submit(self, cells: Sequence[Workload], tag: str = "", interval_s: float | None = None,
               on_progress=None) -> SimRound:
        """`on_progress` is not called: a round runs at once, in simulated time, when its result is asked for."""
        r = SimRound(self, cells, tag, interval_s)
        self.queue.append(r)
        return r

    def close(self) -> None:
        self.queue.clear()

    def __enter__(self) -> "SimSession":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _merged_rows(held: tuple[CellResult, dict], tail: tuple[CellResult, dict]) -> tuple[CellResult, dict]:
    """Two consecutive rows of the simulator's interval log as one slice: counts added, rates over their time."""
    rows = held[1].get("rows", [held[1]]) + [tail[1]]
    return combine([held[0], tail[0]]), {"rows": rows}


def _side_by_side(parts: dict[str, CellResult], name: str) -> CellResult:
    """One cell's result on several drives: their aggregate, with what the drives' counters saw of it together."""
    out = aggregate(parts, name)
    out.stimulus = side_by_side([p.stimulus for p in parts.values()])
    return out


class SimSetRound:
    """One round on every drive of a set: each drive's own SimRound (the drives are independent, so running
    them one after the other in simulated time is the same as running them side by side)."""

    def __init__(self, session: "SimSetSession", rounds: list[SimRound], cells: Sequence[Workload]):
        self.session = session
        self.rounds = rounds
        self.cells = list(cells)
        self._result: RoundOutput | None = None

    def cancel(self) -> None:
        for r in self.rounds:
            r.cancel()

    def _labels(self) -> list[str]:
        return [m.label_id for m in self.session.members]

    def intervals(self):
        """Every drive's intervals, the same slice of the same cell aggregated (a drive whose cell ended
        sooner, e.g. by its io_size, is left out of the later slices)."""
        per_drive = [{(iv.cell_index, iv.index): iv for iv in r.intervals()} for r in self.rounds]
        keys = sorted({k for d in per_drive for k in d})
        for key in keys:
            have = {label: d[key] for label, d in zip(self._labels(), per_drive) if key in d}
            first = next(iter(have.values()))
            result = _side_by_side({label: iv.result for label, iv in have.items()}, first.name)
            yield Interval(first.cell_index, first.name, first.index, first.start_ms,
                           max(iv.duration_ms for iv in have.values()), result,
                           {label: iv.raw for label, iv in have.items()})

    def interval_output(self, iv) -> RoundOutput:
        out = self.rounds[0].interval_output(iv)
        out.command = ["ssdsim", "run_job", *self._labels()]
        return out

    def result(self) -> RoundOutput:
        if self._result is None:
            outs = [r.result() for r in self.rounds]
            cells = [_side_by_side({label: out.cells[k] for label, out in zip(self._labels(), outs)}, w.name)
                     for k, w in enumerate(self.cells)]
            first = outs[0]
            self._result = RoundOutput(
                cells=cells, engine="sim", job_text="\n".join(o.job_text for o in outs),
                command=["ssdsim", "run_job", *self._labels()],
                raw_output=json.dumps({label: json.loads(o.raw_output) for label, o in zip(self._labels(), outs)}),
                started_at=first.started_at, ended_at=outs[-1].ended_at, gap_before_ms=first.gap_before_ms,
                gaps_inside_ms=first.gaps_inside_ms, device_idle_note=UNAVAILABLE_SIM, fio_version=first.fio_version)
        return self._result


class SimSetSession:
    """A session on several simulated drives: one SimSession per drive, each with its own counter (so its own
    seeds), rounds submitted to all of them together."""

    def __init__(self, engine: "SimEngine", target):
        self.engine = engine
        self.target = target
        self.members = target.drives()
        self.sessions = [SimSession(engine, m) for m in self.members]

    def submit(self, cells: Sequence[Workload], tag: str = "", interval_s: float | None = None,
               on_progress=None) -> SimSetRound:
        """`on_progress` is not called: a round runs at once, in simulated time, when its result is asked for."""
        return SimSetRound(self, [s.submit(cells, tag, interval_s) for s in self.sessions], cells)

    def close(self) -> None:
        for s in self.sessions:
            s.close()

    def __enter__(self) -> "SimSetSession":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class SimEngine:
    name = "sim"
    keep_dir = None      # nothing to keep: the simulator runs in this process
    binary = None        # no fio: the simulator runs each job itself
    last_io_at = None    # a simulated drive's pause is simulated time: the stop's time stands for its last I/O
    trace_stimulus = False   # the simulator counts each cell's coverage itself (sim_cell)
    # no FIO_JOBS: the simulator runs each cell as one job of its own, with no fio I/O engine
    capabilities = frozenset({Capability.GATED_CHAINING, Capability.TIMED_IDLE, Capability.STREAMING,
                              Capability.BANDWIDTH_LOG, Capability.HEALTH, Capability.PURGE, Capability.CHECKPOINT,
                              Capability.STREAMED_LOG})

    def __init__(self):
        self.version = f"ssdsim-{sim_version()}"
        self.failed: dict[str, str] = {}
        self.io: IoChoice | None = None     # engines.engine_for records "not applicable" here

    def session(self, target) -> SimSession | SimSetSession:
        return SimSetSession(self, target) if target.kind == "set" else SimSession(self, target)

    def purge(self, drive, method: str) -> None:
        """The simulated drive purges itself (targets/purge.py)."""
        return None
