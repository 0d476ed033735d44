"""Engines run rounds of workload cells: local fio, the simulated SSD (and later remote fio)."""

from __future__ import annotations


def engine_for(target):
    """The engine that drives this kind of target."""
    if target.kind == "sim":
        from .sim import SimEngine

        return SimEngine()
    from .fio import FioEngine

    return FioEngine()
