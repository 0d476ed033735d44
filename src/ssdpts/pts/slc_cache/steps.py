"""SLC-cache sizing from a long sequential write: find the bandwidth plateaus and the bytes before the drop.

A drive with an SLC write cache writes at the cache's speed until the cache is full, then drops to
the native (TLC/QLC) speed, often a second time when it starts folding the cache while writing
(seed 000: 2100 MiB/s for 32 s, 700 MiB/s, then 500 MiB/s after 11 min -> ~65.6 GiB of cache).

Pure functions, no I/O (the slc-cache test runs them on its streamed intervals; `ssdpts analyze slc-cache`
on a fio bandwidth log, read by `ssdpts.analyze.slc_cache.read_bw_log`):

* `find_steps(times, mibs)` -> the plateaus (change points by binary segmentation on a median-filtered
  copy of the series; a split is kept only if the two sides' levels differ by at least `min_drop` of
  the higher one and each side has `min_points` intervals; neighbouring plateaus closer than that are
  merged);
* `estimate(times, mibs)` -> the steps plus the cache size: the bytes written before the first drop.
  The interval that straddles the drop is split by its average (a piecewise-constant model), so the
  estimate is not quantised to whole intervals.

`times` are the END times of the intervals in seconds from the start (as fio logs them); durations are
their differences (the first interval starts at 0). Bandwidth is MiB/s (2^20 bytes/s).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

MIB = 2**20
DEFAULT_MIN_DROP = 0.15      # plateaus must differ by >= 15 % of the higher one
DEFAULT_MIN_POINTS = 3       # ... and last >= 3 intervals


@dataclass
class Step:
    """One plateau of the bandwidth series."""

    index: int
    first: int                 # first interval (index into the series)
    last: int                  # last interval, inclusive
    start_s: float
    end_s: float
    mib_s: float               # bytes / duration over the plateau
    median_mib_s: float        # the level used to detect and split drops (robust to spikes)
    bytes: float               # bytes written during the plateau's intervals

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s

    def to_dict(self) -> dict:
        d = asdict(self)
        d["duration_s"] = self.duration_s
        d["mb_s"] = self.mib_s * MIB / 1e6
        d["gib"] = self.bytes / 2**30
        return d


def _median(values: Sequence[float]) -> float:
    import statistics     # here: validating a profile reads this module's defaults, not its arithmetic
    return statistics.median(values)


def durations_from_times(times: Sequence[float]) -> list[float]:
    """Interval lengths from interval end times; the first interval starts at 0 (or is as long as the
    median interval when the first time stamp is not positive)."""
    t = [float(x) for x in times]
    if not t:
        return []
    diffs = [b - a for a, b in zip(t, t[1:])]
    first = t[0] if t[0] > 0 else (_median(diffs) if diffs else 1.0)
    return [first] + diffs


def rebin(times: Sequence[float], mibs: Sequence[float], durations: Sequence[float],
          interval: float) -> tuple[list[float], list[float], list[float]]:
    """Merge consecutive short intervals into bins of about `interval` seconds (exact bytes / time).

    Intervals that are already >= 3/4 of `interval` long pass through unchanged.
    """
    out_t, out_v, out_d = [], [], []
    acc_b = acc_d = 0.0
    for t, v, d in zip(times, mibs, durations):
        acc_b += float(v) * float(d)
        acc_d += float(d)
        if acc_d >= 0.75 * interval:
            out_t.append(float(t))
            out_v.append(acc_b / acc_d if acc_d > 0 else 0.0)
            out_d.append(acc_d)
            acc_b = acc_d = 0.0
    if acc_d > 0:
        out_t.append(float(times[-1]))
        out_v.append(acc_b / acc_d)
        out_d.append(acc_d)
    return out_t, out_v, out_d


def _median_filter(v: Sequence[float], half: int = 1) -> list[float]:
    n = len(v)
    return [_median(v[max(0, i - half):min(n, i + half + 1)]) for i in range(n)]


def _best_split(x: Sequence[float], lo: int, hi: int, min_points: int) -> int | None:
    """k in (lo, hi) minimising the squared error of two constant pieces [lo, k) and [k, hi)."""
    if hi - lo < 2 * min_points:
        return None
    s = s2 = 0.0
    pre, pre2 = [0.0], [0.0]
    for a in x[lo:hi]:
        s += a
        s2 += a * a
        pre.append(s)
        pre2.append(s2)
    n = hi - lo

    def sse(i: int, j: int) -> float:
        m = j - i
        return pre2[j] - pre2[i] - (pre[j] - pre[i]) ** 2 / m

    best, best_k = None, None
    for k in range(min_points, n - min_points + 1):
        c = sse(0, k) + sse(k, n)
        if best is None or c < best - 1e-12:
            best, best_k = c, k
    return lo + best_k if best_k is not None else None


def _differ(a: float, b: float, min_drop: float) -> bool:
    hi = max(abs(a), abs(b))
    return hi > 0 and abs(a - b) >= min_drop * hi


def find_steps(times: Sequence[float], mibs: Sequence[float], *, durations: Sequence[float] | None = None,
               min_drop: float = DEFAULT_MIN_DROP, min_points: int = DEFAULT_MIN_POINTS) -> list[Step]:
    """The plateaus of a bandwidth series (see the module doc). An empty series has no steps."""
    v = [float(x) for x in mibs]
    n = len(v)
    if len(times) != n:
        raise ValueError(f"times ({len(times)}) and bandwidths ({n}) differ in length")
    if not n:
        return []
    d = [float(x) for x in durations] if durations is not None else durations_from_times(times)
    if len(d) != n:
        raise ValueError("durations and bandwidths differ in length")
    smooth = _median_filter(v, 1)

    def level(i: int, j: int) -> float:
        return _median(smooth[i:j])

    cuts: list[int] = []
    todo = [(0, n)]
    while todo:
        lo, hi = todo.pop()
        k = _best_split(smooth, lo, hi, min_points)
        if k is None or not _differ(level(lo, k), level(k, hi), min_drop):
            continue
        cuts.append(k)
        todo += [(lo, k), (k, hi)]
    # merge neighbours that ended up closer than min_drop (a split can look big before its sides split)
    bounds = [0] + sorted(cuts) + [n]
    changed = True
    while changed and len(bounds) > 2:
        changed = False
        for i in range(1, len(bounds) - 1):
            if not _differ(level(bounds[i - 1], bounds[i]), level(bounds[i], bounds[i + 1]), min_drop):
                del bounds[i]
                changed = True
                break
    ends = [float(t) for t in times]
    steps = []
    for idx, (a, b) in enumerate(zip(bounds, bounds[1:])):
        dur = sum(d[a:b])
        byt = sum(v[i] * d[i] for i in range(a, b)) * MIB
        steps.append(Step(index=idx, first=a, last=b - 1, start_s=ends[a] - d[a], end_s=ends[b - 1],
                          mib_s=byt / MIB / dur if dur > 0 else 0.0, median_mib_s=level(a, b), bytes=byt))
    return steps


def estimate(times: Sequence[float], mibs: Sequence[float], *, durations: Sequence[float] | None = None,
             min_drop: float = DEFAULT_MIN_DROP, min_points: int = DEFAULT_MIN_POINTS) -> dict:
    """Steps and the cache size (bytes written before the first drop) of a sequential-write series."""
    v = [float(x) for x in mibs]
    d = [float(x) for x in durations] if durations is not None else durations_from_times(times)
    steps = find_steps(times, v, durations=d, min_drop=min_drop, min_points=min_points)
    written = sum(a * b for a, b in zip(v, d)) * MIB
    out = {"steps": [s.to_dict() for s in steps], "written_bytes": written, "intervals": len(v),
           "interval_s": _median(d) if d else None, "min_drop": min_drop, "min_points": min_points,
           "drop_detected": False, "cache_bytes": None, "cache_gib": None, "first_drop_s": None,
           "cache_speed_mib_s": steps[0].mib_s if steps else None, "after_drop_mib_s": None}
    drop = next((j for j in range(1, len(steps)) if steps[j].median_mib_s < steps[j - 1].median_mib_s), None)
    if drop is None:
        # a plateau needs min_points intervals: a cache written in less time cannot be seen at this interval
        smallest = min_points * (_median(d) if d else 0.0) * (v[0] if v else 0.0) * MIB
        out["note"] = ("no drop: the whole write ran at one speed (no SLC cache larger than the "
                       f"{smallest / 2**20:,.0f} MiB that {min_points} intervals hold at the first one's speed, nor "
                       f"smaller than the {written / 2**30:.2f} GiB written; a smaller cache needs a finer "
                       "interval)" if steps else "no data")
        return out
    before, after = steps[drop - 1], steps[drop]
    h, l = before.median_mib_s, after.median_mib_s
    k = after.first
    mib = sum(v[i] * d[i] for i in range(0, k - 1))
    # the drop happens inside interval k-1 or k: count only its part at the cache speed
    for i in (k - 1, k):
        f = min(1.0, max(0.0, (v[i] - l) / (h - l)))
        if i == k - 1 and f >= 0.9:
            mib += v[i] * d[i]           # a full cache-speed interval (noise below the level included)
        elif not (i == k and f <= 0.1):
            mib += h * f * d[i]
    ends = [float(t) for t in times]
    out.update(drop_detected=True, cache_bytes=mib * MIB, cache_gib=mib * MIB / 2**30,
               first_drop_s=ends[k - 1] - d[k - 1] + (d[k - 1] * min(1.0, max(0.0, (v[k - 1] - l) / (h - l)))),
               cache_speed_mib_s=before.mib_s if drop == 1 else sum(s.bytes for s in steps[:drop]) / MIB /
               max(1e-12, sum(s.duration_s for s in steps[:drop])),
               after_drop_mib_s=after.mib_s)
    return out
