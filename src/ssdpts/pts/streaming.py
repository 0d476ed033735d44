"""Streaming: cells run as continuous jobs, every interval's slice stored as a round of its phase."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

from ..engines.results import CellResult
from ..workload import Workload

if TYPE_CHECKING:
    from .context import TestContext

STREAM_ENDED = "ended"               # every job of the stream ran until its own runtime or io_size
STREAM_ROUND_LIMIT = "round limit"   # cut after the test's max_rounds


@dataclass(repr=False)
class Streams:
    """`ctx.streams`: continuous jobs, sliced into stored rounds, and why each stopped."""
    ctx: TestContext

    def stream(self, phases: Sequence[str], cells: Sequence[Workload], interval_s: float,
               tracking: Callable[[str, int, CellResult, dict], dict], max_rounds: int | None = None) -> str:
        """Run `cells` as continuous jobs, back to back, storing every `interval_s` slice as a round of
        its phase (fio: cumulative status documents differenced; never one process per round).

        Returns how it ended: STREAM_ENDED (every job ran until its own runtime or io_size) or
        STREAM_ROUND_LIMIT (cut after `max_rounds` rounds)."""
        ctx = self.ctx
        state: dict[str, dict] = {}
        how = STREAM_ENDED
        cells = ctx.cells.seeded(cells, ",".join(phases), 0)
        with ctx.engine.session(ctx.target) as session:
            r = session.submit(cells, tag=",".join(phases), interval_s=interval_s)
            try:
                for iv in r.intervals():
                    phase = ctx._ph(phases[iv.cell_index])
                    if phase not in state:   # continue a resumed phase's round count (queried once)
                        state[phase] = {"round": len(ctx.store.rounds(ctx.run_id, ctx.test, phase,
                                                                      with_cells=False))}
                    st = state[phase]
                    st["round"] += 1
                    track = tracking(phase, st["round"], iv.result, st)
                    out = r.interval_output(iv)
                    ctx.rounds.save(phase, "round", st["round"], out, [cells[iv.cell_index].to_dict()], track)
                    ctx.progress.round_done(ctx.test, phase, st["round"], {k: v for k, v in track.items()
                                                                           if k in ("iops", "mib_s")}, False, None)
                    if max_rounds is not None and st["round"] >= max_rounds:
                        r.cancel()
                        how = STREAM_ROUND_LIMIT
                        break
                else:
                    r.result()
            except BaseException:
                r.cancel()
                raise
        ctx.rounds.checkpoint_now()
        return how

    def stop_reason(self, phase: str, reason: str | None = None) -> str | None:
        """The stored reason a phase's continuous job stopped (given `reason`: store it first); None if it
        has not stopped. Stored, so that a resumed run neither re-runs a job that ended nor guesses why."""
        ctx = self.ctx
        key = f"stop:{ctx._ph(phase)}"
        if reason is not None:
            ctx.store.record_step(ctx.run_id, ctx.test, key, "stop", {"reason": reason})
        done = ctx.store.step(ctx.run_id, ctx.test, key)
        return None if done is None else done["reason"]
