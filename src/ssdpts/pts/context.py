"""What one test in one run shares: its run, target, engine, settings and store, and the jobs done over them.

A test module describes its matrix and tracking variables and calls the context's jobs; it never builds fio
command lines and never talks to the database except through its context. The jobs, one module each:
`ctx.cells` builds workloads from the settings (cells.py), `ctx.purger` purges and flushes the page cache
(purging.py), `ctx.rounds` runs rounds to steady state or in sequence with their checkpoints (rounds.py),
`ctx.streams` runs continuous jobs sliced into rounds (streaming.py); window summaries are functions over
stored rounds (windows.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Callable

from ..records import from_data, to_data
from ..settings import TestSettings
from ..targets import Target
from .cells import CellBuilder

if TYPE_CHECKING:     # annotations only, and the jobs below are imported when first used: a plan runs none
    from ..engines.interface import Engine
    from ..store import Store
    from .purging import Purger
    from .rounds import Rounds
    from .streaming import Streams


@dataclass
class TestContext:
    run_id: str
    test: str
    store: Store
    target: Target
    engine: Engine | None      # None: a plan (nothing runs)
    settings: TestSettings     # the test's own record (a subclass) with its keys
    progress: object
    purge_method: str = "auto"
    scope: str = ""            # prefixes phases and step keys (a retry of failed targets stores beside the first try)
    # (test name, stored summary) -> typed summary or None; given by the runner, which holds the registry
    # (a test package importing the registry would be an import cycle: the registry imports every test)
    decode_summary: Callable[[str, dict], object] | None = None

    # the jobs, each a small class over this context, built when first used (`plan` builds cells only: its
    # TestContext imports neither the round loop nor the store)
    @cached_property
    def cells(self) -> CellBuilder:
        return CellBuilder(self)

    @cached_property
    def purger(self) -> Purger:
        from .purging import Purger
        return Purger(self)

    @cached_property
    def rounds(self) -> Rounds:
        from .rounds import Rounds
        return Rounds(self)

    @cached_property
    def streams(self) -> Streams:
        from .streaming import Streams
        return Streams(self)

    def _ph(self, phase: str) -> str:
        return self.scope + phase

    def stored_summary(self, test: str) -> object | None:
        """Another test's typed summary from this run; None when it did not run, stored none, or is unknown."""
        if self.decode_summary is None:
            return None
        stored = next((t.get("summary") for t in self.store.tests(self.run_id) if t["name"] == test), None)
        return self.decode_summary(test, stored) if stored else None

    def active_range(self) -> float:
        """The active range as a fraction of the capacity (the profile gives a percentage)."""
        return self.settings.active_range / 100.0

    def note(self, text: str) -> None:
        notes = self.store.step(self.run_id, self.test, "notes") or {"notes": []}
        if text not in notes["notes"]:
            notes["notes"].append(text)
            self.store.record_step(self.run_id, self.test, "notes", "notes", notes)


def stored_once(ctx: TestContext, key: str, record: type, measure: Callable[[str], object]):
    """A measurement stored whole as step `key` (a typed `record`): read back when it is there, else run
    `measure(scope)`. `scope` ("KEY/N") names this attempt, so the phases and purges of an attempt that was
    interrupted are never mixed with the next one's: that one starts again from its beginning."""
    done = ctx.store.step(ctx.run_id, ctx.test, key)
    if done is not None:
        return from_data(record, done)
    tried = sum(1 for s in ctx.store.steps(ctx.run_id, ctx.test) if s["kind"] == "attempt" and s["data"]["of"] == key)
    scope = f"{key}/{tried + 1}"
    ctx.store.record_step(ctx.run_id, ctx.test, f"attempt:{scope}", "attempt", {"of": key})
    result = measure(scope)
    ctx.store.record_step(ctx.run_id, ctx.test, key, "measured", to_data(result))
    return result
