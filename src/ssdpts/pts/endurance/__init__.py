"""Endurance: a sustained write workload for hours or days, polling the drive's health as it wears.

`WORKLOADS` (the built-in workloads) and `text_lines` (the summary as text) are what `ssdpts endurance` uses.
"""

from __future__ import annotations

from ...capabilities import Capability
from ..spec import TestSpec
from . import render
from .render import text_lines
from .run import WORKLOADS, EnduranceSettings, plan, run
from .summary import EnduranceSummary

TEST = TestSpec(
    name="endurance", title="Endurance (sustained writes, wear and WAF projection)",
    kind="endurance", order=1, summary=EnduranceSummary,
    run=run, plan=plan, renderers=render.RENDERERS,
    settings=EnduranceSettings,
    needs=frozenset({Capability.STREAMING, Capability.HEALTH}),
    description="one continuous write job cut into poll intervals, a health snapshot after each; wear/WAF projection",
)

__all__ = ["TEST", "WORKLOADS", "text_lines"]
