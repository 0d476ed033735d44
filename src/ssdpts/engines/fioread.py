"""Reading a gated round's results: fio's output (its JSON document, or the cumulative status documents it
prints while streaming) turned into the round's stored form, with a several-job cell's jobs merged, several
drives' results aggregated, and the gates' and block layer's view of each transition beside them (the gate
gaps, the device's own idle, host CPU, stimulus and LBA coverage). fio.py runs the round; this reads it."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Iterable, Iterator, Sequence

from ..errors import SsdptsError
from ..workload import Workload
from .blockidle import IdleSampler
from .fiodiff import slices
from .fiojson import parse_job, parse_output
from .fiolog import intervals_from_logs
from .gates import Gates
from .results import DeviceIdle, Interval, RoundOutput, aggregate, merge_jobs
from .stimulus import not_available, not_per_interval

if TYPE_CHECKING:
    from .fio import FioRound


def status_documents(lines: Iterable[str]) -> Iterator[tuple[dict, str]]:
    """Each cumulative status document fio prints (--status-interval), with the text it came in, as it comes."""
    decoder = json.JSONDecoder()
    buf = ""
    for line in lines:
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
            yield doc, buf
        buf = ""


def round_output(rnd: FioRound, texts: Sequence[str], errs: Sequence[str]) -> RoundOutput:
    """The finished round's cells and everything stored beside them (`texts`, `errs`: each process's output)."""
    collected = time.time()
    cells = []
    s = rnd.session
    version = s.engine.version
    written: list[float | None] = []
    for proc, text in zip(rnd.procs, texts):
        if rnd.interval_s:
            if proc.last_doc is None:
                raise SsdptsError(f"fio printed no status for {rnd.tag or 'a streaming round'}; "
                                  f"job file: {proc.keep() / 'job.fio'}")
            doc, parsed = proc.last_doc, [parse_job(j) for j in proc.last_doc["jobs"]]
        else:
            doc, parsed = parse_output(text)
        version = doc.get("fio version", version)
        written.append(_written_at(doc))
        cells += parsed
    ended = fio_ended(rnd.started_at, written, collected)
    members = s.members
    cells = merge_cell_jobs(rnd.cells, cells, len(members))
    if len(members) > 1:
        n = len(members)
        cells = [aggregate({m.label_id: c for m, c in zip(members, cells[k * n:(k + 1) * n])}, w.name)
                 for k, w in enumerate(rnd.cells)]
    gates = s.gates
    gates.sync()      # every end report of these processes is in
    samplers = s.samplers
    all_gates = [g for p in rnd.procs for g in p.gates]
    if len(all_gates) == len(cells):
        for cell, gid in zip(cells, all_gates):
            cell.host_cpu = gates.host_cpu(gid)
            cell.stimulus = s.stimulus(gid)
        if s.tracer is not None and not rnd.interval_s:
            for cell, cov in zip(cells, s.tracer.finish(all_gates)):
                cell.coverage = cov
    inside = [g for g in (gates.gate_gap_ms(x) for x in all_gates[:-1]) if g is not None]
    idle_inside = [d for d in (device_idle(gates, samplers, x) for x in all_gates[:-1]) if d is not None]
    # fio's log files, and the iolog a trace cell replayed (kept with the results like the job file)
    logs = {f.name: f.read_text() for p in rnd.procs
            for f in sorted([*p.dir.glob("*.log"), *p.dir.glob("*.iolog")])}
    for w, c in zip(rnd.cells, cells):    # a cell that asked for interval logs gets them as its intervals
        if w.log_interval_ms and not c.intervals:
            c.intervals = intervals_from_logs(logs, w.name, w.log_interval_ms)
    return RoundOutput(
        cells=cells, engine="fio", logs=logs,
        job_text="\n".join(p.job_text for p in rnd.procs),
        command=rnd.procs[0].command if len(rnd.procs) == 1 else [c for p in rnd.procs for c in p.command + [";"]][:-1],
        raw_output="\n".join(texts), stderr="".join(errs), started_at=rnd.started_at, ended_at=ended,
        gap_before_ms=gates.gate_gap_ms(rnd.procs[0].wait_gate), gaps_inside_ms=inside,
        device_idle_before=device_idle(gates, samplers, rnd.procs[0].wait_gate), device_idle_inside=idle_inside,
        device_idle_note=s.idle_note, fio_version=version, stalls=list(rnd.stalls),
        first_io_at=first_io(samplers) if rnd.procs[0].wait_gate is None else None)


def _written_at(doc: dict) -> float | None:
    """When fio wrote this result, by its own wall clock (its JSON's `timestamp_ms`); None without one."""
    stamp = doc.get("timestamp_ms")
    return stamp / 1000 if isinstance(stamp, (int, float)) and not isinstance(stamp, bool) and stamp > 0 else None


def fio_ended(started_at: float, written: Sequence[float | None], collected: float) -> float:
    """A round's end: when its last fio process wrote its results (the round's I/O is over by then), not when
    ssdpts collected them, which on a loaded host came seconds later, after the next round's I/O had begun.
    The collection time where a process gave no time or one outside the round (then not this host's clock)."""
    if not written or any(w is None or not started_at - 0.001 <= w <= collected for w in written):
        return collected
    return max(w for w in written if w is not None)


def round_intervals(rnd: FioRound) -> Iterator[Interval]:
    """A streaming round's Interval each time fio reports, for every cell that did I/O."""
    labels = [m.label_id for m in rnd.session.members]
    for idx, proc in enumerate(rnd.procs):
        elapsed = 0.0
        name = rnd.cells[idx].name
        for count, piece in enumerate(slices(proc.documents(), len(labels), rnd.interval_s), 1):
            result = piece.results[0] if len(labels) == 1 else aggregate(dict(zip(labels, piece.results)), name)
            result.stimulus = not_available(rnd.session.block_note) if rnd.session.block is None else \
                not_per_interval("the block-layer counters")
            yield Interval(idx, name, count, elapsed, piece.duration_ms, result,
                           piece.jobs[0] if len(labels) == 1 else {"jobs": piece.jobs})
            elapsed += piece.duration_ms


def interval_output(rnd: FioRound, iv: Interval) -> RoundOutput:
    """A stored-round view of one interval of a streaming round."""
    proc = rnd.procs[iv.cell_index]
    now = time.time()
    first = proc.wait_gate is None and iv.cell_index == 0 and iv.index == 1   # the session's first I/O in it
    return RoundOutput(cells=[iv.result], engine="fio", job_text=proc.job_text, command=proc.command,
                       raw_output=json.dumps(iv.raw or {}), started_at=now - iv.duration_ms / 1000,
                       ended_at=now, fio_version=rnd.session.engine.version,
                       first_io_at=first_io(rnd.session.samplers) if first else None)


def merge_cell_jobs(workloads: Sequence[Workload], parsed: list, targets: int) -> list:
    """fio's results (one per job, in job-file order: cell, target, job) with a several-job cell's jobs merged
    into one result per cell and target (each job's own kept in `jobs`, by JobMix name)."""
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


def device_idle(gates: Gates, samplers: Sequence[IdleSampler], gid: int | None) -> DeviceIdle | None:
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


def first_io(samplers: Sequence[IdleSampler]) -> float | None:
    """A session's first I/O at the block layer (the latest among several devices: the longest pause before
    it), where every device was quiet when sampling began."""
    found = [sp.first_io() for sp in samplers]
    return max(found) / 1e9 if found and None not in found else None


def last_io(samplers: Sequence[IdleSampler]) -> float | None:
    """The last I/O before the devices went quiet (the earliest among several: the longest pause after it)."""
    found = [sp.last_io() for sp in samplers]
    return min(found) / 1e9 if found and None not in found else None

