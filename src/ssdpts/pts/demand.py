"""Demand intensity: the TC x QD sweep shared by DIRTH and CBW (latency vs IOPS curves).

Procedure (PTS 2.0 as ADATA's SSS-PTS-TEST runs it; docs/conformance.md gives each rule's source):
1. Purge.
2. Preconditioning to steady state in rounds: each round is `precondition_time` (30 min) of the test's
   access pattern as 100 % writes at the largest TC/QD (TC32/QD32), cut into `cell_runtime` (1 min)
   cells; steady state is judged on the first cell of each round; at most `max_rounds` (25).
3. Sweep rounds until the largest point's IOPS is steady: each round starts with a `prewrite_time`
   (5 min) write pre-write at the largest TC/QD, then every TC x QD point (largest demand first), 1 min each.
4. Operating points from the measurement window: Max = the highest IOPS with mean latency under the
   limit (5 ms), Min = TC1/QD1 (the smallest OIO), Mid = the point whose IOPS is closest to
   (Max + Min) / 2. Each then gets its own `operating_prewrite_time` (60 min) write pre-write at its
   TC/QD and a logged `operating_measure_time` (10 min) measurement at the test's mix, whose merged
   histograms are the response-time histograms.
"""

from __future__ import annotations

from ..engines.results import merge_bins
from ..units import parse_duration
from .common import TestContext, Tracker, window_summary

OPERATING_POINTS = ("max", "mid", "min")


def point_name(prefix: str, tc: int, qd: int) -> str:
    return f"{prefix}_tc{tc}_qd{qd}"


def sweep(ctx: TestContext, prefix: str, make_cell) -> dict:
    tcs = sorted({int(x) for x in ctx.settings.get("thread_counts", [1, 2, 4, 8, 16, 32])}, reverse=True)
    qds = sorted({int(x) for x in ctx.settings.get("queue_depths", [1, 2, 4, 8, 16, 32])}, reverse=True)
    cells = [make_cell(point_name(prefix, tc, qd), threads=tc, iodepth=qd) for tc in tcs for qd in qds]
    biggest = cells[0]
    minute = ctx.cell_runtime()
    pc_cells = [make_cell(f"{prefix}_pc{i + 1:02d}", threads=tcs[0], iodepth=qds[0], read_pct=0)
                for i in range(_count(ctx, "precondition_time", "30m", minute))]
    prewrite = make_cell(f"{prefix}_prewrite", threads=tcs[0], iodepth=qds[0], read_pct=0,
                         runtime_s=parse_duration(ctx.settings.get("prewrite_time", "5m")))
    purge = ctx.purge()
    # ADATA tracks the first minute of each 30-minute preconditioning round
    pc = ctx.run_to_steady_state("pc", pc_cells, [Tracker(pc_cells[0].name, "iops")])
    outcome = ctx.run_to_steady_state("", [prewrite] + cells, [Tracker(biggest.name, "iops")])
    summary = window_summary(outcome.rounds, outcome.window_rounds)
    limit_us = parse_duration(ctx.settings.get("latency_limit", "5ms")) * 1e6
    points = []
    for tc in tcs:
        for qd in qds:
            s = summary[point_name(prefix, tc, qd)]
            points.append({"tc": tc, "qd": qd, "oio": tc * qd, "name": point_name(prefix, tc, qd), "iops": s["iops"],
                           "lat_mean_us": s["lat_mean_us"], "lat_max_us": s["lat_max_us"],
                           "read_lat": s.get("read_lat"), "write_lat": s.get("write_lat"),
                           "usr_cpu": s["usr_cpu"], "sys_cpu": s["sys_cpu"]})
    under = [p for p in points if p["lat_mean_us"] < limit_us]
    max_point = max(under or points, key=lambda p: p["iops"])
    min_point = min(points, key=lambda p: p["oio"])
    mid_target = (max_point["iops"] + min_point["iops"]) / 2
    mid_point = min(points, key=lambda p: abs(p["iops"] - mid_target))
    chosen = {"max": max_point, "mid": mid_point, "min": min_point}
    measured = operating_points(ctx, prefix, make_cell, chosen, minute)
    return {"purge": purge, "preconditioning": pc.to_dict(), "steady": outcome.to_dict(), "points": points,
            "latency_limit_us": limit_us, "operating_measurements": measured,
            "operating_points": {"max": max_point["name"], "mid": mid_point["name"], "min": min_point["name"]},
            "max_under_limit": bool(under), "thread_counts": tcs, "queue_depths": qds,
            "units": {"iops": "IO/s (read + write)", "latency": "µs, total latency"}}


def _count(ctx: TestContext, key: str, default: str, cell_s: float) -> int:
    """How many `cell_s` cells make up the profile's duration `key` (at least one)."""
    return max(1, round(parse_duration(ctx.settings.get(key, default)) / cell_s))


def operating_points(ctx: TestContext, prefix: str, make_cell, chosen: dict[str, dict], cell_s: float) -> dict:
    """Max / Mid / Min: each its own write pre-write at its TC/QD, then a logged measurement at the test's
    mix (one chained sequence). Per point: pre-write IOPS per cell and the measurement's merged results."""
    n_pre = _count(ctx, "operating_prewrite_time", "60m", cell_s)
    n_meas = _count(ctx, "operating_measure_time", "10m", cell_s)
    log_ms = max(1, min(1000, int(cell_s * 100)))   # >= 10 IOPS samples per cell, at most one per second
    segments = []
    for k in OPERATING_POINTS:
        p = chosen[k]
        segments.append((f"op={k}/prewrite", [make_cell(f"{prefix}_{k}_prewrite{i + 1:02d}", threads=p["tc"],
                                                        iodepth=p["qd"], read_pct=0) for i in range(n_pre)]))
        segments.append((f"op={k}/measure", [make_cell(f"{prefix}_{k}_measure{i + 1:02d}", threads=p["tc"],
                                                       iodepth=p["qd"], log_interval_ms=log_ms)
                                             for i in range(n_meas)]))
    rounds = ctx.run_segments(segments)
    out = {}
    for k in OPERATING_POINTS:
        pre = [c for r in rounds[f"op={k}/prewrite"] for c in r.cells]
        meas = [c for r in rounds[f"op={k}/measure"] for c in r.cells]
        ios = sum(c.read.ios + c.write.ios for c in meas)
        secs = sum(c.runtime_ms for c in meas) / 1000
        bins = {d: merge_bins(getattr(c, d).bins for c in meas if getattr(c, d).bins) for d in ("read", "write")}
        out[k] = {"point": chosen[k]["name"], "tc": chosen[k]["tc"], "qd": chosen[k]["qd"],
                  "prewrite_iops": [c.iops for c in pre], "prewrite_seconds": sum(c.runtime_ms for c in pre) / 1000,
                  "measure_seconds": secs, "measure_ios": ios, "iops": ios / secs if secs else 0.0,
                  "lat_mean_us": (sum(c.lat_mean_ns * (c.read.ios + c.write.ios) for c in meas) / ios / 1000
                                  if ios else None),
                  "lat_max_us": max((c.lat_max_ns for c in meas), default=0.0) / 1000,
                  "histogram_ios": {d: sum(b.values()) for d, b in bins.items()}}
    return out
