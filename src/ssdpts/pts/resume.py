"""A stop and its resume, told truthfully (docs/conformance.md, 'Resume').

At a stop the runner records where the device's I/O ended (the block layer's last I/O, read by the engine
once its fio processes are killed) and what the stop lost (the round in flight). At the resume, before any
I/O, the device's write and discard counters are read again. The first round stored after the resume
carries the pause (last I/O before the stop -> first I/O after it, both from the block layer) as its
device idle before: `check`'s idle-gap rule and `show` judge it like any other transition.

Any resume idles the device far beyond the 10 ms bound (a process starts, fio starts), so there is no
conformant resume: a steady-state loop re-runs the interrupted round unmeasured (stored as kind "resume")
and measures the next one right behind it, so the measured round follows a normal transition. Whether the
preconditioning (WIPC) must run again is decided from the block layer: unless the device was written or
discarded between the stop and the resume, the data it laid down is intact, and a pause only lets the drive
reclaim space in the background (what HIR measures), which the re-run round's writes use up again.

A simulated drive keeps no wall time: its state is the checkpoint the resume restores, and no simulated time
passes during a stop, so its pause is recorded (wall clock) but not judged and nothing is re-run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..deviations import RESUME_WRITTEN_SOURCE, Deviation
from ..engines.results import DeviceIdle, RoundOutput
from ..records import from_data, to_data
from ..store import Store
from ..store.idle import GAP_LIMIT_MS, RESUME_CAUSE

if TYPE_CHECKING:
    from ..engines.interface import Engine
    from ..targets import Target

BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


@dataclass
class StopRecord:
    """Where a test stopped: stored as step `stop:N` of that test."""

    test: str
    stopped_at: float                      # wall clock when the stop was handled (or the last round stored)
    last_io: float | None                  # the device's last I/O before the stop (wall clock)
    last_io_source: str                    # how `last_io` was found
    lost: str = ""                         # what the stop lost ("round 3: 34m of 56m measured")
    simulated: bool = False
    boot_id: str = ""
    counters: dict[str, list[int]] = field(default_factory=dict)   # stat file -> [sectors written, discarded]
    resumed_at: float | None = None        # set when a resume began, with the counters then
    resumed_boot_id: str = ""
    resumed_counters: dict[str, list[int]] = field(default_factory=dict)


@dataclass
class ResumeRecord:
    """What a resume found and decided: stored as step `resume:N` beside the `stop:N` it answers."""

    stop: StopRecord
    first_io: float | None                 # the first I/O after the resume (wall clock)
    first_io_source: str
    pause_ms: float | None                 # first_io - last_io; None: not known
    stored_with: str                       # the round that carries it as its device idle before ("" none)
    judged: bool                           # judged as an idle gap (False: simulated drive, or a purge followed)
    rerun: str                             # what ran again, unmeasured, before measuring
    wipc: str                              # whether the preconditioning runs again, and why

    def line(self) -> str:
        pause = f"{self.pause_ms / 1000:.1f} s" if self.pause_ms is not None else "not known"
        return (f"resume pause {pause} ({self.first_io_source}; {self.stop.last_io_source})"
                + (f", stored before {self.stored_with}" if self.stored_with else "")
                + ("" if self.judged else ", not judged") + (f"; stop lost {self.stop.lost}" if self.stop.lost else "")
                + f"; {self.rerun}; WIPC {self.wipc}")


def _boot_id() -> str:
    try:
        return BOOT_ID.read_text().strip()
    except OSError:
        return ""


def device_counters(target: Target) -> dict[str, list[int]]:
    """Sectors written and discarded so far, per block device tested (/sys/block/DEV/stat). A file target's
    file system holds other files (the results, perhaps): its counters would not say whether the file changed."""
    from ..engines.blockidle import stat_path_for     # here: `show` reads resume lines without the engines

    out = {}
    for m in target.drives():
        if m.host is not None or m.kind != "block":
            continue
        stat = stat_path_for(m.path)
        if stat is None:
            continue
        try:
            f = stat.read_text().split()
        except OSError:
            continue
        out[str(stat)] = [int(f[6]), int(f[13]) if len(f) > 13 else 0]
    return out


def _stops(store: Store, run_id: str, test: str) -> list[tuple[int, StopRecord]]:
    return [(int(s["key"].split(":", 1)[1]), from_data(StopRecord, s["data"]))
            for s in store.steps(run_id, test) if s["kind"] == "stop"]


def pending(store: Store, run_id: str, test: str) -> tuple[int, StopRecord] | None:
    """The latest stop of `test` that no resume has answered yet."""
    open_ = [(n, s) for n, s in _stops(store, run_id, test) if store.step(run_id, test, f"resume:{n}") is None]
    return max(open_, key=lambda x: x[0]) if open_ else None


def _record(store: Store, run_id: str, stop: StopRecord, n: int | None = None) -> None:
    if n is None:
        n = 1 + max((k for k, _ in _stops(store, run_id, stop.test)), default=0)
    store.record_step(run_id, stop.test, f"stop:{n}", "stop", to_data(stop))


def record_stop(store: Store, run_id: str, engine: Engine, target: Target, lost: str) -> StopRecord | None:
    """At a stop (Ctrl-C, SIGTERM): the running test's last I/O, from the engine's block-layer sampler."""
    running = [t["name"] for t in store.tests(run_id) if t["status"] == "running"]
    if not running:
        return None
    from ..targets.sim import simulated as is_simulated

    last = engine.last_io_at
    simulated = is_simulated(target)
    stop = StopRecord(
        test=running[0], stopped_at=time.time(), last_io=last if last is not None else time.time(),
        last_io_source=("last I/O before the stop at the block layer" if last is not None else
                        "the stop's time (the block layer's last I/O not seen: an upper bound, the pause is at least "
                        "what is shown)"), lost=lost, simulated=simulated, boot_id=_boot_id(),
        counters=device_counters(target))
    _record(store, run_id, stop)
    return stop


def resuming(store: Store, run_id: str, target: Target) -> None:
    """At a resume, before any I/O: the counters now, on the stop record. A run whose process was killed
    (SIGKILL, power loss) or whose results medium refused the stop (read-only) recorded no stop: its last
    stored round's end stands for it, saying why (the run's message)."""
    from ..targets.sim import simulated as is_simulated

    why = store.run(run_id)["message"] or "its process ended without recording one"
    for t in store.tests(run_id):
        if t["status"] == "completed":
            continue
        found = pending(store, run_id, t["name"])
        if found is None:
            rounds = [r for kind in ("precondition", "round", RESUME_CAUSE)
                      for r in store.rounds(run_id, t["name"], kind=kind, with_cells=False)]
            if not rounds:
                continue
            end = max(r.ended for r in rounds)
            found = (None, StopRecord(test=t["name"], stopped_at=end, last_io=end, last_io_source=(
                f"the last stored round's end (no stop was recorded: {why}; the round in flight ran on or was "
                "lost, its last I/O is not known, so the pause is at most what is shown)"),
                lost="the round in flight (not recorded)",
                simulated=is_simulated(target)))
        n, stop = found
        stop.resumed_at, stop.resumed_boot_id, stop.resumed_counters = time.time(), _boot_id(), device_counters(target)
        _record(store, run_id, stop, n)
        return      # only the test that was stopped: those after it have not begun


def rerun_needed(store: Store, run_id: str, test: str, simulated: bool) -> bool:
    """A steady-state loop resumed after a stop re-runs the interrupted round before measuring (a simulated
    drive is restored to its committed state and did not idle: nothing to re-establish)."""
    found = pending(store, run_id, test)
    return found is not None and not simulated and not found[1].simulated


def _wipc_decision(stop: StopRecord) -> tuple[str, Deviation | None]:
    if stop.simulated:
        return "not run again: the simulated drive resumes from its checkpointed state", None
    if not stop.counters or not stop.resumed_counters:
        return ("not run again; whether the device was written between the stop and the resume is not known "
                "(no block-layer counters for this target)"), None
    if stop.boot_id != stop.resumed_boot_id:
        return ("not run again; whether the device was written between the stop and the resume is not known "
                "(the host restarted: the block layer's counters started again)"), None
    moved = {dev: (b[0] - a[0], b[1] - a[1]) for dev, a in stop.counters.items()
             if (b := stop.resumed_counters.get(dev)) is not None and b != a}
    if not moved:
        return ("not run again: the device completed no writes or discards between the stop and the resume "
                "(block layer), so the preconditioned data is intact; the pause only let the drive reclaim space, "
                "which the re-run round's writes use up again"), None
    what = "; ".join(f"{dev}: {w * 512:,} bytes written, {d * 512:,} discarded" for dev, (w, d) in moved.items())
    return (f"NEEDED but not run: the device was written between the stop and the resume ({what}); the results "
            "after the resume are not from the drive state before it, start the test again in a new run",
            Deviation("resume-written", f"{stop.test}: the device was written between the stop and the resume "
                      f"({what}): the preconditioned state the stored rounds measured is gone", RESUME_WRITTEN_SOURCE))


def attach_pause(store: Store, run_id: str, test: str, phase: str, kind: str, round_no: int,
                 out: RoundOutput, rerun: str) -> ResumeRecord | None:
    """The first round stored after a resume: give it the pause as its device idle before (unless it is a
    preconditioning that starts over, or the drive is simulated) and store the resume's record."""
    found = pending(store, run_id, test)
    if found is None:
        return None
    n, stop = found
    if out.first_io_at is not None:
        first, source = out.first_io_at, "first I/O after the resume at the block layer"
    else:
        first, source = out.started_at, "the first round's start (the block layer's first I/O not seen)"
    pause = round((first - stop.last_io) * 1000, 3) if stop.last_io is not None and first else None
    name = {"precondition": "preconditioning", RESUME_CAUSE: "re-run round"}.get(kind, "round")
    where = f"{phase + ' ' if phase else ''}{name} {round_no}"
    judged = not stop.simulated and kind != "precondition" and pause is not None
    if judged:
        out.device_idle_before = DeviceIdle(pause, stop.last_io, first, cause=RESUME_CAUSE)
    wipc, deviation = _wipc_decision(stop)
    if kind == "precondition":
        rerun, wipc = "the preconditioning runs again whole after the pause", "runs again (it had not finished)"
    record = ResumeRecord(stop, first, source, pause, where if judged else "", judged, rerun, wipc)
    store.record_step(run_id, test, f"resume:{n}", "resume", to_data(record))
    if deviation is not None:
        store.record_deviation(run_id, test, deviation)
    return record


def purged(store: Store, run_id: str, test: str) -> None:
    """A purge after the resume: the drive starts over, the pause before it measures nothing."""
    found = pending(store, run_id, test)
    if found is None:
        return
    n, stop = found
    store.record_step(run_id, test, f"resume:{n}", "resume", to_data(ResumeRecord(
        stop, None, "not measured", None, "", False, "a purge followed the resume: the drive started over",
        "runs again after the purge")))


def resume_lines(steps) -> list[str]:
    """A test's resumes, one line each, from its stored steps (StepInfo objects or the store's dicts)."""
    out = []
    for s in steps:
        kind, data = (s["kind"], s["data"]) if isinstance(s, dict) else (s.kind, s.data)
        if kind == "resume":
            out.append(from_data(ResumeRecord, data).line())
    return out


@dataclass(frozen=True)
class WorkDone:
    """What a test stored before a resume, in the plan's terms: time-bound seconds and size-bound bytes."""

    seconds: float
    size_bound_bytes: int


def work_done(store: Store, run_id: str, test: str) -> WorkDone:
    """The cells of the rounds a test has stored (a re-run round is not in the plan, so not counted)."""
    seconds, written = 0.0, 0
    for kind in ("precondition", "round"):
        for r in store.rounds(run_id, test, kind=kind, with_cells=False):
            for w in store.round_workloads(r.id):
                if w.get("io_size") and w.get("runtime_s") is None:     # size bound: the plan's bytes
                    written += int(w["io_size"]) * int(w.get("threads") or 1)
                else:
                    seconds += float(w.get("runtime_s") or 0) + float(w.get("ramp_s") or 0) + float(
                        w.get("idle_before_s") or 0)
    return WorkDone(seconds, written)


__all__ = ["GAP_LIMIT_MS", "RESUME_CAUSE", "ResumeRecord", "StopRecord", "WorkDone", "attach_pause", "pending", "purged",
           "record_stop", "rerun_needed", "resume_lines", "resuming", "work_done"]
