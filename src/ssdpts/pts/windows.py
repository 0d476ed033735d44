"""Window summaries: the measurement window's averages SNIA reports, from stored rounds."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from ..records import from_data
from ..results import CellWindow, Latency
from ..workload import Workload

if TYPE_CHECKING:     # annotations only: `plan` imports the tests' run modules, not the store or cell results
    from ..engines.results import CellResult, DirStats
    from ..store import RoundRecord


def window_summary(rounds: Sequence[RoundRecord], window_rounds: Sequence[int]) -> dict[str, CellWindow]:
    """Per cell: the measurement-window averages SNIA reports (and max / merged-histogram percentiles)."""
    chosen = [r for r in rounds if r.round in set(window_rounds)]
    out: dict[str, CellWindow] = {}
    if not chosen:
        return out
    for i, name in enumerate(c.name for c in chosen[0].cells):
        cells: list[CellResult] = [r.cells[i] for r in chosen]
        workload = from_data(Workload, chosen[0].workloads[i]) if chosen[0].workloads else Workload(
            name=name, rw="randrw", runtime_s=0.0)
        window = _cell_window(workload, cells)
        for p in sorted({p for c in cells for p in c.parts}):
            window.parts[p] = _cell_window(workload, [c.parts[p] for c in cells if p in c.parts])
        out[name] = window
    return out


def _latency(stats: list, n: int) -> Latency | None:
    from ..engines.results import merge_bins, percentile_from_bins
    ios = sum(s.ios for s in stats)
    if not ios:
        return None
    lat = Latency(mean_us=sum(s.lat_mean_ns * s.ios for s in stats) / ios / 1000,
                  max_us=max(s.lat_max_ns for s in stats) / 1000)
    bins = merge_bins(s.bins for s in stats if s.bins)
    for p in sorted({k for s in stats for k in s.percentiles}, key=float):
        v = percentile_from_bins(bins, float(p)) if bins else None
        if v is None:  # no histogram: mean of per-round percentiles (flagged)
            v = sum(s.percentiles.get(p, 0.0) for s in stats) / n
            lat.percentiles_from = "round mean"
        # a histogram bucket's value can lie above the largest latency measured (fio's buckets are ~1.6 % wide);
        # no I/O was slower than the max, so no percentile is either
        lat.percentiles_us[p] = min(v / 1000, lat.max_us)
    return lat


def merged_latency(stats: Sequence[DirStats]) -> Latency | None:
    """One direction of several results together (I/O-weighted mean, max of max, merged-histogram percentiles)."""
    return _latency(list(stats), len(stats))


def _cell_window(workload: Workload, cells: list[CellResult]) -> CellWindow:
    """Window averages of one cell's results (rates averaged, histograms merged, max of max)."""
    n = len(cells)
    ios_all = sum(c.read.ios + c.write.ios for c in cells)
    return CellWindow(
        workload=workload,
        iops=sum(c.iops for c in cells) / n,
        read_iops=sum(c.read.iops for c in cells) / n,
        write_iops=sum(c.write.iops for c in cells) / n,
        read_mib_s=sum(c.read.bw_bytes for c in cells) / n / 2**20,
        write_mib_s=sum(c.write.bw_bytes for c in cells) / n / 2**20,
        usr_cpu=sum(c.usr_cpu for c in cells) / n,
        sys_cpu=sum(c.sys_cpu for c in cells) / n,
        lat_mean_us=sum(c.lat_mean_ns * (c.read.ios + c.write.ios) for c in cells) / ios_all / 1000 if ios_all else 0.0,
        lat_max_us=max(c.lat_max_ns for c in cells) / 1000,
        read_lat=_latency([c.read for c in cells], n),
        write_lat=_latency([c.write for c in cells], n),
    )
