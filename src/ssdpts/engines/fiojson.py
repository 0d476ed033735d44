"""Tolerant parsing of fio's JSON / JSON+ output.

Known pitfalls handled (see shared/reference/peers-fio-json-smart.md):
* text before the document (errors, "Saving output of prerun ..." notices) and after it;
* fio 2.x keys (`lat`/`clat` in microseconds) vs 3.x (`lat_ns`/`clat_ns`);
* `percentile` missing when a direction did no I/O, or when only clat percentiles exist;
* `bins` only present with json+.
"""

from __future__ import annotations

import json

from ..errors import SsdptsError
from .results import CellResult, DirStats


def load_document(text: str) -> dict:
    """The first JSON object in `text` that looks like fio output (has `jobs` or `client_stats`)."""
    decoder = json.JSONDecoder()
    pos = 0
    while True:
        start = text.find("{", pos)
        if start < 0:
            break
        try:
            doc, _end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            pos = start + 1
            continue
        if isinstance(doc, dict) and ("jobs" in doc or "client_stats" in doc):
            return doc
        pos = start + 1
    snippet = " ".join(text.strip().split())[:160]
    raise SsdptsError(f"fio produced no JSON result document (output began: {snippet!r})")


def _block(d: dict, keys: tuple[tuple[str, float], ...], need: str | None = None) -> tuple[dict, float] | None:
    for key, scale in keys:
        block = d.get(key)
        if isinstance(block, dict) and (need is None or need in block):
            return block, scale
    return None


_TOTAL = (("lat_ns", 1.0), ("lat", 1000.0))       # fio 3.x ns, fio 2.x µs
_COMPLETION = (("clat_ns", 1.0), ("clat", 1000.0))


def _latency(d: dict) -> tuple[dict, dict, float, float, str]:
    """(stats block, percentile block, their ns scales, percentile source). Total latency preferred."""
    total = _block(d, _TOTAL) or _block(d, _COMPLETION) or ({}, 1.0)
    for keys, source in ((_TOTAL, "lat"), (_COMPLETION, "clat")):
        for need in ("percentile", "bins"):
            found = _block(d, keys, need)
            if found:
                return total[0], found[0], total[1], found[1], source
    return total[0], {}, total[1], 1.0, "lat"


def _pct_key(k: str) -> str:
    return f"{float(k):g}"


def parse_direction(d: dict | None) -> tuple[DirStats, str]:
    if not d:
        return DirStats(), "lat"
    lat, pct, scale, pscale, source = _latency(d)
    ios = int(d.get("total_ios", d.get("short_ios", 0)) or 0)
    io_bytes = int(d.get("io_bytes", int(d.get("io_kbytes", 0)) * 1024))
    bw_bytes = float(d["bw_bytes"]) if "bw_bytes" in d else float(d.get("bw", 0)) * 1024  # bw_bytes from fio 3.2
    bins = pct.get("bins")
    return DirStats(
        ios=ios,
        bytes=io_bytes,
        iops=float(d.get("iops", 0.0)),
        bw_bytes=bw_bytes,
        lat_mean_ns=float(lat.get("mean", 0.0)) * scale,
        lat_min_ns=float(lat.get("min", 0.0)) * scale,
        lat_max_ns=float(lat.get("max", 0.0)) * scale,
        lat_stddev_ns=float(lat.get("stddev", 0.0)) * scale,
        percentiles={_pct_key(k): float(v) * pscale for k, v in (pct.get("percentile") or {}).items()
                     if float(k) > 0},
        bins={int(k) * int(pscale): int(v) for k, v in bins.items()} if isinstance(bins, dict) else None,
    ), source


def parse_job(job: dict) -> CellResult:
    read, src_r = parse_direction(job.get("read"))
    write, src_w = parse_direction(job.get("write"))
    if job.get("error"):
        raise SsdptsError(f"fio job {job.get('jobname')} failed with error {job['error']}")
    # the group's wall time: per-direction runtime is the longest clone; job_runtime sums the clones
    runtime = float(max((job.get(d) or {}).get("runtime", 0) for d in ("read", "write")) or job.get("job_runtime", 0))
    return CellResult(
        name=str(job.get("jobname", "")),
        read=read,
        write=write,
        runtime_ms=runtime,
        usr_cpu=float(job.get("usr_cpu", 0.0)),
        sys_cpu=float(job.get("sys_cpu", 0.0)),
        latency_source="clat" if "clat" in (src_r, src_w) else "lat",
        intervals=list(job.get("intervals", [])),
        errors=int(job.get("total_err") or 0),
    )


def parse_output(text: str) -> tuple[dict, list[CellResult]]:
    doc = load_document(text)
    jobs = doc.get("jobs") or doc.get("client_stats") or []
    jobs = [j for j in jobs if j.get("jobname") != "All clients"]
    return doc, [parse_job(j) for j in jobs]
