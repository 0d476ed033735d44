"""`ssdpts analyze slc-cache --bw-log FILE [--json]`: the slc-cache test's analysis
(`ssdpts.pts.slc_cache.steps`) run on a fio bandwidth log (`write_bw_log`, ideally with `log_avg_msec`):
lines `time_ms, value_KiB/s, ddir, bs, offset[, prio]`.
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Sequence

from ..inputs import read_text
from ..pts.slc_cache.steps import MIB, durations_from_times


# --- fio bandwidth logs ------------------------------------------------------------------------

def read_bw_log(paths: Sequence[str | Path], bin_s: float | None = None) -> tuple[list[float], list[float], list[float]]:
    """(end times s, MiB/s, durations s) of the writes in fio bandwidth logs (one file per job: summed).

    Averaged logs (`log_avg_msec`): each line is an interval's average KiB/s. Per-I/O logs: give `bin_s`;
    the bytes (the bs column) of each bin are summed. Reads (ddir 0) are ignored when writes are present.
    """
    per_file: list[list[tuple[float, float, int, int]]] = []
    for p in paths:
        rows = []
        for n, line in enumerate(read_text(p, "bandwidth log").splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = [x.strip() for x in line.split(",")]
            try:
                t_ms, val, ddir, bs = float(parts[0]), float(parts[1]), int(parts[2]), int(parts[3])
            except (IndexError, ValueError):
                raise ValueError(f"{p}:{n}: not a fio bandwidth log line "
                                 f"(expected 'time_ms, KiB/s, ddir, bs, offset[, prio]'): {line[:60]!r}") from None
            if not (math.isfinite(t_ms) and math.isfinite(val)) or t_ms < 0 or val < 0:
                raise ValueError(f"{p}:{n}: time and bandwidth must be finite numbers >= 0: {line[:60]!r}")
            if rows and t_ms / 1000.0 < rows[-1][0] and ddir == rows[-1][2]:
                # fio writes each direction's samples in time order: a step back is a concatenated or edited log
                raise ValueError(f"{p}:{n}: time goes backwards ({t_ms:g} ms after {rows[-1][0] * 1000:g} ms); "
                                 "give one job's log per --bw-log, not logs joined together")
            rows.append((t_ms / 1000.0, val, ddir, bs))
        if any(r[2] == 1 for r in rows):
            rows = [r for r in rows if r[2] == 1]
        if not rows:
            raise ValueError(f"{p}: no samples")
        per_file.append(sorted(rows))
    if bin_s:
        bins: dict[int, float] = {}
        for rows in per_file:
            for t, _val, _dd, bs in rows:
                k = int(t // bin_s)
                bins[k] = bins.get(k, 0.0) + bs
        keys = range(0, max(bins) + 1)
        times = [(k + 1) * bin_s for k in keys]
        return times, [bins.get(k, 0.0) / bin_s / MIB for k in keys], [bin_s] * len(times)
    first = [r[0] for r in per_file[0]]
    step = statistics.median([b - a for a, b in zip(first, first[1:])]) if len(first) > 1 else (first[0] or 1.0)
    summed: dict[int, float] = {}
    for rows in per_file:
        for t, val, _dd, _bs in rows:
            k = round(t / step)
            summed[k] = summed.get(k, 0.0) + val
    keys = sorted(summed)
    times = [k * step for k in keys]
    return times, [summed[k] / 1024.0 for k in keys], durations_from_times(times)


def format_text(result: dict) -> str:
    lines = [f"{result['intervals']} intervals of ~{result['interval_s']:g} s, "
             f"{result['written_bytes'] / 2**30:.2f} GiB written"]
    lines.append(f"{'step':>4}  {'start':>9}  {'duration':>9}  {'MiB/s':>9}  {'MB/s':>9}  {'GiB':>8}")
    for s in result["steps"]:
        lines.append(f"{s['index'] + 1:>4}  {s['start_s']:>8.1f}s  {s['duration_s']:>8.1f}s  {s['mib_s']:>9.1f}  "
                     f"{s['mb_s']:>9.1f}  {s['gib']:>8.2f}")
    if result["drop_detected"]:
        lines.append(f"cache estimate: {result['cache_gib']:.2f} GiB ({result['cache_bytes'] / 1e9:.2f} GB) written at "
                     f"{result['cache_speed_mib_s']:.0f} MiB/s before the first drop at {result['first_drop_s']:.1f} s "
                     f"(to {result['after_drop_mib_s']:.0f} MiB/s)")
    else:
        lines.append(f"cache estimate: none — {result.get('note', '')}")
    return "\n".join(lines)
