"""Endurance: a sustained write workload for hours or days, polling the drive's health as it wears.

`WORKLOADS` (the built-in workloads) and `text_lines` (the summary as text) are what `ssdpts endurance` uses.
"""

from __future__ import annotations

from ...capabilities import Capability
from ...settings import BOOL, DURATION, POSITIVE, STR, Setting, size_ok
from ..spec import TestSpec
from . import render
from .render import text_lines
from .run import WORKLOADS, plan, run
from .summary import EnduranceSummary

RW = ("read", "write", "randread", "randwrite", "randrw", "rw")

CUSTOM_WORKLOADS = Setting(
    'a table of NAME = {rw = "randwrite", bs = "4k", read_pct = 0}',
    lambda v: isinstance(v, dict) and all(isinstance(w, dict) and w.get("rw") in RW and size_ok(w.get("bs", "4k"))
                                          and set(w) <= {"rw", "bs", "read_pct"} for w in v.values()))

TEST = TestSpec(
    name="endurance", title="Endurance (sustained writes, wear and WAF projection)",
    kind="endurance", order=1, summary=EnduranceSummary,
    run=run, plan=plan, renderers=render.RENDERERS,
    settings={"duration": DURATION, "poll": DURATION, "workload": STR, "purge_first": BOOL,
              "rated_tbw": Setting("a positive number of TB (10^12 bytes)", POSITIVE.ok),
              "dwpd": Setting("a positive number of drive writes per day", POSITIVE.ok),
              "warranty_years": Setting("a positive number of years", POSITIVE.ok),
              "workloads": CUSTOM_WORKLOADS},
    needs=frozenset({Capability.STREAMING, Capability.HEALTH}),
    description="one continuous write job cut into poll intervals, a health snapshot after each; wear/WAF projection",
)

__all__ = ["TEST", "WORKLOADS", "text_lines"]
