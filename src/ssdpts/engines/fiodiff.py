"""Cut a continuous fio job into intervals: difference consecutive cumulative status documents.

Counts, bytes and histogram bins are differenced exactly; the mean latency from (mean * N);
percentiles come from the differenced json+ bins; max/min are the extreme non-empty buckets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator

from .fiojson import parse_job
from .results import CellResult, DirStats, fold_short_pieces, percentile_from_bins


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


@dataclass(frozen=True)
class Slice:
    """One interval of a continuous job: what each member's job did between two status documents."""

    jobs: list[dict]            # the cumulative job documents (one per member) the slice ends at
    results: list[CellResult]   # per member, the slice's own counts
    duration_ms: float
    starts: list[dict | None] = field(default_factory=list)   # the documents it starts from (None: the job's start)


def _did_io(results: Iterable[CellResult]) -> bool:
    """Any I/O counted since the previous slice: issued (fio's total_ios), or completed bytes. Both are
    needed: fio adds a batch's bytes after it has counted the batch's I/Os (and their latencies), so its
    final document can add tens of MiB with no new I/O counted (seen: +31 MiB and +0 I/Os in 19 ms)."""
    return any(d.ios or d.bytes for r in results for d in (r.read, r.write))


def _between(jobs: list[dict], starts: list[dict | None]) -> Slice:
    diffs = [diff_job(job, before) for job, before in zip(jobs, starts)]
    return Slice(jobs, [r for r, _ in diffs], max(d for _, d in diffs), list(starts))


def _pieces(documents: Iterable[dict], members: int, interval_s: float) -> Iterator[Slice]:
    """Every piece between documents that did I/O (or, after the first, lasted half an interval)."""
    prev: list[dict | None] = [None] * members
    carried: Slice | None = None     # I/O in a document not yet in a piece
    count = 0
    for doc in documents:
        piece = _between(list(doc["jobs"][:members]), prev)
        did_io = _did_io(piece.results)
        if piece.duration_ms <= 0 or (not did_io and (count == 0 or piece.duration_ms < interval_s * 500)):
            carried = piece if did_io else None
            continue
        prev, carried = piece.jobs, None
        count += 1
        yield piece
    if carried is not None:
        yield carried


def slices(documents: Iterable[dict], members: int, interval_s: float) -> Iterator[Slice]:
    """Cut fio's cumulative status documents (its final one last) into slices, losing neither I/O nor time.

    A document without I/O since the last slice is not a slice before the job's first I/O (gate, start-up)
    nor when shorter than half an interval: its time goes into the next slice; a whole slice without I/O
    after the first is a drive that delivered nothing, and is one. A piece shorter than half an interval after
    the first slice is no slice of its own but the end of the one before (`fold_short_pieces`): fio's final
    document comes a few ms after its last periodic one, with bytes whose I/Os the periodic one had counted
    (+31 MiB, +0 I/Os in 19 ms; or no runtime gained at all, fio counts ms), and as a slice of its own it
    was a round of 0 IOPS. So each slice is given when the next document starts another, or the job ended."""
    return fold_short_pieces(_pieces(documents, members, interval_s), interval_s * 1000,
                             lambda s: s.duration_ms, lambda held, tail: _between(tail.jobs, held.starts))
