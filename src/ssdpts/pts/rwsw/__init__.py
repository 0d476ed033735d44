"""SNIA Real World Storage Workload (RWSW): a captured application's top IO streams, swept and replayed."""

from __future__ import annotations

from ..spec import TestSpec, deferred

part = deferred(__name__)     # its summary, settings, run and renderers: each imported when first used

TEST = TestSpec(
    name="rwsw", title="Real World Storage Workload (RWSW)",
    kind="pts", order=9, summary=part("summary", "RwswSummary"),
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=part("settings", "RwswSettings"),
    description="a captured workload's top IO streams as one composite: preconditioning, thread counts × "
                "queue depths, then the capture's steps replayed",
)
