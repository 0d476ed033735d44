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
        # each direction is one sequential stream continuing across rounds (not restarting at the range start)
        read = ctx.cell(cell_name("seq", bs, 100), "read", bs, 100, stream=f"{phase} read")
        write = ctx.cell(cell_name("seq", bs, 0), "write", bs, 0, stream=f"{phase} write")
        purge = ctx.purge(phase)
        # the profile's spec names the tracking variable(s): PTS-E 1.1 SEQ write, PTS 2.0 read and write
        directions = ctx.settings.get("tracking", ["read", "write"])
        trackers = [Tracker(c.name, f"{d}_bw") for d, c in (("read", read), ("write", write)) if d in directions]
        outcome = ctx.run_to_steady_state(phase, [read, write], trackers, precondition=ctx.wipc(bs))
        summary = window_summary(outcome.rounds, outcome.window_rounds)
        results[bs_label(bs)] = {
            "purge": purge, "steady": outcome.to_dict(),
            "read_mib_s": summary[read.name]["read_mib_s"], "write_mib_s": summary[write.name]["write_mib_s"],
            "read_mb_s": summary[read.name]["read_mib_s"] * 1.048576,
            "write_mb_s": summary[write.name]["write_mib_s"] * 1.048576,
            "cells": summary,
        }
    return {"block_sizes": results, "units": {"mib_s": "MiB/s (2^20 bytes/s)", "mb_s": "MB/s (10^6 bytes/s)"}}


# --- report renderers (called by ssdpts.report; matplotlib is imported only when a report is built) ---

def report_section(ctx) -> str:
    """Per block size: steady state of read and write bandwidth; then the table (MiB/s and MB/s) and bars."""
    from markupsafe import Markup

    from ..report import plots
    from ..report.toolkit import Cell

    s = ctx.summary.get("block_sizes", {})
    html = []
    rows = []
    for bs, r in s.items():
        html.append(Markup(f"<h3>Steady state, SEQ {bs}</h3>"))
        html.append(ctx.steady_block(f"bs={bs}", r.get("steady")))
        st = r.get("steady") or {}
        rows.append([bs, r["read_mib_s"], r["write_mib_s"], r["read_mb_s"], r["write_mb_s"],
                     Cell(bool(st.get("reached")), "reached" if st.get("reached") else "NOT reached",
                          "ok" if st.get("reached") else "bad")])
    if not rows:
        return Markup("").join(html)
    html.append(Markup("<h3>Throughput (measurement-window average)</h3>"))
    html.append(ctx.table("table", ["Block size", "Read MiB/s", "Write MiB/s", "Read MB/s", "Write MB/s",
                                    "Steady state"], rows,
                          caption="Sequential throughput; MiB/s = 2^20 B/s, MB/s = 10^6 B/s"))
    fig = ctx.figure((8.0, 4.0))
    plots.bar_plot(fig, [f"SEQ {bs}" for bs in s], {"read": [r["read_mib_s"] for r in s.values()],
                                                    "write": [r["write_mib_s"] for r in s.values()]},
                   "block size", "MiB/s")
    html.append(ctx.plot(fig, "bars", "sequential read and write throughput per block size"))
    from ..report.parts import throughput_parts

    html.append(throughput_parts(ctx, s))   # several drives at once: MiB/s of each drive (else nothing)
    return Markup("").join(html)


def compare_section(ctx) -> str:
    """Bars per block size and direction, one series per run; table side by side with % deltas."""
    from markupsafe import Markup

    from ..report import plots

    maps = [v.summary.get("block_sizes", {}) for v in ctx.views]
    sizes = [b for b in maps[0] if all(b in m for m in maps[1:])]
    if not sizes:
        return Markup('<p class="warn">The runs share no throughput block size.</p>')
    groups = [f"{bs} {d}" for bs in sizes for d in ("read", "write")]
    series = {v.label: [m[bs][f"{d}_mib_s"] for bs in sizes for d in ("read", "write")]
              for v, m in zip(ctx.views, maps)}
    fig = ctx.figure((8.0, 4.0))
    plots.bar_plot(fig, groups, series, "block size, direction", "MiB/s")
    html = [ctx.plot(fig, "bars", "sequential throughput, one series per run")]
    keys = [(bs, d) for bs in sizes for d in ("read", "write")]
    vals = [[m[bs][f"{d}_mib_s"] for m in maps] for bs, d in keys]
    html.append(ctx.side_by_side("table", keys, vals, ["Block size", "Direction"], "MiB/s",
                                 caption="Sequential throughput in MiB/s; Δ relative to the first run"))
    return Markup("").join(html)
