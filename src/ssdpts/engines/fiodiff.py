"""Cut a continuous fio job into intervals: difference consecutive cumulative status documents.

Counts, bytes and histogram bins are differenced exactly; the mean latency from (mean * N);
percentiles come from the differenced json+ bins; max/min are the extreme non-empty buckets.
"""

from __future__ import annotations

from .fiojson import parse_job
from .results import CellResult, DirStats, percentile_from_bins


def _dir_diff(cur: dict, prev: dict | None, percentiles: list[str]) -> tuple[DirStats, float]:
    prev = prev or {}
    lat_c = cur.get("lat_ns") or {}
    lat_p = prev.get("lat_ns") or {}
    ios = int(cur.get("total_ios", 0)) - int(prev.get("total_ios", 0))
    nbytes = int(cur.get("io_bytes", 0)) - int(prev.get("io_bytes", 0))
    runtime_ms = float(cur.get("runtime", 0)) - float(prev.get("runtime", 0))
    n_c, n_p = int(lat_c.get("N", 0)), int(lat_p.get("N", 0))
    mean = 0.0
    if n_c - n_p > 0:
        mean = (float(lat_c.get("mean", 0)) * n_c - float(lat_p.get("mean", 0)) * n_p) / (n_c - n_p)
    bins_c = {int(k): int(v) for k, v in (lat_c.get("bins") or {}).items()}
    bins_p = {int(k): int(v) for k, v in (lat_p.get("bins") or {}).items()}
    bins = {k: v - bins_p.get(k, 0) for k, v in bins_c.items() if v - bins_p.get(k, 0) > 0}
    pct = {}
    for p in percentiles:
        v = percentile_from_bins(bins, float(p)) if bins else None
        if v is not None:
            pct[p] = v
    secs = runtime_ms / 1000.0
    return DirStats(
        ios=ios, bytes=nbytes, iops=ios / secs if secs > 0 else 0.0, bw_bytes=nbytes / secs if secs > 0 else 0.0,
        lat_mean_ns=mean, lat_min_ns=float(min(bins)) if bins else 0.0, lat_max_ns=float(max(bins)) if bins else 0.0,
        percentiles=pct, bins=bins or None,
    ), runtime_ms


def diff_job(cur: dict, prev: dict | None) -> tuple[CellResult, float]:
    """(the interval's CellResult, its active duration in ms) between two cumulative job documents."""
    full = parse_job(cur)
    pcts = sorted(set(full.read.percentiles) | set(full.write.percentiles), key=float) or ["99", "99.9"]
    read, rt_r = _dir_diff(cur.get("read") or {}, (prev or {}).get("read"), pcts)
    write, rt_w = _dir_diff(cur.get("write") or {}, (prev or {}).get("write"), pcts)
    return CellResult(name=full.name, read=read, write=write, runtime_ms=max(rt_r, rt_w),
                      usr_cpu=full.usr_cpu, sys_cpu=full.sys_cpu, latency_source=full.latency_source), max(rt_r, rt_w)
