"""The engine interface: run rounds of workload cells on a target, back to back.

An engine knows nothing about which test it serves. A session chains submitted rounds so the
device does not idle between them (the next round waits, ready, for the previous one to end).
"""

from __future__ import annotations

from typing import Protocol, Sequence

from ..workload import Workload
from .results import RoundOutput


class PendingRound(Protocol):
    def result(self) -> RoundOutput:
        """Block until the round is done; raise SsdptsError if it failed."""

    def cancel(self) -> None:
        """Stop the round (it may have started if its predecessor already ended)."""


class Session(Protocol):
    def submit(self, cells: Sequence[Workload], tag: str = "") -> PendingRound:
        """Queue a round; it starts the moment the previously submitted round ends."""

    def close(self) -> None:
        """Cancel whatever is still queued and release resources."""

    def __enter__(self) -> "Session": ...

    def __exit__(self, *exc) -> None: ...


class Engine(Protocol):
    name: str
    version: str

    def session(self, target) -> Session: ...
