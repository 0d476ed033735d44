"""Fresh-out-of-box peak (reviewers' study, seed 000): the vendor's "up to" numbers.

Purge, then short RND 4 KiB read and write cells at a high TC x QD (seed 000: 24 x QD32, 428k read
IOPS at 1.7 ms and 289k write IOPS at 2.6 ms on a KC2000 rated 350k/250k). Shown beside the
steady-state numbers of the same run (IOPS test, WSAT) when those were run: vendors quote the
fresh peak, a drive lives in the steady state. Reads straight after a purge may hit unmapped LBAs,
which a controller answers without touching NAND — exactly what "up to" numbers measure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...units import bs_label
from ...workload import Workload
from ..plan import TestPlan, once, purge_phase
from ..iops.summary import IopsSummary
from ...results import Latency
from .summary import FreshPeakSummary, PeakResult, SteadyReference
from .settings import FreshPeakSettings

if TYPE_CHECKING:     # annotations only: reading a stored run's settings imports no round loop
    from ..context import TestContext


def steady_reference(ctx: TestContext, bs: int) -> dict[str, SteadyReference]:
    """Steady-state IOPS of the same block size from the IOPS test and WSAT of this run, if present."""
    out: dict[str, SteadyReference] = {}
    label = bs_label(bs)
    iops = ctx.stored_summary("iops")
    if isinstance(iops, IopsSummary):
        for rw, read_pct, mix in (("randread", 100, "100/0"), ("randwrite", 0, "0/100")):
            v = iops.iops(bs, read_pct)
            if v is not None:
                out[rw] = SteadyReference(v, f"IOPS test, RND {label} {mix}, steady state")
    wsat = ctx.stored_summary("wsat")    # WsatSummary: workloads name -> WsatWorkload with final_iops
    if wsat is not None and bs == 4096 and "randwrite" not in out:
        w = wsat.workloads.get("rnd4k-write")
        if w is not None:
            out["randwrite"] = SteadyReference(w.final_iops, "WSAT, RND 4K W, last rounds")
    return out


def _cells(ctx: TestContext) -> tuple[int, list[str], list[Workload]]:
    """(block size, workloads, one short cell per workload at the profile's TC x QD)."""
    bs, workloads = ctx.settings.block_size, list(ctx.settings.workloads)
    return bs, workloads, [ctx.cells.cell(f"fob_{rw}_{bs_label(bs)}", rw, bs) for rw in workloads]


def plan(ctx: TestContext) -> TestPlan:
    bs, workloads, cells = _cells(ctx)
    return TestPlan("fresh-peak", [purge_phase(ctx), once(
        "sequence", f"right after the purge: {', '.join(workloads)} {bs_label(bs)} once each, back to back", cells)])


def run(ctx: TestContext) -> FreshPeakSummary:
    bs, workloads, cells = _cells(ctx)
    purge = ctx.purger.purge()
    rounds = ctx.rounds.run_sequence("fob", cells, chunk=max(1, len(cells)),
                              tracking=lambda res: {c.name: c.iops for c in res})
    by = {c.name: c for r in rounds for c in r.cells}
    ref = steady_reference(ctx, bs)
    out = []
    for w, rw in zip(cells, workloads):
        c = by.get(w.name)
        if c is None:
            continue
        d = c.read if rw.endswith("read") else c.write
        steady = ref.get(rw)
        out.append(PeakResult(
            rw=rw, iops=c.iops, mib_s=c.bw_bytes / 2**20, mb_s=c.bw_bytes / 1e6,
            latency=Latency(mean_us=d.lat_mean_ns / 1000, max_us=d.lat_max_ns / 1000,
                            percentiles_us={k: v / 1000 for k, v in d.percentiles.items()}),
            steady=steady, fresh_over_steady=c.iops / steady.iops if steady and steady.iops else None))
    return FreshPeakSummary(purge=purge, block_size=bs, threads=cells[0].threads if cells else None,
                            iodepth=cells[0].iodepth if cells else None, runtime_s=ctx.settings.cell_runtime, results=out)
