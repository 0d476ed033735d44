"""Vendor claims (a small TOML file) against measured results. Keys are documented in docs/report.md.

Vendors quote sequential speed in MB/s (10^6 B/s); ssdpts measures MiB/s (2^20 B/s). The table shows
both, e.g. "4857.4 MiB/s (claimed 4768.4)" next to "5093.4 MB/s (claimed 5000)".
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from markupsafe import Markup, escape

from ..errors import SsdptsError
from ..inputs import read_toml
from ..pts import registry
from ..pts.bs_sweep.summary import BsSweepSummary, SweepCell
from ..pts.dirth.summary import DirthSummary
from ..pts.endurance.summary import EnduranceSummary
from ..pts.fresh_peak.summary import FreshPeakSummary, PeakResult
from ..pts.iops.summary import IopsSummary
from ..pts.lat_iops.summary import LatIopsSummary
from ..pts.latency.summary import LatencySummary
from ..results import Latency, SteadyResult
from ..pts.throughput.summary import ThroughputSummary
from ..pts.wsat.run import WORKLOADS as WSAT_WORKLOADS
from ..pts.wsat.summary import WsatSummary
from ..store import Store
from ..units import bs_label, parse_size
from ..render.toolkit import Artifacts, Cell

# claim key suffix -> the measured statistic (µs); percentiles as fio names them ("99.9")
LAT_STATS = {"mean": lambda lat: lat.mean_us, "max": lambda lat: lat.max_us,
             **{f"p{q.replace('.', '_')}": (lambda lat, q=q: lat.p(q)) for q in ("99", "99.9", "99.99", "99.999")}}
BASES = {"fob": "fresh out of box (fresh-peak test)", "steady": "steady state",
         "saturated": "saturated (WSAT final level: mean of its last intervals)"}
WHOLE = "whole number"      # a type marker: a positive integer (queue depth, threads)
INFO = {"power_w": float, "power_idle_w": float, "temperature_range": str, "weight_g": float, "form_factor": str,
        "warranty_years": float, "interface": str, "capacity": str, "sector_size": str, "nand": str,
        "error_rate": str}
SECTIONS = {
    "drive": {"model": str, "source": str, "notes": str},
    "sequential": {"block_size": str, "read_mb_s": float, "write_mb_s": float, "basis": str},
    "random": {"block_size": str, "read_iops": float, "write_iops": float, "mixed_iops": float,
               "mixed_read_pct": int, "measured_read_pct": int, "basis": str},
    "latency": {"block_size": str, **{f"{d}_{s}_us": float for d in ("read", "write") for s in LAT_STATS},
                "basis": str},
    # a high-QD latency point: DIRTH's sweep point (or lat-iops's) at this block size, mix and queue depth
    "latency_point": {"block_size": str, "read_pct": int, "queue_depth": WHOLE, "threads": WHOLE,
                      **{f"{d}_{s}_us": float for d in ("read", "write") for s in LAT_STATS}},
    "endurance": {"tbw": float, "dwpd": float, "warranty_years": float},
    "info": INFO,
}
SINGLE = ("drive", "endurance", "info")     # one table each, not an array of tables
JUDGED = ("sequential", "random", "latency", "latency_point", "endurance")


def _err(path, msg: str) -> SsdptsError:
    return SsdptsError(f"claims file {path}: {msg}; see docs/report.md for the keys")


def load_claims(path: str | Path) -> dict:
    """Parse and validate; returns {section: [table, ...]} with numbers as floats/ints."""
    path = Path(path)
    raw = read_toml(path, "claims file")
    out: dict = {}
    for sec, val in raw.items():
        if sec not in SECTIONS:
            raise _err(path, f"unknown section [{sec}] (allowed: {', '.join(SECTIONS)})")
        tables = val if isinstance(val, list) else [val]
        if sec in SINGLE and isinstance(val, list):
            raise _err(path, f"[{sec}] must be a single table")
        norm = []
        for i, t in enumerate(tables):
            where = f"[{sec}]" if len(tables) == 1 else f"[[{sec}]] #{i + 1}"
            if not isinstance(t, dict):
                raise _err(path, f"{sec} must be a table")
            clean = {}
            for k, v in t.items():
                typ = SECTIONS[sec].get(k)
                if typ is None:
                    raise _err(path, f"unknown key {k!r} in {where} (allowed: {', '.join(SECTIONS[sec])})")
                if typ is str:
                    if not isinstance(v, str):
                        raise _err(path, f"{where} {k} must be a string, not {v!r}")
                    if k == "block_size":
                        parse_size(v, f"{where} block_size")
                    if k == "basis" and v not in BASES:
                        raise _err(path, f"{where} basis {v!r} is not one of {', '.join(BASES)}")
                elif typ is WHOLE:
                    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                        raise _err(path, f"{where} {k} must be a whole number >= 1, not {v!r}")
                elif typ is int:
                    if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= 100:
                        raise _err(path, f"{where} {k} must be a whole percentage 0..100, not {v!r}")
                else:
                    if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
                        raise _err(path, f"{where} {k} must be a positive number, not {v!r}")
                    v = float(v)
                clean[k] = v
            if sec == "random" and ("mixed_iops" in clean) != ("mixed_read_pct" in clean):
                raise _err(path, f"{where}: mixed_iops and mixed_read_pct go together")
            if sec == "random" and "measured_read_pct" in clean and "mixed_iops" not in clean:
                raise _err(path, f"{where}: measured_read_pct needs mixed_iops")
            if sec == "latency_point" and not {"block_size", "read_pct", "queue_depth"} <= set(clean):
                raise _err(path, f"{where}: block_size, read_pct and queue_depth are required")
            norm.append(clean)
        out[sec] = norm[0] if sec in SINGLE else norm
    if not any(k in out for k in JUDGED + ("info",)):
        raise _err(path, "no claims: add a [sequential], [random], [latency], [[latency_point]], [endurance] "
                         "or [info] table")
    return out


def claimed_write_speed(claims: dict) -> float | None:
    """The highest sequential write speed a loaded claims file names, in bytes/s (its MB/s are 10^6 B/s)."""
    speeds = [t["write_mb_s"] for t in claims.get("sequential", []) if "write_mb_s" in t]
    return max(speeds) * 1e6 if speeds else None


def _summaries(store: Store, run: dict) -> dict:
    """name -> typed summary of every test of the run that stored one (decoded by its registered spec)."""
    out = {}
    for t in store.tests(run["id"]):
        spec = registry.find(t["name"])
        if spec is not None and t.get("summary"):
            out[t["name"]] = spec.decode(t["summary"])
    return out


@dataclass
class Figure:
    """One measured figure a claim can be compared with, where it comes from, and whether its basis was reached:
    a claim is judged only against a figure whose basis was (docs/report.md "Claims by basis")."""

    value: float | None
    mb_s: float | None = None           # sequential figures: the same in decimal MB/s
    source: str = ""                    # e.g. "WSAT rnd4k-write final level"
    reached: bool = False               # the drive was in the basis's state when the figure was measured
    how: str = ""                       # how it was reached, or why not: "not reached: WSAT wrote 0.36 of 4 fills"
    steady_reached: bool | None = None  # the steady state of the figure's own test; None: that test judges none


def _steady_state(steady: SteadyResult, test: str) -> str:
    """How a steady-state loop reached its window, or that it did not."""
    w = steady.window_rounds
    return (f"reached: {test} steady state" + (f", window rounds {w[0]}–{w[-1]}" if w else "") if steady.reached else
            f"not reached: {test} steady state not reached in {steady.rounds} rounds")


def _steady_figure(value: float | None, steady: SteadyResult | None, test: str, mb_s: float | None = None) -> Figure:
    """A figure of a steady-state test's window: its basis is reached when that test's loop reached steady state."""
    if value is None or steady is None:
        return Figure(value, mb_s, how="not reached: no steady-state judgement stored" if value is not None else "")
    return Figure(value, mb_s, reached=steady.reached, how=_steady_state(steady, test), steady_reached=steady.reached)


def _fresh(fp: FreshPeakSummary | None, rw: str, bs: int | None, sequential: bool = False) -> Figure:
    """The fresh-peak figure of `rw` at block size `bs` (IOPS; MiB/s and MB/s when `sequential`), if this run
    measured one: fresh out of box is reached by the purge the test's cells follow."""
    r: PeakResult | None = fp.result(rw) if fp is not None and bs is not None and fp.block_size == bs else None
    if r is None:
        return Figure(None)
    purge = fp.purge.method + ("" if fp.purge.snia_purge else ", not a SNIA purge")
    return Figure(r.mib_s if sequential else r.iops, r.mb_s if sequential else None, reached=True,
                  how=f"reached: fresh-peak cells right after a purge ({purge})")


def _fresh_or_swept(fp: FreshPeakSummary | None, sweep: BsSweepSummary | None, rw: str, bs: int | None,
                    sequential: bool = False) -> tuple[Figure, str]:
    """The fresh-out-of-box figure: the fresh-peak test's, else the block-size sweep's fresh cell (seed 002's four
    fio jobs after a purge); and, for the sweep's, where it comes from (or why the sweep has none)."""
    fresh = _fresh(fp, rw, bs, sequential)
    if fresh.value is not None or not rw:
        return fresh, ""
    cell, how = _swept(sweep, rw, bs)
    if cell is None:
        return fresh, how
    return Figure(cell.mib_s if sequential else cell.iops, cell.mb_s if sequential else None, reached=True,
                  how=f"reached: {how}", source=how), how


def _with_basis(row: dict, fresh: Figure, steady: Figure, basis: str | None = None,
                saturated: Figure | None = None, missing: str = "") -> dict:
    """measured = the figure of the claim's `basis`; without one, the fresh-out-of-box figure when there is one
    (what "up to" means), else the steady one. A basis the run lacks reads "not measured" (and `missing`: why); one
    it measured but did not reach is not judged (`reached` False, `reason` says why). A fresh-out-of-box figure that
    is not the fresh-peak test's names its source."""
    figures = {"fob": fresh, "steady": steady, "saturated": saturated or Figure(None)}
    fob = f"fresh out of box: {fresh.source}" if fresh.source else BASES["fob"]
    why = f" ({missing})" if missing else ""
    if basis is None:
        chosen = "fob" if fresh.value is not None else "steady"
        text = fob if fresh.value is not None else (
            "steady state (no fresh-out-of-box result in this run)" if steady.value is not None else
            "not measured" + why)
    else:
        chosen = basis
        text = (fob if basis == "fob" else BASES[basis] + (f": {figures[basis].source}" if figures[basis].source
                                                          else "")) + (
            " (the claim's basis)" if figures[basis].value is not None else " — not measured in this run" + why)
    f = figures[chosen]
    row.update(measured=f.value, basis=text, basis_key=chosen if f.value is not None else None, fresh=fresh.value,
               steady=steady.value, saturated=saturated.value if saturated else None,
               **_reached(f.value, f.reached, f.how), steady_reached=f.steady_reached,
               steady_figure_reached=steady.steady_reached)
    if "claimed_mb_s" in row:
        row["measured_mb_s"] = f.mb_s
    return row


def _reached(measured: float | None, reached: bool, how: str) -> dict:
    """A row's `reached` (None: not measured) and `reason`: how its basis was reached, or why it was not."""
    return {"reached": reached if measured is not None else None, "reason": how if measured is not None else
            "not measured"}


def _swept(sweep: BsSweepSummary | None, rw: str, bs: int | None) -> tuple[SweepCell | None, str]:
    """The block-size sweep's fresh cell of `rw` at `bs` (seed 002's four fio jobs, after a purge): a
    fresh-out-of-box figure where the run has no fresh-peak test; else None and why not."""
    if sweep is None:
        return None, ""
    cell = sweep.cell("fresh", rw, bs) if bs is not None and "fresh" in sweep.states else None
    if cell is None:
        ran = ", ".join(bs_label(b) for b in sweep.block_sizes)
        return None, (f"its bs-sweep ran {rw} at {ran} only" if bs is not None and "fresh" in sweep.states else
                      "its bs-sweep has no fresh state")
    fill = ", one sequential pass" if sweep.fresh_fill else ""
    return cell, f"bs-sweep fresh state (after the purge{fill}), {rw} at TC{sweep.threads}/QD{sweep.iodepth}"


def _sequential_rows(tp: ThroughputSummary | None, fp: FreshPeakSummary | None, claims: list[dict],
                     sweep: BsSweepSummary | None = None) -> list[dict]:
    rows = []
    for c in claims:
        if "block_size" in c:
            bs = parse_size(c["block_size"])
        elif tp:   # no block size claimed: the largest measured one (vendors quote their best sequential figure)
            bs = max((r.block_size for r in tp.block_sizes), default=None)
        else:
            bs = max(sweep.block_sizes, default=None) if sweep else None
        r = tp.at(bs) if tp and bs is not None else None
        measured = {"read": (r.read_mib_s, r.read_mb_s) if r else (None, None),
                    "write": (r.write_mib_s, r.write_mb_s) if r else (None, None)}
        for d, (mib_s, mb_s) in measured.items():
            if f"{d}_mb_s" in c:
                fresh, how = _fresh_or_swept(fp, sweep, d, bs, sequential=True)
                rows.append(_with_basis(
                    {"what": f"SEQ {bs_label(bs) if bs is not None else '?'} {d}", "unit": "MiB/s",
                     "claimed": c[f"{d}_mb_s"] * 1e6 / 2**20, "claimed_mb_s": c[f"{d}_mb_s"], "better": "higher"},
                    fresh, _steady_figure(mib_s, r.steady if r else None, "Throughput", mb_s), c.get("basis"),
                    missing=_missing("throughput", tp is not None, how)))
    return rows


def _missing(test: str, ran: bool, swept: str) -> str:
    """Why a claim has no figure: the test that measures it did not run here (or not at its block size, mix),
    and what the block-size sweep had instead."""
    return ("this run has no " + test + " test" if not ran else f"its {test} test has no cell for it") + (
        f"; {swept}" if swept else "")


def _saturated(wsat: WsatSummary | None, bs: int, read_pct: int | None) -> Figure:
    """WSAT's final level of the workload at this block size and mix (Intel's "saturated" basis), if it ran: reached
    when WSAT ran to the spec's stop or levelled off after leaving its fresh level (WsatWorkload.saturation)."""
    for name, w in (wsat.workloads.items() if wsat else ()):
        spec = WSAT_WORKLOADS.get(name)
        if spec and spec[0].startswith("rand") and (spec[1], spec[2]) == (bs, read_pct):
            sat, last = w.saturation, w.steady_state_of_last_window
            return Figure(w.final_iops, source=f"WSAT {name} final level", reached=sat.reached, how=sat.how,
                          steady_reached=None if last is None else last.reached)
    return Figure(None, source=f"no WSAT workload at RND {bs_label(bs)} {read_pct}/{100 - (read_pct or 0)}")


def _random_rows(iops: IopsSummary | None, fp: FreshPeakSummary | None, wsat: WsatSummary | None,
                 claims: list[dict], sweep: BsSweepSummary | None = None) -> list[dict]:
    rows = []
    for c in claims:
        bs = parse_size(c.get("block_size", "4k"))
        for key, pct in (("read_iops", 100), ("write_iops", 0), ("mixed_iops", c.get("mixed_read_pct"))):
            if key in c:
                what = f"RND {bs_label(bs)} {pct}/{100 - pct}"
                if key == "mixed_iops" and "measured_read_pct" in c:   # a nearby mix, only when the file says so
                    pct = c["measured_read_pct"]
                    what += f" (compared at {pct}/{100 - pct}: measured_read_pct)"
                steady = _steady_figure(iops.iops(bs, pct) if iops else None, iops.steady if iops else None, "IOPS")
                fresh, how = _fresh_or_swept(fp, sweep, {"read_iops": "randread", "write_iops": "randwrite"}.get(key, ""),
                                             bs)
                rows.append(_with_basis({"what": what, "unit": "IOPS", "claimed": c[key], "better": "higher"},
                                        fresh, steady, basis=c.get("basis"), saturated=_saturated(wsat, bs, pct),
                                        missing=_missing("IOPS", iops is not None, how)))
    return rows


def _latency_rows(lat: LatencySummary | None, claims: list[dict]) -> list[dict]:
    rows = []
    for c in claims:
        bs = parse_size(c.get("block_size", "4k"))
        for d, pct in (("read", 100), ("write", 0)):
            measured: Latency | None = lat.latency(bs, pct, d) if lat else None
            for s, value in LAT_STATS.items():
                if f"{d}_{s}_us" in c:
                    # latency claims are QD1 figures: the Latency test (TC1/QD1), not the high-QD fresh peak
                    m = value(measured) if measured else None
                    rows.append(_with_basis({"what": f"RND {bs_label(bs)} {d} latency {s.replace('_', '.')}",
                                             "unit": "µs", "claimed": c[f"{d}_{s}_us"], "better": "lower"},
                                            Figure(None), _steady_figure(m, lat.steady if lat else None, "Latency"),
                                            basis=c.get("basis")))
    return rows


@dataclass
class LatencyPoint:
    """A measured TC × QD point with per-direction latency, from DIRTH (or lat-iops) of this run."""

    source: str
    block_size: int
    read_pct: int
    tc: int
    qd: int                             # per thread
    read_lat: Latency | None
    write_lat: Latency | None
    reached: bool = True                # the sweep's own rule for its measurement window held
    how: str = ""                       # how the point's window was reached, or why not
    steady_reached: bool | None = None  # the sweep's steady state (DIRTH); None: the sweep judges none


def _dirth_points(summaries: dict) -> list[LatencyPoint]:
    """DIRTH's points: their window is the sweep's steady-state window, reached when the sweep reached it."""
    d: DirthSummary | None = summaries.get("dirth")
    if d is None:
        return []
    how = _steady_state(d.steady, "DIRTH sweep")
    return [LatencyPoint(f"DIRTH point TC{p.tc}/QD{p.qd}", d.block_size, d.read_pct, p.tc, p.qd, p.read_lat,
                         p.write_lat, d.steady.reached, how, d.steady.reached) for p in d.points]


def _lat_iops_points(summaries: dict) -> list[LatencyPoint]:
    """lat-iops's points: the reviewers' average of its last rounds, with no steady-state judgement to reach."""
    s: LatIopsSummary | None = summaries.get("lat-iops")
    if s is None:
        return []
    how = (f"reached: the reviewers' window, rounds {s.window_rounds[0]}–{s.window_rounds[-1]} averaged (the sweep "
           "judges no steady state)" if s.window_rounds else "reached: the sweep's rounds averaged")
    return [LatencyPoint(f"lat-iops point TC{p.tc}/QD{p.qd}", f.block_size, f.read_pct, p.tc, p.qd, p.read_lat,
                         p.write_lat, True, how) for f in s.families for p in f.points]


LATENCY_POINT_SOURCES = (_lat_iops_points, _dirth_points)     # first match wins


def _latency_point_rows(summaries: dict, claims: list[dict]) -> list[dict]:
    """High-QD claims: queue_depth is the total outstanding I/Os (TC × QD) unless `threads` names the TC."""
    points = [p for source in LATENCY_POINT_SOURCES for p in source(summaries)]
    rows = []
    for c in claims:
        bs, pct, qd, tc = parse_size(c["block_size"]), c["read_pct"], c["queue_depth"], c.get("threads")
        p = next((p for p in points if (p.block_size, p.read_pct) == (bs, pct)
                  and ((p.tc, p.qd) == (tc, qd) if tc else p.tc * p.qd == qd)), None)
        at = f"TC{tc}/QD{qd}" if tc else f"QD{qd}"
        for d in ("read", "write"):
            lat = (p.read_lat if d == "read" else p.write_lat) if p else None
            for s, value in LAT_STATS.items():
                if f"{d}_{s}_us" in c:
                    m = value(lat) if lat else None
                    rows.append({"what": f"RND {bs_label(bs)} {pct}/{100 - pct} {at} {d} latency {s.replace('_', '.')}",
                                 "unit": "µs", "claimed": c[f"{d}_{s}_us"], "better": "lower", "measured": m,
                                 "basis": p.source + " (measurement window)" if m is not None else
                                 "not measured (no DIRTH or lat-iops point at this block size, mix and queue depth)",
                                 "basis_key": "point" if m is not None else None, "fresh": None, "steady": None,
                                 **_reached(m, p.reached if p else False, p.how if p else ""),
                                 "steady_reached": p.steady_reached if p and m is not None else None,
                                 "steady_figure_reached": None, "saturated": None})
    return rows


def _endurance_rows(e: EnduranceSummary | None, claims: dict) -> list[dict]:
    """TBW against the endurance test's projected TBW; DWPD = that over capacity × warranty days."""
    rows = []
    pr = e.projection if e is not None else None
    why = ("not measured (no endurance result in this run)" if e is None else
           f"not measured (projection not available: {pr.reason or 'see the endurance section'})"
           if pr is None or not pr.available else
           "not measured (the projection has no wear per TB written: the wear indicator did not move)")
    tbw = pr.projected_tbw_tb if pr is not None and pr.available else None
    how = f"reached: projected from {pr.points} health polls of the endurance test" if tbw else ""
    years = claims.get("warranty_years") or (e.rated.warranty_years if e else None)
    dwpd = tbw * 1e12 / e.rated.capacity_bytes / (years * 365) if tbw and years and e.rated.capacity_bytes else None
    for key, what, unit, value, extra in (("tbw", "Endurance (TBW)", "TB", tbw, ""),
                                          ("dwpd", "Endurance (DWPD)", "DWPD", dwpd,
                                           f" over {years:g} years" if years else " (needs warranty_years)")):
        if key in claims:
            rows.append({"what": what, "unit": unit, "claimed": claims[key], "better": "higher", "measured": value,
                         "basis": ("endurance projection (projected TBW)" + extra) if value is not None else why,
                         "basis_key": "endurance" if value is not None else None, "fresh": None, "steady": None,
                         **_reached(value, True, how), "steady_reached": None, "steady_figure_reached": None,
                         "saturated": None})
    return rows


def info_rows(claims: dict) -> list[tuple[str, str]]:
    """Informational fields (power, temperature range, weight …): shown, never judged."""
    return [(k, str(v)) for k, v in claims.get("info", {}).items()]


def _meets(row: dict) -> bool | None:
    """Whether the measured figure meets the claim; None when it was not measured or its basis was not reached."""
    m, c = row["measured"], row["claimed"]
    if m is None or not c or not row["reached"]:
        return None
    return m >= c if row["better"] == "higher" else m <= c


def claim_rows(store: Store, run: dict, claims: dict) -> list[dict]:
    """One dict per claim: what, unit, claimed, measured (None when not measured) and its basis, the
    fresh-out-of-box, steady-state and saturated figures, better ('higher'|'lower'), basis_key (the basis measured:
    fob | steady | saturated | point | endurance; None: not measured); `reached` (the basis was reached; None: not
    measured) and `reason` (how it was reached, or why not: "not reached: WSAT wrote 0.36 of 4 fills ..."),
    `steady_reached` (the steady state of the basis's own test; None: it judges none), `steady_figure_reached`
    (that of the steady-state figure shown beside), and `meets` (None: not judged)."""
    s = _summaries(store, run)
    fp = s.get("fresh-peak")
    rows = (_sequential_rows(s.get("throughput"), fp, claims.get("sequential", []), s.get("bs-sweep"))
            + _random_rows(s.get("iops"), fp, s.get("wsat"), claims.get("random", []), s.get("bs-sweep"))
            + _latency_rows(s.get("latency"), claims.get("latency", []))
            + _latency_point_rows(s, claims.get("latency_point", []))
            + _endurance_rows(s.get("endurance"), claims.get("endurance", {})))
    for r in rows:
        r["meets"] = _meets(r)
    return rows


def _n(v: float, unit: str) -> str:
    if unit == "IOPS":
        return f"{v:,.0f}"
    return f"{v:,.1f}"


def claimed_section(store: Store, run: dict, claims: dict, art: Artifacts) -> Markup:
    rows = claim_rows(store, run, claims)
    table = []
    for r in rows:
        m, c, u, good = r["measured"], r["claimed"], r["unit"], r["meets"]
        ratio = m / c if good is not None else None       # a ratio is a judgement too: only for a reached basis
        if m is None:
            mtext, verdict = f"not measured (claimed {_n(c, u)} {u})", Cell(None, "not measured")
        elif good is None:
            mtext = f"{_n(m, u)} {u} (claimed {_n(c, u)}) — basis NOT reached"
            verdict = Cell(None, "not judged", "bad")
        else:
            mtext = f"{_n(m, u)} {u} (claimed {_n(c, u)})"
            verdict = Cell(good, "meets claim" if good else "misses claim", "ok" if good else "bad")
        reason = Cell(r["reason"], r["reason"], "" if m is None else "ok" if r["reached"] else "bad")
        mb = Cell(None, "–")
        if "claimed_mb_s" in r:
            mb = Cell(r["measured_mb_s"], (f"{r['measured_mb_s']:,.1f} MB/s" if r["measured_mb_s"] is not None
                                           else "not measured") + f" (claimed {r['claimed_mb_s']:,.1f})")
        st = r["steady"]
        steady = Cell(st, "not measured" if st is None else f"{_n(st, u)} {u}" + (
            " (steady state NOT reached)" if r["steady_figure_reached"] is False else ""))
        reached = "" if r["steady_reached"] is None else "yes" if r["steady_reached"] else "no"
        table.append([r["what"], Cell(m, mtext), r["basis"], reason, steady, Cell(reached, reached or "–"), mb,
                      Cell(c, f"{_n(c, u)}"), u, Cell(ratio, "–" if ratio is None else f"{ratio:.3f}×"),
                      r["better"], verdict])
    drive = claims.get("drive", {})
    intro = ""
    if drive:
        intro = "<p>Claims" + (f" for <strong>{escape(drive['model'])}</strong>" if drive.get("model") else "") + (
            f" from {escape(drive['source'])}" if drive.get("source") else "") + ".</p>"
    return Markup(intro) + art.table(
        "claimed-vs-measured",
        ["Claim", "Measured (claimed)", "Basis", "Basis reached", "Steady state", "Steady state reached (the basis's "
         "test)", "Decimal MB/s (claimed)", "Claimed", "Unit", "Measured / claimed", "Better", "Verdict"], table,
        caption="Vendor claims vs the figure of the claim's basis (fob | steady | saturated); without a basis, the "
                "fresh-out-of-box result (fresh-peak test) where the run has one, the steady-state figure beside it; "
                "a claim is judged only when its basis was reached (docs/report.md, 'Claims by basis'); "
                "sequential claims converted from MB/s to MiB/s: ×10^6/2^20",
        csv_headers=["claim", "measured", "basis", "reason", "steady", "steady_reached", "measured_mb_s", "claimed",
                     "unit", "ratio", "better", "meets_claim"]) + _info_table(claims, art)


def _info_table(claims: dict, art: Artifacts) -> Markup:
    rows = [[k, v, "informational (not judged)"] for k, v in info_rows(claims)]
    if not rows:
        return Markup("")
    return art.table("claimed-info", ["Field", "Claimed", "Verdict"], rows,
                     caption="Spec-sheet facts shown for reference: nothing in the run measures them")
