"""SNIA PTS Latency test: TC1/QD1 random I/O, 0.5/4/8 KiB x 100/0, 65/35, 0/100.

Tracking variable: mean latency of RND 4 KiB writes. Reported per cell: mean, max and the
percentiles (99, 99.9, 99.99, 99.999) of total latency, merged over the measurement window's
histograms (fio json+ bins), in microseconds.
"""

from __future__ import annotations

from ..units import parse_size
from .common import TestContext, Tracker, cell_name, window_summary

NAME = "latency"
TITLE = "Latency – Response Time at TC1/QD1"


def run(ctx: TestContext) -> dict:
    sizes, notes = ctx.skip_sub_sector([parse_size(b) for b in ctx.settings["block_sizes"]])
    for n in notes:
        ctx.note(n)
    mixes = [int(m) for m in ctx.settings["mixes"]]
    cells = [ctx.cell(cell_name("rnd", bs, mix), "randrw", bs, mix) for mix in mixes for bs in sizes]
    names = {c.name for c in cells}
    tracked = [Tracker(cell_name("rnd", parse_size(bs), int(mix)), "lat_mean")
               for bs, mix in ctx.settings.get("tracking", [["4k", 0]])
               if cell_name("rnd", parse_size(bs), int(mix)) in names] or [Tracker(cells[-1].name, "lat_mean")]
    purge = ctx.purge()
    outcome = ctx.run_to_steady_state("", cells, tracked, precondition=ctx.wipc())
    summary = window_summary(outcome.rounds, outcome.window_rounds)
    return {"purge": purge, "steady": outcome.to_dict(), "cells": summary, "notes": notes,
            "units": {"latency": "µs (total latency: submission to completion)"}}
