"""fio's averaged per-interval logs (log_avg_msec with write_iops_log / write_lat_log) as a cell's intervals,
in the shape the simulator reports them: {t_ns (end of the interval from the cell's start), read_ios, write_ios,
lat_mean_ns}. Every thread of a job writes its own file (NAME_iops.1.log, NAME_iops.2.log ...); the intervals
sum the threads' IOPS and weight their mean latencies by their IOPS (an I/O-weighted mean).

A line: "time ms, value, direction (0 read, 1 write, 2 trim), block size, offset[, priority]"; with
log_avg_msec the value is the interval's average (IOPS, or latency in ns). fio stamps each entry at the end of
its interval with a few ms of jitter, so entries are put in the nearest interval slot."""

from __future__ import annotations

import re


def _entries(logs: dict[str, str], name: str, kind: str) -> list[tuple[str, int, float, int]]:
    """(thread, time ms, value, direction) of NAME_KIND.N.log files; a remote fio client appends the host
    (NAME_KIND.N.log.HOST): thread N of each host is a thread of its own."""
    pattern = re.compile(rf"^{re.escape(name)}_{kind}\.(\d+\.log(?:\..+)?)$")
    out = []
    for fname, text in logs.items():
        m = pattern.match(fname)
        if not m:
            continue
        for line in text.splitlines():
            parts = [p.strip() for p in line.split(",")]
            if len(parts) < 3:
                continue
            try:
                out.append((m.group(1), int(parts[0]), float(parts[1]), int(parts[2])))
            except ValueError:
                continue
    return out


def intervals_from_logs(logs: dict[str, str], name: str, interval_ms: int) -> list[dict]:
    """The cell's intervals from its logs; empty when fio wrote no IOPS log for it."""
    iops = _entries(logs, name, "iops")
    if not iops or interval_ms <= 0:
        return []
    lat = _entries(logs, name, "lat")
    start = min(t for _, t, _, _ in iops + lat) - interval_ms     # the first entry closes the first interval

    def slot(t: int) -> int:
        return max(0, round((t - start) / interval_ms) - 1)

    seconds = interval_ms / 1000
    slots: dict[int, dict] = {}
    rate: dict[tuple[str, int, int], float] = {}      # (thread, slot, direction) -> IOPS: the weight of its latency
    for thread, t, value, ddir in iops:
        if ddir not in (0, 1):
            continue
        iv = slots.setdefault(slot(t), {"read_ios": 0.0, "write_ios": 0.0, "lat": []})
        iv["read_ios" if ddir == 0 else "write_ios"] += value * seconds
        rate[(thread, slot(t), ddir)] = value
    for thread, t, value, ddir in lat:
        iv = slots.get(slot(t))
        if iv is not None and ddir in (0, 1):
            iv["lat"].append((value, rate.get((thread, slot(t), ddir), 0.0)))

    def mean_ns(lat: list[tuple[float, float]]) -> float | None:
        """I/O-weighted over the threads (and directions) that did I/O in the interval; plain mean without rates."""
        weight = sum(w for _, w in lat)
        if weight > 0:
            return sum(v * w for v, w in lat) / weight
        return sum(v for v, _ in lat) / len(lat) if lat else None

    return [{"t_ns": (k + 1) * interval_ms * 1_000_000, "read_ios": iv["read_ios"], "write_ios": iv["write_ios"],
             "lat_mean_ns": mean_ns(iv["lat"])} for k, iv in sorted(slots.items())]
