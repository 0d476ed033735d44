"""Deltas between two health snapshots, and the endurance projection over a series of them.

The one place for the maths, shared by the endurance test, its report and `ssdpts analyze endurance`.

* WAF = Δ media writes / Δ host writes, on deltas of the same counters (Micron: (Δ247 + Δ248) / Δ247).
* Wear rate: least-squares slope of the wear indicator (% of rated life used) against time and
  against host bytes written. Drives report whole percents, so when the indicator is a staircase
  the fit uses the first sample of each new value (where the true wear crossed the step), which
  is unbiased; with fewer than two steps only a bound is given.
* Erase-count increments (seed 002: attribute 173 polled every 5 min, "polls per increment x 5 min"):
  the polls where the whole average erase count first reaches a new value, with the time since the
  previous such poll; resolution is the poll interval.
* Days to end of life = (100 - wear now) / (wear per day); TBW consumed = host bytes written over the
  drive's life (its own counter) / rated TBW; rated TBW = DWPD x capacity x 365 x warranty years.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from ..clock import WALL, Clock
from .record import HealthSnapshot

TB = 1e12
DAY = 86400.0


def _d(a, b):
    return None if a is None or b is None else b - a


def deltas(before: HealthSnapshot | None, after: HealthSnapshot | None) -> dict:
    """What changed between two snapshots (bytes, WAF, wear, errors, temperature), with what is missing."""
    out: dict = {"available": False}
    if before is None or after is None or not before.available or not after.available:
        why = next((s.reason for s in (before, after) if s is not None and not s.available), None)
        out["reason"] = why or "no health snapshot"
        return out
    out["available"] = True
    out["elapsed_s"] = _d(before.timestamp, after.timestamp)
    if before.clock_s is not None and after.clock_s is not None:
        out["elapsed_s"] = after.clock_s - before.clock_s          # simulated time
    for k in ("host_written_bytes", "host_read_bytes", "media_written_bytes", "media_errors", "power_on_hours",
              "erase_count_avg", "unsafe_shutdowns"):
        out[k] = _d(getattr(before, k), getattr(after, k))
    out["wear_percent"] = _d(before.percentage_used, after.percentage_used)
    out["wear_before"], out["wear_after"] = before.percentage_used, after.percentage_used
    out["available_spare"] = _d(before.available_spare, after.available_spare)
    out["temperature_before_c"], out["temperature_after_c"] = before.temperature_c, after.temperature_c
    out["waf"] = waf_between(before, after)
    out["missing"] = sorted(k for k in ("host_written_bytes", "media_written_bytes", "wear_percent", "waf")
                            if out.get(k) is None)
    return out


def waf_between(a: HealthSnapshot, b: HealthSnapshot) -> float | None:
    """Δ media / Δ host of the WAF counters (same unit on both sides), None when unknown or nothing written."""
    for dh, dm in ((_d(a.waf_host_units, b.waf_host_units), _d(a.waf_media_units, b.waf_media_units)),
                   (_d(a.host_written_bytes, b.host_written_bytes), _d(a.media_written_bytes, b.media_written_bytes))):
        if dh is not None and dm is not None:
            return dm / dh if dh > 0 else None
    return None


@dataclass
class EraseIncrement:
    """The first poll that saw the average erase count (ATA 173 and kin) reach a new whole value."""

    count: int                           # the whole erase count reached (P/E cycles)
    t_s: float                           # seconds on the polls' clock (workload seconds in the endurance test)
    host_written_tb: float | None        # TB (10^12 B) the drive counted since the first poll
    steps: int                           # whole counts gained since the previous poll (1 unless polls are sparse)
    polls: int | None                    # polls from the previous increment to this one (None: the first one seen)
    minutes: float | None                # minutes per increment since the previous one (None: the first one seen,
                                         # whose start is not known)


def erase_increments(points: Sequence[HealthSnapshot]) -> list[EraseIncrement]:
    """Every whole step of `erase_count_avg` over health records in time order (each with `t`)."""
    pts = sorted((p for p in points if p.available and p.t is not None and p.erase_count_avg is not None),
                 key=lambda p: p.t)
    if not pts:
        return []
    out: list[EraseIncrement] = []
    level = math.floor(pts[0].erase_count_avg)
    prev_i: int | None = None
    host0 = pts[0].host_written_bytes
    for i, p in enumerate(pts[1:], start=1):
        whole = math.floor(p.erase_count_avg)
        if whole <= level:
            continue
        steps = whole - level
        host = p.host_written_bytes
        out.append(EraseIncrement(
            count=whole, t_s=p.t, host_written_tb=None if host is None or host0 is None else (host - host0) / TB,
            steps=steps, polls=None if prev_i is None else i - prev_i,
            minutes=None if prev_i is None else (p.t - pts[prev_i].t) / 60 / steps))
        level, prev_i = whole, i
    return out


def minutes_per_increment(points: Sequence[HealthSnapshot], increments: Sequence[EraseIncrement]
                          ) -> tuple[float | None, str]:
    """Minutes of polls' time per whole increment of the average erase count, and how it was measured: seed
    002's way (the time from the first whole increment seen to the last, over the counts between) where two
    were seen; else, for a counter that reports fractions (the simulator), its rise over all the polls; else
    (None, why not)."""
    if len(increments) >= 2:
        first, last = increments[0], increments[-1]
        minutes = (last.t_s - first.t_s) / 60 / (last.count - first.count)
        return minutes, (f"{(last.t_s - first.t_s) / 60:,.3g} min from the increment to {first.count} to the "
                         f"one to {last.count}")
    pts = sorted((p for p in points if p.available and p.t is not None and p.erase_count_avg is not None),
                 key=lambda p: p.t)
    if len(pts) >= 2 and any(p.erase_count_avg != math.floor(p.erase_count_avg) for p in pts):
        rise, span = pts[-1].erase_count_avg - pts[0].erase_count_avg, pts[-1].t - pts[0].t
        if rise > 0 and span > 0:
            return span / 60 / rise, (f"the average erase count rose {pts[0].erase_count_avg:.3f} -> "
                                      f"{pts[-1].erase_count_avg:.3f} in {span / 60:,.2f} min (it reports "
                                      "fractions)")
    if not pts:
        return None, "no erase count reported"
    if pts[-1].erase_count_avg <= pts[0].erase_count_avg:
        return None, (f"the average erase count stayed at {pts[0].erase_count_avg:g} over "
                      f"{(pts[-1].t - pts[0].t) / 60:,.1f} min")
    return None, (f"{len(increments)} whole increment(s) seen in {(pts[-1].t - pts[0].t) / 60:,.1f} min: "
                  "two are needed (the first one's start is not known)")


def rated_tbw(rated_tbw_tb: float | None = None, dwpd: float | None = None, warranty_years: float | None = None,
              capacity_bytes: int | None = None) -> float | None:
    """Rated endurance in TB (10^12 bytes): given, or DWPD x capacity x 365 x warranty years."""
    if rated_tbw_tb:
        return float(rated_tbw_tb)
    if dwpd and warranty_years and capacity_bytes:
        return dwpd * capacity_bytes * 365 * warranty_years / TB
    return None


def _fit(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float] | None:
    n = len(xs)
    if n < 2:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx <= 0:
        return None
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return slope, my - slope * mx


def _quantized(ys: Sequence[float]) -> bool:
    return all(float(y).is_integer() for y in ys)


def wear_fit(xs: Sequence[float], ys: Sequence[float]) -> dict:
    """Slope of wear (%) against x; a staircase (whole percents) is fitted on its step points."""
    pts = [(x, y) for x, y in zip(xs, ys) if x is not None and y is not None]
    if len(pts) < 2:
        return {"slope": None, "intercept": None, "method": "too few points", "steps": 0}
    ys_ = [y for _, y in pts]
    if _quantized(ys_):
        steps = [pts[0]] + [p for prev, p in zip(pts, pts[1:]) if p[1] != prev[1]]
        nsteps = len(steps) - 1
        if nsteps >= 2:
            f = _fit([s[0] for s in steps[1:]], [s[1] for s in steps[1:]])
            if f:
                return {"slope": f[0], "intercept": f[1], "method": "step points (whole-percent indicator)",
                        "steps": nsteps}
        span = pts[-1][0] - pts[0][0]
        if nsteps == 1 and span > 0:   # one step seen: at most 2 % per span, at least (step) over span
            return {"slope": (ys_[-1] - ys_[0]) / span, "intercept": ys_[0] - (ys_[-1] - ys_[0]) / span * pts[0][0],
                    "method": "one step of the whole-percent indicator: coarse", "steps": 1}
        if nsteps == 0 and span > 0:
            return {"slope": None, "intercept": None, "upper_slope": 1.0 / span, "steps": 0,
                    "method": "no change of the whole-percent indicator: upper bound of less than 1 % per span"}
        return {"slope": None, "intercept": None, "method": "no spread in x", "steps": nsteps}
    f = _fit([p[0] for p in pts], ys_)
    if f is None:
        return {"slope": None, "intercept": None, "method": "no spread in x", "steps": 0}
    return {"slope": f[0], "intercept": f[1], "method": "least squares", "steps": None}


def project(points: Sequence[HealthSnapshot], *, rated_tbw_tb: float | None = None, dwpd: float | None = None,
            warranty_years: float | None = None, capacity_bytes: int | None = None) -> dict:
    """Endurance projection from health records in time order.

    Each point is a health record plus `t` (seconds on one clock: elapsed workload time, simulated
    time, or the snapshot timestamp). Returns rates, projections, WAF over time and temperatures;
    keys with None are unknown (the reason is in `notes`).
    """
    notes: list[str] = []
    pts = sorted((p for p in points if p.available and p.t is not None), key=lambda p: p.t)
    out: dict = {"points": len(pts), "notes": notes}
    if len(pts) < 2:
        out["available"] = False
        out["reason"] = "at least two health snapshots with health data are needed"
        return out
    first, last = pts[0], pts[-1]
    span = last.t - first.t
    if span <= 0:
        out["available"] = False
        out["reason"] = "the snapshots have no time between them"
        return out
    out["available"] = True
    out["duration_s"] = span
    out["duration_days"] = span / DAY
    cap = capacity_bytes or last.capacity_bytes

    # bytes written
    host = _d(first.host_written_bytes, last.host_written_bytes)
    media = _d(first.media_written_bytes, last.media_written_bytes)
    out["host_written_bytes"] = host
    out["media_written_bytes"] = media
    out["host_tb_per_day"] = host / TB / (span / DAY) if host is not None else None
    out["host_written_tb_lifetime"] = last.host_written_bytes / TB if last.host_written_bytes is not None else None
    if out["host_tb_per_day"] is not None and cap:
        out["drive_writes_per_day"] = out["host_tb_per_day"] * TB / cap
    if host is None:
        notes.append("the drive reports no host-write counter: no wear per TB, no TBW")

    # WAF: overall and per interval
    out["waf"] = waf_between(first, last)
    series = []
    for a, b in zip(pts, pts[1:]):
        w = waf_between(a, b)
        if w is not None:
            series.append({"t": b.t, "waf": w})
    out["waf_series"] = series
    if out["waf"] is None:
        notes.append("no media (NAND) write counter on this drive: WAF unknown")

    # wear
    ts = [p.t for p in pts]
    wear = [p.percentage_used for p in pts]
    out["wear_start"], out["wear_end"] = wear[0], wear[-1]
    out["wear_delta"] = _d(wear[0], wear[-1])
    tfit = wear_fit(ts, wear)
    out["wear_fit_time"] = tfit
    out["wear_per_day"] = tfit["slope"] * DAY if tfit.get("slope") is not None else None
    if wear[-1] is None:
        notes.append("the drive reports no wear indicator (percentage used / life left)")
    hb = [None if p.host_written_bytes is None or first.host_written_bytes is None
          else (p.host_written_bytes - first.host_written_bytes) / TB for p in pts]
    bfit = wear_fit(hb, wear)
    out["wear_fit_tb"] = bfit
    out["wear_per_tb"] = bfit.get("slope")
    current = wear[-1]
    out["days_to_eol"] = out["days_to_eol_min"] = out["tb_to_eol"] = None
    if current is not None:
        left = max(0.0, 100.0 - current)
        if out["wear_per_day"] and out["wear_per_day"] > 0:
            out["days_to_eol"] = left / out["wear_per_day"]
        elif tfit.get("upper_slope"):
            out["days_to_eol_min"] = max(0.0, left - 1) / (tfit["upper_slope"] * DAY)
            notes.append(f"the wear indicator did not change in {span / DAY:.3g} days: end of life is at least "
                         f"{out['days_to_eol_min']:.3g} days away at this load")
        if out["wear_per_tb"] and out["wear_per_tb"] > 0:
            out["tb_to_eol"] = left / out["wear_per_tb"]
        if tfit.get("method", "").startswith("one step"):
            notes.append("only one step of the whole-percent wear indicator was seen: the projection is coarse")

    # the recent rate (last half of the observation): the drive past its fresh-out-of-box phase
    half = [p for p in pts if p.t >= first.t + span / 2]
    out["wear_per_day_recent"] = out["days_to_eol_recent"] = None
    if len(half) >= 4 and current is not None and not _quantized([p.percentage_used for p in half
                                                                    if p.percentage_used is not None] or [0]):
        rfit = wear_fit([p.t for p in half], [p.percentage_used for p in half])
        if rfit.get("slope"):
            out["wear_per_day_recent"] = rfit["slope"] * DAY
            if rfit["slope"] > 0:
                out["days_to_eol_recent"] = max(0.0, 100.0 - current) / out["wear_per_day_recent"]

    # rated endurance
    rated = rated_tbw(rated_tbw_tb, dwpd, warranty_years, cap)
    out["rated_tbw_tb"] = rated
    out["tbw_used_percent"] = out["days_to_rated_tbw"] = None
    if rated:
        life = out["host_written_tb_lifetime"]
        if life is not None:
            out["tbw_used_percent"] = 100.0 * life / rated
            if out["host_tb_per_day"]:
                out["days_to_rated_tbw"] = max(0.0, rated - life) / out["host_tb_per_day"]
    # the drive's own wear per TB projects its TBW with or without a rated figure to set it beside
    out["projected_tbw_tb"] = 100.0 / out["wear_per_tb"] if out["wear_per_tb"] and out["wear_per_tb"] > 0 else None

    # temperature
    temps = [p.temperature_c for p in pts if p.temperature_c is not None]
    out["temperature_c"] = ({"min": min(temps), "max": max(temps), "mean": sum(temps) / len(temps),
                             "last": temps[-1]} if temps else None)
    return out


def seconds_text(days: float | None, clock: Clock = WALL) -> str:
    """A span given in days, in the unit that reads best, on `clock` ("10.0 simulated minutes")."""
    if days is None:
        return "–"
    if days >= 365 * 2:
        return f"{days:,.0f} {clock.unit('days')} ({days / 365:.1f} {clock.unit('years')})"
    if days >= 2:
        return f"{days:,.1f} {clock.unit('days')}"
    if days * 24 >= 1:
        return f"{days * 24:,.2f} {clock.unit('hours')}"
    if days * 1440 >= 1:
        return f"{days * 1440:,.1f} {clock.unit('minutes')}"
    return f"{days * DAY:,.1f} {clock.unit('seconds')}"


def summary_lines(p: dict, clock: Clock = WALL) -> list[tuple[str, str]]:
    """The projection as (label, text) pairs: the CLI, the analyzer and the report print the same; every span
    and rate on `clock` (a simulated drive's: "simulated minutes", "%/simulated day")."""
    day = clock.unit("day")

    def span(days: float | None) -> str:
        return seconds_text(days, clock)

    if not p.get("available"):
        return [("projection", f"not available: {p.get('reason')}")]

    def num(v, fmt, unit=""):
        return "–" if v is None else f"{format(v, fmt)}{unit}"

    rows = [
        ("observed", f"{span(p['duration_days'])}, {p['points']} snapshots"),
        ("host written", num(p["host_written_bytes"] and p["host_written_bytes"] / TB, ".4g", " TB")
         + (f" ({p['host_tb_per_day']:.4g} TB/{day}" + (f", {p['drive_writes_per_day']:.3g} drive writes/{day}"
                                                       if p.get("drive_writes_per_day") else "") + ")"
            if p.get("host_tb_per_day") is not None else "")),
        ("media (NAND) written", num(p["media_written_bytes"] and p["media_written_bytes"] / TB, ".4g", " TB")),
        ("WAF", num(p["waf"], ".3f")),
        ("wear", f"{num(p['wear_start'], '.4g', ' %')} -> {num(p['wear_end'], '.4g', ' %')}"),
        ("wear per day", num(p["wear_per_day"], ".4g", f" %/{day}")),
        ("wear per TB written", num(p["wear_per_tb"], ".4g", " %/TB")),
        ("days to end of life", span(p["days_to_eol"]) if p["days_to_eol"] is not None else
         (f">= {span(p['days_to_eol_min'])}" if p.get("days_to_eol_min") is not None else "–")),
        ("TB to end of life", num(p["tb_to_eol"], ",.4g", " TB")),
    ]
    if p.get("days_to_eol_recent") is not None:
        rows.insert(-1, ("at the recent rate", f"{p['wear_per_day_recent']:.4g} %/{day} (last half of the observation): "
                                              f"end of life in {span(p['days_to_eol_recent'])}"))
    if p.get("rated_tbw_tb"):
        rows.append(("rated TBW", f"{p['rated_tbw_tb']:,.4g} TB; consumed {num(p['tbw_used_percent'], '.3g', ' %')}"
                     f" ({num(p['host_written_tb_lifetime'], ',.4g', ' TB')} written over the drive's life)"))
        rows.append(("days to rated TBW", span(p["days_to_rated_tbw"])))
        if p.get("projected_tbw_tb"):
            rows.append(("TBW at 100 % wear", f"{p['projected_tbw_tb']:,.4g} TB (from wear per TB)"))
    t = p.get("temperature_c")
    if t:
        rows.append(("temperature", f"{t['min']:.0f}..{t['max']:.0f} °C (mean {t['mean']:.1f}, last {t['last']:.0f})"))
    for n in p.get("notes") or []:
        rows.append(("note", n))
    return rows
