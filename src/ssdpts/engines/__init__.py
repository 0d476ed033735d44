"""Engines run rounds of workload cells: local fio, remote fio (client/server), the simulated SSD.

An engine knows nothing about which test it serves; it declares what it can do (`capabilities`).
Every engine offers the same interface (interface.py: Engine, Session, Round), e.g. `keep_dir`: where it keeps
the files of a failed process (the runner sets it beside the run's log; None: the engine's own scratch
directory's parent), and `purge`: a purge through the engine (the remote one's fio trim job).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import SsdptsError

if TYPE_CHECKING:
    from ..targets import Target
    from ..workload.ioengine import IoChoice
    from .interface import Engine

from ..workload.ioengine import IoRequest


def engine_for(target: Target, io_request: IoRequest = IoRequest(), recorded: IoChoice | None = None) -> Engine:
    """The engine that drives this target, with fio's I/O engine chosen once, here (`engine.io`): the run records
    it and every session renders it. `recorded`: a run's stored choice, used as it is (the drives a failure left
    go on as the run began); otherwise the profile's request checked on this bench (`io_choice`).
    The engines are imported here, not with the package: the store reads result records from engines.* modules,
    and reading a run needs no engine (bench/startup.py)."""
    from ..targets.sim import simulated
    from .fio import FioEngine
    from .remote import RemoteFioEngine
    from .sim import SimEngine

    engine: Engine
    drives = target.drives()
    if simulated(target):
        engine = SimEngine()
    elif any(m.host for m in drives):
        if not all(m.host for m in drives):
            raise SsdptsError("mix of local and remote targets: run local targets through a local "
                              "'fio --server' too, or test them separately")
        engine = RemoteFioEngine(io_request=io_request)
        engine.preflight(drives)
    else:
        engine = FioEngine(io_request=io_request)
    engine.io = recorded or io_choice(engine, target, io_request)
    return engine


def io_choice(engine: Engine, target: Target, io_request: IoRequest) -> IoChoice:
    """fio's I/O engine for this run; SsdptsError (one line) where the bench cannot use the requested one.
    An engine that runs no fio job files (the simulated drive: its own engine does the I/O) ignores the request."""
    from ..capabilities import Capability
    from ..workload.ioengine import NOT_APPLICABLE, IoChoice
    from .ioengine import choose

    if Capability.FIO_JOBS not in engine.capabilities:
        return IoChoice(io_request.describe(), NOT_APPLICABLE,
                        f"the {engine.name} engine runs no fio job: its own engine does the I/O")
    return choose(io_request, target.drives(), engine.binary, engine.version)
