"""The fio I/O engine a run asks for (profile [defaults] `ioengine` and io_uring's options) and the one it got.

The request is declared in settings.py (RunDefaults); engines/ioengine.py checks it against the fio in use,
the kernel and the target and makes the choice (`IoChoice`), which is rendered into every job file and
recorded with the run (options["io_engine"]). docs/bench.md "The I/O engine".
"""

from __future__ import annotations

from dataclasses import dataclass, field

AUTO = "auto"
NOT_APPLICABLE = "not applicable"      # the simulated drive: no fio job at all
ENGINES = (AUTO, "libaio", "io_uring", "io_uring_cmd")
# io_uring's (and io_uring_cmd's) options a profile may switch on, each a boolean fio option of that name
URING_OPTIONS = ("fixedbufs", "registerfiles", "hipri", "sqthread_poll")


@dataclass(frozen=True)
class IoRequest:
    """What the profile asks: an engine (or auto) and the io_uring options to switch on."""

    ioengine: str = AUTO
    options: tuple[str, ...] = ()      # of URING_OPTIONS, those set to true

    def describe(self) -> str:
        return self.ioengine + "".join(f" {o}" for o in self.options)


@dataclass(frozen=True)
class IoChoice:
    """The engine fio runs with, how its jobs run (threads or processes), and why it is this one."""

    requested: str                     # as the profile asked (IoRequest.describe)
    ioengine: str                      # what the job files say, or NOT_APPLICABLE
    reason: str
    threads: bool = True               # False: fio forks a process per job (thread=0)
    options: tuple[str, ...] = ()      # io_uring options switched on in the job files
    fio_options: dict[str, str] = field(default_factory=dict, compare=False)   # e.g. cmd_type=nvme

    def job_options(self) -> dict[str, str]:
        """The job file's global options that come from this choice (beside ioengine and thread)."""
        return {**{o: "1" for o in self.options}, **self.fio_options}

    def text(self) -> str:
        """One line for reports: the engine and its options, and why."""
        opts = "".join(f", {o}" for o in self.options)
        return f"{self.ioengine}{opts} (ioengine = {self.requested}: {self.reason})"


def recorded_text(choice: IoChoice | None) -> str:
    """The recorded choice for reports; older runs: their job files say (libaio, or io_uring on a loop device)."""
    return choice.text() if choice else "not recorded (the round's job file says)"
