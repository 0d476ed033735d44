"""Demand intensity: the TC x QD sweep shared by DIRTH and CBW (latency vs IOPS curves).

Purge; precondition with the test's access pattern as writes at the largest TC/QD; then rounds of
the whole sweep (largest demand first, as PTS 2.0 runs it) until the largest point's IOPS is steady.
Per point: window-average IOPS and latency (mean, percentiles from merged histograms, max).
Operating points: Max = the highest IOPS with mean latency under the limit (5 ms by default),
Min = TC1/QD1 (the smallest), Mid = the point whose IOPS is closest to (Max + Min) / 2.
"""

from __future__ import annotations

from ..units import parse_duration
from .common import TestContext, Tracker, window_summary


def point_name(prefix: str, tc: int, qd: int) -> str:
    return f"{prefix}_tc{tc}_qd{qd}"


def sweep(ctx: TestContext, prefix: str, make_cell) -> dict:
    tcs = sorted({int(x) for x in ctx.settings.get("thread_counts", [1, 2, 4, 8, 16, 32])}, reverse=True)
    qds = sorted({int(x) for x in ctx.settings.get("queue_depths", [1, 2, 4, 8, 16, 32])}, reverse=True)
    cells = [make_cell(point_name(prefix, tc, qd), threads=tc, iodepth=qd) for tc in tcs for qd in qds]
    biggest = cells[0]
    pc_time = parse_duration(ctx.settings.get("precondition_time", "30m"))
    precondition = make_cell(f"{prefix}_precondition", threads=tcs[0], iodepth=qds[0], runtime_s=pc_time,
                             read_pct=0)
    purge = ctx.purge()
    outcome = ctx.run_to_steady_state("", cells, [Tracker(biggest.name, "iops")], precondition=precondition)
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
    return {"purge": purge, "steady": outcome.to_dict(), "points": points, "latency_limit_us": limit_us,
            "operating_points": {"max": max_point["name"], "mid": mid_point["name"], "min": min_point["name"]},
            "max_under_limit": bool(under), "thread_counts": tcs, "queue_depths": qds,
            "units": {"iops": "IO/s (read + write)", "latency": "µs, total latency"}}
