"""Whose clock a run's durations and rates are on, and what did its I/O: the one place that knows.

A run's engine is stored with it (`engines/interface.py` `Engine.name`: "fio", "fio-remote", "sim"). fio runs
on the wall clock; the simulated drive runs its cells in its own simulated time, so every duration, time and
rate of a `sim` run (seconds written, minutes observed, per day, days to end of life) is simulated time and
says so, and no figure of it names fio. Every output labels through a `Clock` (`RunResult.clock`; the runner
`Clock.of_engine(engine.name)`) instead of spelling "s" or "by fio" itself.
"""

from __future__ import annotations

from dataclasses import dataclass

SIMULATED_ENGINE = "sim"


@dataclass(frozen=True)
class Clock:
    engine: str                          # the engine that ran the I/O, as stored with the run

    @classmethod
    def of_engine(cls, engine: str) -> Clock:
        return cls(engine)

    @property
    def simulated(self) -> bool:
        return self.engine == SIMULATED_ENGINE

    @property
    def name(self) -> str:
        """"simulated" or "wall": the clock as a field of the JSON document and the tidy table."""
        return "simulated" if self.simulated else "wall"

    @property
    def writer(self) -> str:
        """What did the I/O: "fio" on a real target, "the simulated drive's engine" on a simulated one."""
        return "the simulated drive's engine" if self.simulated else "fio"

    def unit(self, word: str) -> str:
        """A time unit on this clock: "minutes" -> "simulated minutes" on a simulated drive."""
        return f"simulated {word}" if self.simulated else word

    @property
    def note(self) -> str:
        """The one line that says which clock the run's figures are on."""
        if self.simulated:
            return ("simulated: every duration, time and rate of this run is the simulated drive's own time, "
                    "not the wall clock; no fio ran")
        return f"wall: durations and rates are wall-clock time ({self.engine})"


WALL = Clock("fio")
SIMULATED = Clock(SIMULATED_ENGINE)
