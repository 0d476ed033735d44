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

from typing import TYPE_CHECKING

from ...targets.sim import SimTarget, simulated
from ...units import bs_label
from ...workload import Workload
from ...workload.spec import PAGE_CACHE_LABEL
from ..plan import TestPlan, once, purge_phase
from ..slc_cache.summary import SlcCacheSummary
from .summary import VariantResult, VariantsSummary, VariantWorkload
from .settings import VariantsSettings

if TYPE_CHECKING:     # annotations only: reading a stored run's settings imports no round loop
    from ..context import TestContext

LABELS = {
    "random": "incompressible data",
    "compress50": "50 % compressible data",
    "zero": "zero-filled data",
    "dsync": "O_DSYNC (direct + sync)",
    "buffered": PAGE_CACHE_LABEL,
    "ws-small": "working set < cache",
    "ws-large": "working set > cache",
}
THROUGH_PAGE_CACHE = " (page cache, not the drive)"     # a working set run with direct=0 (ws_direct = false)


def label_of(variant: str, direct: bool) -> str:
    """The variant's name in tables and charts; a working set through the page cache says what it measured."""
    return LABELS[variant] + (THROUGH_PAGE_CACHE if variant in ("ws-small", "ws-large") and not direct else "")


def cache_size(ctx: TestContext) -> tuple[int | None, str]:
    """The cache size the working-set variants are sized against, and where it came from."""
    if ctx.settings.cache_size is not None:
        return ctx.settings.cache_size, "profile (cache_size)"
    slc = ctx.stored_summary("slc-cache")
    if isinstance(slc, SlcCacheSummary) and slc.cache_bytes:
        return int(slc.cache_bytes), "slc-cache estimate of this run"
    if simulated(ctx.target):
        # the working sets lie at the same LBAs on every drive of a set: sized against the smallest cache
        c = min(d.counters().get("slc_capacity_bytes") or 0 for d in ctx.target.drives())
        if c:
            return int(c), "simulator SLC capacity after purge" + (
                " (the smallest of the drives')" if len(ctx.target.drives()) > 1 else "")
    return None, ""


def _workloads(ctx: TestContext) -> list[tuple[str, int, int | None]]:
    """(rw, block size, read %) of each workload every variant runs."""
    s = ctx.settings
    if s.workloads is None:
        return [(s.rw, s.block_size, s.read_pct)]
    return [(rw, bs, s.read_pct if rw in ("randrw", "rw") else None) for rw, bs in s.workloads]


def _workload(ctx: TestContext) -> tuple[str, int, int | None]:
    """The workload the preconditioning runs: the first that writes (else the first)."""
    wls = _workloads(ctx)
    return next((w for w in wls if w[0] not in ("read", "randread")), wls[0])


def _preconditioning(ctx: TestContext) -> list[Workload]:
    """WIPC, then (write workloads) the workload itself with incompressible data for N x the active range,
    so that the variants start near the steady state and their order matters less."""
    if not ctx.settings.precondition:
        return []
    rw, bs, read_pct = _workload(ctx)
    pcs = [ctx.cells.wipc()]
    if rw not in ("read", "randread"):
        mult = ctx.settings.precondition_multiple
        probe = ctx.cells.cell("pc_workload", rw, bs, read_pct, data_pattern="random")
        pcs.append(probe.with_(runtime_s=None, io_size=max(bs, int(mult * probe.range_size * ctx.target.size_bytes
                                                                   / probe.threads) // bs * bs)))
    return pcs


def _working_set(ctx: TestContext, v: str, cache: int | None, bs: int) -> tuple[dict, str | None]:
    """(cell changes, or a note why the variant is skipped) of a working-set variant."""
    s, cap = ctx.settings, ctx.target.size_bytes
    chosen, threads = (s.ws_small_size, s.ws_small_threads) if v == "ws-small" else (s.ws_large_size, s.ws_large_threads)
    kw: dict = {"threads": threads} if threads else {}
    if chosen is not None:
        if chosen > cap:
            return {}, f"{v} skipped: its working set ({chosen / 2**30:.2f} GiB) is larger than the drive"
        size = chosen
    elif not cache:
        return {}, (f"{v} skipped: the drive's cache size is unknown (run slc-cache first, or set cache_size "
                    f"or {v.replace('-', '_')}_size)")
    else:
        size = cache / 2 if v == "ws-small" else min(cap, 4 * cache)
        if v == "ws-large" and size < 1.5 * cache:
            return {}, (f"{v} skipped: the drive ({cap / 2**30:.2f} GiB) is not much larger than its cache "
                        f"({cache / 2**30:.2f} GiB)")
    kw["range_size"] = max(size, 64 * bs) / cap
    if not s.ws_direct:
        kw["direct"] = False
    return kw, None


def _variant_cells(ctx: TestContext, cache: int | None) -> tuple[list[Workload], dict[str, tuple[str, int]],
                                                                 list[str]]:
    """(one cell per variant and workload that can run, cell name -> (variant, workload index), notes on skipped
    variants and what they measure)."""
    wls = _workloads(ctx)
    cells, labels, notes = [], {}, []
    for i, (rw, bs, read_pct) in enumerate(wls):
        for v in ctx.settings.variants:
            kw: dict = {}
            if v in ("random", "compress50", "zero"):
                kw["data_pattern"] = v
            elif v == "dsync":
                kw.update(sync="dsync", direct=True)
            elif v == "buffered":
                kw["direct"] = False
            elif v in ("ws-small", "ws-large"):
                kw, skipped = _working_set(ctx, v, cache, bs)
                if skipped:
                    if i == 0:
                        notes.append(skipped)
                    continue
            # one workload: the names of runs stored before workload lists
            name = f"v_{v.replace('-', '_')}" + ("" if len(wls) == 1 else f"_{rw}_{bs_label(bs)}")
            cells.append(ctx.cells.cell(name, rw, bs, read_pct, **kw))
            labels[name] = (v, i)
    if any(isinstance(d, SimTarget) for d in ctx.target.drives()):
        notes.append("the simulated drive models neither compression, O_DSYNC nor a page cache: the data-pattern, "
                     "dsync and buffered variants equal the baseline there")
    cached = list(dict.fromkeys(labels[c.name][0] for c in cells if not c.direct))
    if cached:
        notes.append(f"{', '.join(cached)} (direct=0) results are the host's page cache, not the drive")
    return cells, labels, notes


def plan(ctx: TestContext) -> TestPlan:
    cache, source = cache_size(ctx)
    cells, labels, notes = _variant_cells(ctx, cache)
    if ctx.settings.cache_size is None:
        notes.append("cache_size = auto: an slc-cache estimate of the same run (slc-cache run first) sizes the "
                     "working-set variants" + (f"; else {source}" if source else ""))
    phases = [purge_phase(ctx)]
    pcs = _preconditioning(ctx)
    if pcs:
        phases.append(once("precondition", "WIPC, then the workload itself (incompressible data) for "
                                           f"{ctx.settings.precondition_multiple:g}x the active range",
                           pcs))
    order = list(dict.fromkeys(v for v, _ in labels.values()))
    wls = ", ".join(f"{rw} {bs_label(bs)}" for rw, bs, _ in _workloads(ctx))
    phases.append(once("sequence", f"the variants back to back: {', '.join(order)}; each for {wls}", cells))
    return TestPlan("variants", phases, notes)


def run(ctx: TestContext) -> VariantsSummary:
    cap = ctx.target.size_bytes
    purge = ctx.purger.purge()
    known = ctx.store.step(ctx.run_id, ctx.test, "cache")   # resumed: the size chosen after the purge
    if known is None:
        cache, cache_src = cache_size(ctx)
        ctx.store.record_step(ctx.run_id, ctx.test, "cache", "cache", {"bytes": cache, "source": cache_src})
    else:
        cache, cache_src = known["bytes"], known["source"]
    pcs = _preconditioning(ctx)
    if pcs:
        ctx.rounds.run_sequence("precondition", pcs)
    cells, labels, notes = _variant_cells(ctx, cache)
    for n in notes:
        ctx.note(n)
    rounds = ctx.rounds.run_sequence("variants", cells, chunk=max(1, len(cells)),
                              tracking=lambda res: {c.name: c.iops for c in res})
    by = {c.name: c for r in rounds for c in r.cells}
    if any(not c.direct for c in cells):
        ctx.purger.flush_page_cache()
    results = []
    for c in cells:
        r = by.get(c.name)
        if r is None:
            continue
        v, _ = labels[c.name]
        results.append(VariantResult(
            variant=v, label=label_of(v, c.direct), iops=r.iops, mb_s=r.bw_bytes / 1e6, mib_s=r.bw_bytes / 2**20,
            lat_mean_us=r.lat_mean_ns / 1000, lat_max_us=r.lat_max_ns / 1000,
            working_set_bytes=int(c.region(cap, max(ctx.target.logical_block_size, c.bs))[1]),
            direct=c.direct, sync=c.sync != "none", data_pattern=c.data_pattern, rw=c.rw, block_size=c.bs,
            threads=c.threads, iodepth=c.iodepth))
    workloads = []
    for i, (rw, bs, read_pct) in enumerate(_workloads(ctx)):
        mine = [c for c in cells if labels[c.name][1] == i]
        workloads.append(VariantWorkload(rw=rw, block_size=bs, read_pct=read_pct,
                                         threads=mine[0].threads if mine else None,
                                         iodepth=mine[0].iodepth if mine else None))
        of = [v for v in results if (v.rw, v.block_size) == (rw, bs)]
        baseline = next((v for v in of if v.variant == "random"), of[0] if of else None)
        for v in of:
            v.vs_baseline = v.iops / baseline.iops if baseline and baseline.iops else None
    return VariantsSummary(purge=purge, workload=workloads[0], cache_bytes=cache, cache_source=cache_src,
                           variants=results, notes=notes, workloads=workloads)

