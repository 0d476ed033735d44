"""SNIA PTS Demand Intensity / Response Time Histogram (DIRTH): latency vs IOPS over a TC x QD sweep."""

from __future__ import annotations

from ..spec import TestSpec, deferred
from .summary import DirthSummary

part = deferred(__name__)     # how it runs and draws: imported when used, not to read a stored run

TEST = TestSpec(
    name="dirth", title="Demand Intensity / Response Time Histogram (DIRTH)",
    kind="pts", order=7, summary=DirthSummary,
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=part("settings", "DirthSettings"),
    description="one block size and R/W mix over thread counts × queue depths; latency vs IOPS, operating points",
)
