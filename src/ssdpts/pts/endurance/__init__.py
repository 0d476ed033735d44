"""Endurance: a sustained write workload for hours or days, polling the drive's health as it wears.

`WORKLOADS` (the built-in workloads) is what `ssdpts endurance` uses; `render.text_lines` shows the summary as text.
"""

from __future__ import annotations

from ...capabilities import Capability
from ..spec import TestSpec, deferred
from .settings import WORKLOADS, EnduranceSettings

part = deferred(__name__)     # its summary, settings, run and renderers: each imported when first used

TEST = TestSpec(
    name="endurance", title="Endurance (sustained writes, wear and WAF projection)",
    kind="endurance", order=1, summary=part("summary", "EnduranceSummary"),
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=EnduranceSettings,
    needs=frozenset({Capability.STREAMING, Capability.HEALTH}),
    description="one continuous write job cut into poll intervals, a health snapshot after each; wear/WAF projection",
)

__all__ = ["TEST", "WORKLOADS"]
