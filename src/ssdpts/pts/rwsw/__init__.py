"""SNIA Real World Storage Workload (RWSW): a captured application's top IO streams, swept and replayed."""

from __future__ import annotations

from ..spec import TestSpec, deferred
from .summary import RwswSummary

part = deferred(__name__)     # how it runs and draws: imported when used, not to read a stored run

TEST = TestSpec(
    name="rwsw", title="Real World Storage Workload (RWSW)",
    kind="pts", order=9, summary=RwswSummary,
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=part("settings", "RwswSettings"),
    description="a captured workload's top IO streams as one composite: preconditioning, thread counts × "
                "queue depths, then the capture's steps replayed",
)
