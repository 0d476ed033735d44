"""SNIA PTS Throughput test: large-block sequential read and write.

For each block size (PTS-E: 128 KiB and 1024 KiB; PTS-C: 1024 KiB): its own purge and WIPC with
SEQ writes at that block size, then rounds of [SEQ read, SEQ write] until both bandwidths are steady.
"""

from __future__ import annotations

from ..units import bs_label, parse_size
from .common import TestContext, Tracker, cell_name, window_summary

NAME = "throughput"
TITLE = "Throughput – Sequential Read and Write"


def run(ctx: TestContext) -> dict:
    results: dict[str, dict] = {}
    for bs in (parse_size(b) for b in ctx.settings["block_sizes"]):
        phase = f"bs={bs_label(bs)}"
        read = ctx.cell(cell_name("seq", bs, 100), "read", bs, 100)
        write = ctx.cell(cell_name("seq", bs, 0), "write", bs, 0)
        purge = ctx.purge(phase)
        outcome = ctx.run_to_steady_state(phase, [read, write],
                                          [Tracker(read.name, "read_bw"), Tracker(write.name, "write_bw")],
                                          precondition=ctx.wipc(bs))
        summary = window_summary(outcome.rounds, outcome.window_rounds)
        results[bs_label(bs)] = {
            "purge": purge, "steady": outcome.to_dict(),
            "read_mib_s": summary[read.name]["read_mib_s"], "write_mib_s": summary[write.name]["write_mib_s"],
            "read_mb_s": summary[read.name]["read_mib_s"] * 1.048576,
            "write_mb_s": summary[write.name]["write_mib_s"] * 1.048576,
            "cells": summary,
        }
    return {"block_sizes": results, "units": {"mib_s": "MiB/s (2^20 bytes/s)", "mb_s": "MB/s (10^6 bytes/s)"}}
