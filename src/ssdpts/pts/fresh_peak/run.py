"""Fresh-out-of-box peak (reviewers' study, seed 000): the vendor's "up to" numbers.

Purge, then short RND 4 KiB read and write cells at a high TC x QD (seed 000: 24 x QD32, 428k read
IOPS at 1.7 ms and 289k write IOPS at 2.6 ms on a KC2000 rated 350k/250k). Shown beside the
steady-state numbers of the same run (IOPS test, WSAT) when those were run: vendors quote the
fresh peak, a drive lives in the steady state. Reads straight after a purge may hit unmapped LBAs,
which a controller answers without touching NAND — exactly what "up to" numbers measure.
"""

from __future__ import annotations

from ..units import bs_label, parse_size
from .common import TestContext

NAME = "fresh-peak"
TITLE = "Fresh-Out-of-Box Peak vs Steady State"

LABELS = {"randread": "RND read", "randwrite": "RND write"}


def steady_reference(ctx: TestContext, bs: int) -> dict:
    """Steady-state IOPS of the same block size from the IOPS test and WSAT of this run, if present."""
    out = {}
    label = bs_label(bs)
    for t in ctx.store.tests(ctx.run_id):
        s = t.get("summary") or {}
        if t["name"] == "iops" and s.get("table_iops"):
            tab = s["table_iops"]
            if label in tab.get("100/0", {}):
                out["randread"] = {"iops": tab["100/0"][label], "source": f"IOPS test, RND {label} 100/0, steady state"}
            if label in tab.get("0/100", {}):
                out["randwrite"] = {"iops": tab["0/100"][label], "source": f"IOPS test, RND {label} 0/100, steady state"}
        if t["name"] == "wsat" and bs == 4096 and "randwrite" not in out:
            w = (s.get("workloads") or {}).get("rnd4k-write")
            if w:
                out["randwrite"] = {"iops": w["final_iops"], "source": "WSAT, RND 4K W, last rounds"}
    return out


def run(ctx: TestContext) -> dict:
    bs = parse_size(ctx.settings.get("block_size", "4k"))
    workloads = ctx.settings.get("workloads", ["randread", "randwrite"])
    purge = ctx.purge()
    cells = [ctx.cell(f"fob_{rw}_{bs_label(bs)}", rw, bs) for rw in workloads]
    rounds = ctx.run_sequence("fob", cells, chunk=max(1, len(cells)),
                              tracking=lambda res: {c.name: c.iops for c in res})
    by = {c.name: c for r in rounds for c in r.cells}
    ref = steady_reference(ctx, bs)
    out = {}
    for w, rw in zip(cells, workloads):
        c = by.get(w.name)
        if c is None:
            continue
        d = c.read if rw.endswith("read") else c.write
        out[rw] = {"iops": c.iops, "mib_s": c.bw_bytes / 2**20, "mb_s": c.bw_bytes / 1e6,
                   "lat_mean_us": d.lat_mean_ns / 1000, "lat_max_us": d.lat_max_ns / 1000,
                   **{f"p{k}_us": v / 1000 for k, v in d.percentiles.items()},
                   "steady": ref.get(rw),
                   "fresh_over_steady": c.iops / ref[rw]["iops"] if ref.get(rw) and ref[rw]["iops"] else None}
    return {"purge": purge, "block_size": bs, "threads": cells[0].threads if cells else None,
            "iodepth": cells[0].iodepth if cells else None, "runtime_s": ctx.cell_runtime(), "results": out,
            "state": "fresh out of box (right after the purge)",
            "units": {"iops": "IO/s", "latency": "µs (total latency)", "mb_s": "MB/s (10^6 bytes/s)"}}


# --- report ------------------------------------------------------------------------------------

def report_section(ctx) -> str:
    """FOB peak IOPS beside the steady-state IOPS of the same run; a table with mean latency."""
    from markupsafe import Markup

    from ..report import plots

    s = ctx.summary
    res = s.get("results", {})
    if not res:
        return Markup("")
    bs = bs_label(s.get("block_size", 4096))
    names = list(res)
    groups = [f"{LABELS.get(rw, rw)} {bs}" for rw in names]
    series = {"fresh (FOB peak)": [res[rw]["iops"] for rw in names]}
    if any(res[rw].get("steady") for rw in names):
        series["steady state"] = [(res[rw].get("steady") or {}).get("iops") for rw in names]
    fig = ctx.figure()
    plots.bar_plot(fig, groups, series, "workload", "IOPS")
    html = [ctx.plot(fig, "fresh-vs-steady", "FOB peak IOPS vs steady state",
                     f"TC{s.get('threads')}/QD{s.get('iodepth')}, {s.get('runtime_s'):g} s right after the purge."
                     + ("" if len(series) > 1 else " No steady-state test in this run to compare with."))]
    rows = [[groups[i], res[rw]["iops"], res[rw]["lat_mean_us"], res[rw].get("p99_us"), res[rw]["mb_s"],
             (res[rw].get("steady") or {}).get("iops"), res[rw].get("fresh_over_steady"),
             (res[rw].get("steady") or {}).get("source", "")] for i, rw in enumerate(names)]
    html.append(ctx.table("table", ["Workload", "FOB IOPS", "Mean latency (µs)", "p99 (µs)", "MB/s",
                                    "Steady-state IOPS", "FOB / steady", "Steady-state source"], rows,
                          caption="Fresh-out-of-box peak, the state vendors quote"))
    return Markup("").join(html)
