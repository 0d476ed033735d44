"""SNIA Real World Storage Workload (RWSW): a captured application's top IO streams, swept and replayed."""

from __future__ import annotations

from ..spec import TestSpec
from . import render
from .run import RwswSettings, plan, run
from .summary import RwswSummary

TEST = TestSpec(
    name="rwsw", title="Real World Storage Workload (RWSW)",
    kind="pts", order=9, summary=RwswSummary,
    run=run, plan=plan, renderers=render.RENDERERS,
    settings=RwswSettings,
    description="a captured workload's top IO streams as one composite: preconditioning, thread counts × "
                "queue depths, then the capture's steps replayed",
)
