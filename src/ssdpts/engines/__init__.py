"""Engines run rounds of workload cells: local fio, the simulated SSD (and later remote fio)."""

from __future__ import annotations


def engine_for(target):
    """The engine that drives this kind of target."""
    if target.kind == "sim":
        from .sim import SimEngine

        return SimEngine()
    members = getattr(target, "members", None) or [target]
    if any(m.host for m in members):
        if not all(m.host for m in members):
            from ..errors import SsdptsError

            raise SsdptsError("mix of local and remote targets: run local targets through a local "
                              "'fio --server' too, or test them separately")
        from .remote import RemoteFioEngine

        engine = RemoteFioEngine()
        engine.preflight(members)
        return engine
    from .fio import FioEngine

    return FioEngine()
