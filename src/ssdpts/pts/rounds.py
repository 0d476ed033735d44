"""The round loop: rounds until steady state, or cells run in sequence, each round stored and committed with
the drive's checkpoint."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Sequence

from ..deviations import STALL_SOURCE, Deviation
from ..engines.results import CellResult, IoProgress
from ..results import SteadyResult, TrackerKey, TrackerResult
from ..steady import SteadyState, evaluate
from ..store import RoundRecord
from ..targets.sim import simulated
from ..workload import Workload
from . import resume

if TYPE_CHECKING:
    from .context import TestContext


def tracked_series(trackers: Sequence[TrackerKey],
                   rounds_cells: Sequence[dict[str, CellResult]]) -> dict[TrackerKey, list[float]]:
    """Tracking values per round: for the (aggregate) cell, and per target when several run at once."""
    series: dict[TrackerKey, list[float]] = {t: [] for t in trackers}
    for cells in rounds_cells:
        for t in trackers:
            cell = cells[t.cell]
            series[t].append(cell.metric(t.metric))
            for part, pc in cell.parts.items():
                series.setdefault(t.of(part), []).append(pc.metric(t.metric))
    return series


@dataclass
class SteadyOutcome:
    phase: str
    rounds: list[RoundRecord]
    states: dict[TrackerKey, SteadyState]
    reached: bool
    window_rounds: list[int] = field(default_factory=list)

    def record(self) -> SteadyResult:
        return SteadyResult(self.phase, self.reached, len(self.rounds), list(self.window_rounds),
                            [TrackerResult(k, v) for k, v in self.states.items()])


@dataclass(repr=False)
class Rounds:
    """`ctx.rounds`: the test's rounds, stored as they end (resumable at round granularity)."""
    ctx: TestContext

    def committed(self, write: Callable[[dict | None], object], force: bool = False):
        """Commit data together with the target's checkpoint, if it has state of its own (the simulated SSD)
        and one is due (`force`: always): the state file is written first, named in the same transaction as
        the data, older ones removed after. Rounds committed after the last checkpoint are rolled back on
        resume (Store.rollback_to_checkpoint), so the database never describes another drive state."""
        cp = self.ctx.target.prepare_checkpoint(force=force)
        out = write(cp)
        if cp is not None:
            self.ctx.target.checkpoint_committed(cp)
        return out

    def save(self, phase: str, kind: str, round_no: int, out, workloads: list[dict],
             tracking: dict | None = None, steady: dict | None = None, force: bool = False,
             rerun: str = "nothing re-run before measuring") -> None:
        """Store one round (its pause and stalls noted), committed with the drive's checkpoint when one is due."""
        ctx = self.ctx
        record = resume.attach_pause(ctx.store, ctx.run_id, ctx.test, phase, kind, round_no, out, rerun)
        if record is not None:
            ctx.progress.message(f"{ctx.test}: {record.line()}")
        for stall in out.stalls:
            ctx.progress.message(f"{ctx.test}: {phase} {kind} {round_no}: {stall.why}; killed and run again "
                                 f"(evidence: {stall.evidence_file})")
            ctx.store.record_deviation(ctx.run_id, ctx.test, Deviation(
                "fio-stall", f"{phase} {kind} {round_no}: {stall.why}; the round was run again (evidence and "
                f"job file: {stall.evidence_file})", STALL_SOURCE))
        self.committed(lambda cp: ctx.store.save_round(ctx.run_id, ctx.test, phase, kind, round_no, out,
                                                       workloads, tracking, steady, checkpoint=cp), force)

    def checkpoint_now(self) -> None:
        """At the end of a phase: the drive's state as of its last committed round (nothing else is written)."""
        self.committed(lambda cp: cp is not None and self.ctx.store.record_checkpoint(self.ctx.run_id, cp),
                       force=True)

    def run_to_steady_state(self, phase: str, cells: Sequence[Workload], trackers: Sequence[TrackerKey],
                            precondition: Workload | None = None) -> SteadyOutcome:
        """Precondition (once), then rounds of `cells` until every tracker is steady or max rounds.

        Resumable: stored rounds are reused; the next round is queued before the current one ends,
        so the device does not idle between preconditioning and rounds or between rounds.
        """
        ctx = self.ctx
        kw = ctx.settings.steady.evaluate_kw()
        max_rounds = ctx.settings.steady.max_rounds
        done = ctx.store.rounds(ctx.run_id, ctx.test, ctx._ph(phase))
        history = [{c.name: c for c in r.cells} for r in done]
        series = tracked_series(trackers, history)
        states = {k: evaluate(v, **kw) for k, v in series.items() if len(v) == len(history)}
        if done and (all(s.reached for s in states.values()) or len(done) >= max_rounds):
            return self._outcome(phase, trackers, kw)
        need_pc = precondition is not None and not done and not ctx.store.rounds(
            ctx.run_id, ctx.test, ctx._ph(phase), kind="precondition", with_cells=False)
        round_no = len(done) + 1
        # after a stop the drive idled far beyond the bound: the interrupted round runs again, unmeasured, and
        # the next measured round follows it with no pause (pts/resume.py)
        rerun = not need_pc and resume.rerun_needed(ctx.store, ctx.run_id, ctx.test,
                                                    simulated(ctx.target))
        round_seconds = sum(c.runtime_s or 0 for c in cells)
        if precondition is not None:
            precondition = ctx.cells.seeded([precondition], phase, 0)[0]
        with ctx.engine.session(ctx.target) as session:
            pc = session.submit([precondition], tag=f"{phase} precondition",
                                on_progress=lambda p: ctx.progress.io_progress(ctx.test, phase, p)) if need_pc else None
            again = ctx.cells.seeded(cells, f"{phase}/resume", round_no) if rerun else []
            warm = session.submit(again, tag=f"{phase} round {round_no} re-run") if rerun else None
            round_cells = ctx.cells.seeded(cells, phase, round_no)
            pending = session.submit(round_cells, tag=f"{phase} round {round_no}")
            if pc is not None:
                ctx.progress.round_started(ctx.test, phase, 0, max_rounds, None, "preconditioning")
                out = pc.result()
                self.save(ctx._ph(phase), "precondition", 0, out, [precondition.to_dict()])
                ctx.progress.precondition_done(ctx.test, phase, IoProgress.of(out.cells))
            if warm is not None:
                ctx.progress.round_started(ctx.test, phase, round_no, max_rounds, round_seconds,
                                           f"round {round_no} re-run unmeasured after the resume's pause",
                                           cells=[(c.name, c.runtime_s or 0) for c in cells])
                out = warm.result()
                self.save(ctx._ph(phase), resume.RESUME_CAUSE, round_no, out, [c.to_dict() for c in again],
                          rerun=f"round {round_no} re-run unmeasured (stored as re-run round {round_no}), "
                          "the measured round right behind it")
            while pending is not None:
                ctx.progress.round_started(ctx.test, phase, round_no, max_rounds, round_seconds, "",
                                           cells=[(c.name, c.runtime_s or 0) for c in cells], window=kw["window"])
                next_cells = ctx.cells.seeded(cells, phase, round_no + 1)
                nxt = session.submit(next_cells, tag=f"{phase} round {round_no + 1}") if round_no < max_rounds else None
                try:
                    out = pending.result()
                except BaseException:
                    if nxt is not None:
                        nxt.cancel()
                    raise
                history.append({c.name: c for c in out.cells})
                series = tracked_series(trackers, history)
                states = {k: evaluate(v, **kw) for k, v in series.items() if len(v) == len(history)}
                tracking = {k.label: v[-1] for k, v in series.items() if len(v) == len(history)}
                reached = all(s.reached for s in states.values())
                self.save(ctx._ph(phase), "round", round_no, out, [c.to_dict() for c in round_cells],
                          tracking, {k.label: s.to_dict() for k, s in states.items()},
                          force=reached or nxt is None)
                ctx.progress.round_done(ctx.test, phase, round_no, tracking, reached, out)
                if reached or nxt is None:
                    if nxt is not None:
                        nxt.cancel()
                    break
                pending, round_no, round_cells = nxt, round_no + 1, next_cells
        return self._outcome(phase, trackers, kw)

    def run_sequence(self, phase: str, cells: Sequence[Workload], chunk: int = 32,
                     tracking: Callable[[list[CellResult]], dict] | None = None) -> list[RoundRecord]:
        """Run `cells` back to back (honouring each cell's idle_before_s), stored as rounds of `chunk` cells."""
        return self.run_segments([(phase, cells)], chunk, tracking)[phase]

    def run_segments(self, segments: Sequence[tuple[str, Sequence[Workload]]], chunk: int = 32,
                     tracking: Callable[[list[CellResult]], dict] | None = None) -> dict[str, list[RoundRecord]]:
        """Run several phases' cells as one chained sequence (no idle between phases but what the cells
        ask for), each phase stored as rounds of `chunk` cells. Resumable at round granularity."""
        ctx = self.ctx
        todo = []
        for phase, cells in segments:
            chunks = [list(cells[i:i + chunk]) for i in range(0, len(cells), chunk)]
            done = len(ctx.store.rounds(ctx.run_id, ctx.test, ctx._ph(phase), with_cells=False))
            todo += [(ctx._ph(phase), i, ctx.cells.seeded(c, phase, i), len(chunks))
                     for i, c in enumerate(chunks, start=1) if i > done]
        if todo:
            with ctx.engine.session(ctx.target) as session:
                pending = [session.submit(c, tag=f"{phase} part {i}") for phase, i, c, _ in todo]
                for k, ((phase, i, c, n), r) in enumerate(zip(todo, pending)):
                    spans = [(w.name, (w.runtime_s or 0) + w.ramp_s + w.idle_before_s) for w in c]
                    ctx.progress.round_started(ctx.test, phase, i, n, sum(t for _, t in spans), f"part {i}/{n}",
                                               cells=spans)
                    out = r.result()
                    track = tracking(out.cells) if tracking else {}
                    self.save(phase, "round", i, out, [w.to_dict() for w in c], track, force=k == len(todo) - 1)
                    ctx.progress.round_done(ctx.test, phase, i, track, False, out)
        return {phase: ctx.store.rounds(ctx.run_id, ctx.test, ctx._ph(phase)) for phase, _ in segments}

    def _outcome(self, phase: str, trackers: Sequence[TrackerKey], kw: dict) -> SteadyOutcome:
        ctx = self.ctx
        rounds = ctx.store.rounds(ctx.run_id, ctx.test, ctx._ph(phase))
        series = tracked_series(trackers, [{c.name: c for c in r.cells} for r in rounds])
        nums = [r.round for r in rounds]
        # a target that dropped out (remote host) has fewer values: judged over the rounds it has
        states = {k: evaluate(v, rounds=nums if len(v) == len(nums) else nums[:len(v)], **kw)
                  for k, v in series.items()}
        live = {k: s for k, s in states.items() if len(series[k]) == len(nums)}
        reached = bool(live) and all(s.reached for s in live.values())
        window = nums[-kw["window"]:]
        return SteadyOutcome(phase, rounds, states, reached, window)
