"""Block-size sweep (reviewers' study, seed 001): MB/s of SEQ/RND read and write from 0.5 KiB to 1 MiB.

Two drive states, each a sequence of cells (QD 4 by default, every I/O aligned to its block size):
* fresh: purge, then (by default) one sequential pass over the active range, as the seed's one pass
  of zeros, so that reads return mapped data rather than the controller's zeros for unmapped LBAs;
* used: random-write preconditioning (64 KiB to 1.5x the active range by default) on top of it.
Block sizes below the logical block are skipped with a note.
"""

from __future__ import annotations

from ..units import bs_label, parse_size
from ..workload import Workload
from .common import TestContext

NAME = "bs-sweep"
TITLE = "Block-Size Sweep (fresh and used)"

DEFAULT_SIZES = ["512", "1k", "2k", "4k", "8k", "16k", "32k", "64k", "128k", "256k", "512k", "1m"]
WORKLOADS = ("read", "randread", "write", "randwrite")
LABELS = {"read": "SEQ read", "randread": "RND read", "write": "SEQ write", "randwrite": "RND write"}


def cell_key(state: str, rw: str, bs: int) -> str:
    return f"{state}_{rw}_{bs_label(bs)}"


def _fill(ctx: TestContext, name: str, rw: str, bs: int, multiple: float) -> Workload:
    ar = ctx.active_range()
    return Workload(name=name, rw=rw, bs=bs, threads=1, iodepth=32, range_size=ar,
                    io_size=max(bs, int(multiple * ar * ctx.target.size_bytes) // bs * bs),
                    data_pattern=ctx.settings.get("data_pattern", "random"))


def run(ctx: TestContext) -> dict:
    sizes, notes = ctx.skip_sub_sector([parse_size(b) for b in ctx.settings.get("block_sizes", DEFAULT_SIZES)])
    for n in notes:
        ctx.note(n)
    workloads = [w for w in ctx.settings.get("workloads", list(WORKLOADS))]
    states = ctx.settings.get("states", ["fresh", "used"])
    iodepth = int(ctx.settings.get("iodepth", 4))
    threads = int(ctx.settings.get("threads", 1))
    purge = ctx.purge()
    if ctx.settings.get("fresh_fill", True):
        ctx.run_sequence("fresh/fill", [_fill(ctx, "fill_seq_128K", "write", 128 * 1024, 1.0)])
    out: dict[str, dict] = {}
    for state in states:
        if state == "used":
            pbs = parse_size(ctx.settings.get("used_block_size", "64k"))
            mult = float(ctx.settings.get("used_multiple", 1.5))
            ctx.run_sequence("used/precondition", [_fill(ctx, f"used_rnd_{bs_label(pbs)}", "randwrite", pbs, mult)])
        cells = [ctx.cell(cell_key(state, rw, bs), rw, bs, threads=threads, iodepth=iodepth)
                 for rw in workloads for bs in sizes]

        def track(results):
            return {c.name: c.bw_bytes / 1e6 for c in results}

        rounds = ctx.run_sequence(state, cells, chunk=max(1, len(sizes)), tracking=track)
        by = {c.name: c for r in rounds for c in r.cells}
        out[state] = {rw: {bs_label(bs): _cell(by.get(cell_key(state, rw, bs))) for bs in sizes} for rw in workloads}
    return {"purge": purge, "notes": notes, "states": states, "workloads": workloads,
            "block_sizes": [bs_label(b) for b in sizes], "block_size_bytes": sizes, "iodepth": iodepth,
            "threads": threads, "fresh_fill": bool(ctx.settings.get("fresh_fill", True)), "results": out,
            "units": {"mb_s": "MB/s (10^6 bytes/s)", "mib_s": "MiB/s (2^20 bytes/s)", "iops": "IO/s"}}


def _cell(c) -> dict | None:
    if c is None:
        return None
    return {"mb_s": c.bw_bytes / 1e6, "mib_s": c.bw_bytes / 2**20, "iops": c.iops,
            "lat_mean_us": c.lat_mean_ns / 1000}


# --- report ------------------------------------------------------------------------------------

def report_section(ctx) -> str:
    """MB/s vs block size (log x), one panel per drive state and one line per workload; the table."""
    from markupsafe import Markup, escape

    from ..report import plots

    s = ctx.summary
    html = [Markup(f'<p class="note">{escape(n)}</p>') for n in s.get("notes", [])]
    sizes = s.get("block_size_bytes", [])
    labels = s.get("block_sizes", [])
    res = s.get("results", {})
    if not sizes or not res:
        return Markup("").join(html)
    kib = [b / 1024 for b in sizes]
    panels = []
    for state in s.get("states", []):
        series = {}
        for rw in s.get("workloads", []):
            row = res.get(state, {}).get(rw, {})
            pts_ = [(k, row[lab]["mb_s"]) for k, lab in zip(kib, labels) if row.get(lab)]
            if pts_:
                series[LABELS.get(rw, rw)] = ([p[0] for p in pts_], [p[1] for p in pts_])
        panels.append((f"{state} drive", series))
    fig = ctx.figure((11.0, 4.2))
    plots.small_multiples(fig, panels, "block size (KiB)", "MB/s", logx=True, logy=True, xticks=kib,
                          xticklabels=[f"{k:g}" for k in kib])
    html.append(ctx.plot(fig, "mb-vs-bs", "MB/s vs block size, fresh and used",
                         f"QD{s.get('iodepth')}, TC{s.get('threads')}, aligned to the block size; MB/s = 10^6 bytes/s."))
    headers = ["State", "Workload"] + labels
    rows = [[state, LABELS.get(rw, rw)] + [(res[state][rw].get(lab) or {}).get("mb_s") for lab in labels]
            for state in s.get("states", []) for rw in s.get("workloads", []) if rw in res.get(state, {})]
    html.append(ctx.table("table", headers, rows, caption="MB/s (10^6 bytes/s) per block size"))
    return Markup("").join(html)
