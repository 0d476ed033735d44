"""Workload variants side by side (reviewers' studies, seeds 002 and 004a).

One workload (RND 4 KiB writes by default), run back to back after a purge (+ WIPC) in these variants:
* data pattern: incompressible (`random`), 50 % compressible (`compress50`), zero-filled (`zero`) — a
  compressing controller (SandForce) is faster on the last two;
* `dsync`: O_DSYNC (direct + sync), every write waits for stable media;
* `buffered`: direct=0 — this measures the host's **page cache, not the drive** (seed 002's
  3150.9 MB/s on SATA 6 Gb/s);
* `ws-small` / `ws-large`: a working set smaller / larger than the drive's cache (the slc-cache
  estimate of this run, the simulator's SLC size, or `cache_size` from the profile).
The variants run back to back in this order after the preconditioning (WIPC, then the workload itself
for `precondition_multiple` x the active range): the drive's state carries over from one to the next.
"""

from __future__ import annotations

from ..units import bs_label, parse_size
from .common import TestContext

NAME = "variants"
TITLE = "Workload Variants: Data Pattern, O_DSYNC, Page Cache, Working Set"

ALL = ("random", "compress50", "zero", "dsync", "ws-small", "ws-large", "buffered")
LABELS = {
    "random": "incompressible data",
    "compress50": "50 % compressible data",
    "zero": "zero-filled data",
    "dsync": "O_DSYNC (direct + sync)",
    "buffered": "buffered: page cache, not the drive",
    "ws-small": "working set < cache",
    "ws-large": "working set > cache",
}


def cache_size(ctx: TestContext) -> tuple[int | None, str]:
    """The cache size the working-set variants are sized against, and where it came from."""
    setting = ctx.settings.get("cache_size", "auto")
    if setting != "auto":
        return parse_size(setting), "profile (cache_size)"
    for t in ctx.store.tests(ctx.run_id):
        if t["name"] == "slc-cache" and (t.get("summary") or {}).get("cache_bytes"):
            return int(t["summary"]["cache_bytes"]), "slc-cache estimate of this run"
    counters = getattr(ctx.target, "counters", None)
    if counters is not None:
        c = counters().get("slc_capacity_bytes")
        if c:
            return int(c), "simulator SLC capacity after purge"
    return None, ""


def run(ctx: TestContext) -> dict:
    bs = parse_size(ctx.settings.get("block_size", "4k"))
    rw = ctx.settings.get("rw", "randwrite")
    read_pct = ctx.settings.get("read_pct")
    wanted = [v for v in ctx.settings.get("variants", list(ALL))]
    cap = ctx.target.size_bytes
    notes = []
    purge = ctx.purge()
    known = ctx.store.step(ctx.run_id, ctx.test, "cache")   # resumed: the size chosen after the purge
    if known is None:
        cache, cache_src = cache_size(ctx)
        ctx.store.record_step(ctx.run_id, ctx.test, "cache", "cache", {"bytes": cache, "source": cache_src})
    else:
        cache, cache_src = known["bytes"], known["source"]
    if ctx.settings.get("precondition", True):
        # WIPC, then (write workloads) the workload itself with incompressible data for N x the active
        # range, so that the variants start near the steady state and their order matters less
        pcs = [ctx.wipc()]
        mult = float(ctx.settings.get("precondition_multiple", 2.0))
        if rw not in ("read", "randread"):
            probe = ctx.cell("pc_workload", rw, bs, read_pct, data_pattern="random")
            pcs.append(probe.with_(runtime_s=None, io_size=max(bs, int(mult * probe.range_size * cap / probe.threads)
                                                               // bs * bs)))
        ctx.run_sequence("precondition", pcs)
    base = dict(name="", rw=rw, bs=bs, read_pct=read_pct)
    cells, labels = [], {}
    for v in wanted:
        kw = {}
        if v in ("random", "compress50", "zero"):
            kw["data_pattern"] = v
        elif v == "dsync":
            kw.update(sync=True, direct=True)
        elif v == "buffered":
            kw["direct"] = False
        elif v in ("ws-small", "ws-large"):
            if not cache:
                notes.append(f"{v} skipped: the drive's cache size is unknown (run slc-cache first, or set cache_size)")
                continue
            size = cache / 2 if v == "ws-small" else min(cap, 4 * cache)
            if v == "ws-large" and size < 1.5 * cache:
                notes.append(f"{v} skipped: the drive ({cap / 2**30:.2f} GiB) is not much larger than its cache "
                             f"({cache / 2**30:.2f} GiB)")
                continue
            kw["range_size"] = max(size, 64 * bs) / cap
        else:
            notes.append(f"unknown variant {v!r} skipped; allowed: {', '.join(ALL)}")
            continue
        name = f"v_{v.replace('-', '_')}"
        cells.append(ctx.cell(name, base["rw"], bs, read_pct, **kw))
        labels[name] = v
    if ctx.target.kind == "sim":
        notes.append("the simulated drive models neither compression, O_DSYNC nor a page cache: the data-pattern, "
                     "dsync and buffered variants equal the baseline there")
    if "buffered" in labels.values():
        notes.append("buffered (direct=0) results are the host's page cache, not the drive")
    for n in notes:
        ctx.note(n)
    rounds = ctx.run_sequence("variants", cells, chunk=max(1, len(cells)),
                              tracking=lambda res: {c.name: c.iops for c in res})
    by = {c.name: c for r in rounds for c in r.cells}
    if "buffered" in labels.values():
        _flush_page_cache(ctx)
    out = {}
    for c in cells:
        r = by.get(c.name)
        if r is None:
            continue
        v = labels[c.name]
        out[v] = {"label": LABELS[v], "iops": r.iops, "mb_s": r.bw_bytes / 1e6, "mib_s": r.bw_bytes / 2**20,
                  "lat_mean_us": r.lat_mean_ns / 1000, "lat_max_us": r.lat_max_ns / 1000,
                  "working_set_bytes": int(c.region(cap, max(ctx.target.logical_block_size, bs))[1]),
                  "direct": c.direct, "sync": c.sync, "data_pattern": c.data_pattern}
    base_iops = (out.get("random") or next(iter(out.values()), {})).get("iops")
    for v in out.values():
        v["vs_baseline"] = v["iops"] / base_iops if base_iops else None
    return {"purge": purge, "workload": {"rw": rw, "block_size": bs, "read_pct": read_pct,
                                         "threads": cells[0].threads if cells else None,
                                         "iodepth": cells[0].iodepth if cells else None},
            "cache_bytes": cache, "cache_source": cache_src, "notes": notes, "variants": out,
            "order": [labels[c.name] for c in cells],
            "units": {"iops": "IO/s", "mb_s": "MB/s (10^6 bytes/s)", "latency": "µs",
                      "vs_baseline": "IOPS / IOPS with incompressible data"}}


def _flush_page_cache(ctx: TestContext) -> None:
    """Write back what the buffered variant left dirty in the page cache (else the next purge's
    BLKDISCARD fails with EBUSY and the dirty pages would land in the next test) and drop it."""
    import os

    if ctx.target.kind not in ("block", "file"):
        return
    fd = os.open(ctx.target.path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


# --- report ------------------------------------------------------------------------------------

def report_section(ctx) -> str:
    """Bars side by side: IOPS (and MB/s) per variant; the page-cache one labelled as such."""
    from markupsafe import Markup, escape

    from ..report import plots

    s = ctx.summary
    html = [Markup(f'<p class="note">{escape(n)}</p>') for n in s.get("notes", [])]
    data = s.get("variants", {})
    if not data:
        return Markup("").join(html)
    w = s.get("workload", {})
    names = [v for v in s.get("order", data) if v in data]
    import textwrap

    fig = ctx.figure((10.0, 4.8))
    plots.bar_plot(fig, [textwrap.fill(data[v]["label"], 16) for v in names],
                   {"IOPS": [data[v]["iops"] for v in names]}, "variant", "IOPS")
    for lab in fig.axes[0].get_xticklabels():
        lab.set_rotation(0)
        lab.set_ha("center")
        lab.set_fontsize(7)
    html.append(ctx.plot(fig, "variants", "the same workload in each variant, side by side",
                         f"{w.get('rw')} {bs_label(w.get('block_size') or 4096)}, TC{w.get('threads')}/QD{w.get('iodepth')}. "
                         "The buffered bar is the host's page cache, not the drive."))
    rows = [[data[v]["label"], data[v]["iops"], data[v]["mb_s"], data[v]["lat_mean_us"], data[v]["lat_max_us"],
             data[v]["working_set_bytes"] / 2**30, data[v]["vs_baseline"]] for v in names]
    html.append(ctx.table("table", ["Variant", "IOPS", "MB/s", "Mean latency (µs)", "Max latency (µs)",
                                    "Working set (GiB)", "× incompressible"], rows,
                          caption=f"Cache size for the working-set variants: "
                                  f"{(s.get('cache_bytes') or 0) / 2**30:.2f} GiB ({s.get('cache_source') or 'unknown'})"))
    return Markup("").join(html)
