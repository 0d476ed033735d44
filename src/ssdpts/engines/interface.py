"""The one interface every engine offers (local fio, remote fio, the simulated SSD), as fio's `ioengine_ops`.

An engine opens a session on a target; a session queues rounds of workload cells, each run right after the
one submitted before it; a round gives its result (or, streaming, its intervals as they come). What an
engine can do beyond that is declared, not discovered: its `capabilities` (capabilities.py, the same flags
targets offer and tests need), and the runner refuses a test that needs one the engine lacks. Tests
(pts/) and the runner use nothing else of an engine: tests/test_engine_interface.py checks that each
engine matches these Protocols, parameter names included, and that pts/ and the runner stay inside them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Protocol, Sequence, runtime_checkable

if TYPE_CHECKING:
    from ..capabilities import Capability
    from ..targets import Target
    from ..targets.purge import PurgeRecord
    from ..workload import Workload
    from ..workload.ioengine import IoChoice
    from .results import Interval, IoProgress, RoundOutput


@runtime_checkable
class Round(Protocol):
    """Cells submitted together: queued behind every round submitted before them in the session."""

    def result(self) -> RoundOutput:
        """Wait for the round (and those before it) and return its cells' results; raises on failure."""
        ...

    def cancel(self) -> None:
        """Stop the round or keep it from starting; its result is then not asked for."""
        ...

    def intervals(self) -> Iterator[Interval]:
        """Streaming rounds (submitted with interval_s, engines offering STREAMING): each interval as it ends."""
        ...

    def interval_output(self, iv: Interval) -> RoundOutput:
        """One interval of a streaming round, shaped as a stored round."""
        ...


@runtime_checkable
class Session(Protocol):
    """An engine at work on one target: rounds run back to back, in submission order, until it closes."""

    def submit(self, cells: Sequence[Workload], tag: str = "", interval_s: float | None = None,
               on_progress: Callable[[IoProgress], None] | None = None) -> Round:
        """Queue `cells` behind everything submitted before (interval_s: stream; on_progress: status reports)."""
        ...

    def close(self) -> None:
        """Cancel what is still queued and release the session's processes and files."""
        ...

    def __enter__(self) -> Session:
        """The session itself (it closes at the end of the `with`)."""
        ...

    def __exit__(self, *exc) -> None:
        """Close; after an exception (a stop) the engine first records the device's last I/O where it can."""
        ...


@runtime_checkable
class Engine(Protocol):
    """What runs the I/O of a run's rounds on its target."""

    name: str                           # stored with the run: "fio", "fio-remote", "sim"
    version: str                        # fio's version (or the simulator's), stored with every round
    binary: str | None                  # the fio executable (None: no fio, the simulator runs in-process)
    capabilities: frozenset[Capability]   # what the engine offers; a test's `needs` must be among them
    keep_dir: Path | None               # where a failed process's files are kept (set by the runner)
    failed: dict[str, str]              # target label -> why it dropped out (remote hosts); the run goes on
    last_io_at: float | None            # the device's last I/O when a session ended by a stop (None: not seen)
    trace_stimulus: bool                # record each cell's LBA coverage (set only where check_traceable allows)
    io: IoChoice | None                 # fio's I/O engine, chosen once (engines.engine_for), recorded with the run and
                                        # rendered by every session (None: a session chooses it once from its defaults)

    def session(self, target: Target) -> Session:
        """Open a session on `target` (a context manager)."""
        ...

    def purge(self, drive: Target, method: str) -> PurgeRecord | None:
        """A purge the engine itself does on `drive` (a remote host's fio trim job); None: the drive's own purge
        (targets/purge.py) applies. Called by the test's purge step, which owns both."""
        ...
