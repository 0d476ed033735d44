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
from ..pts.fresh_peak.summary import FreshPeakSummary
from ..pts.iops.summary import IopsSummary
from ..pts.lat_iops.summary import LatIopsSummary
from ..pts.latency.summary import LatencySummary
from ..results import Latency
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


def _reached(summary) -> bool | None:
    st = getattr(summary, "steady", None)
    return None if st is None else bool(st.reached)


def _fresh(fp: FreshPeakSummary | None, rw: str, bs: int | None):
    """The fresh-peak result of `rw` at block size `bs`, if this run measured one."""
    if fp is None or bs is None or fp.block_size != bs:
        return None
    return fp.result(rw)


@dataclass
class Figure:
    """One measured figure a claim can be compared with, and where it comes from."""

    value: float | None
    mb_s: float | None = None           # sequential figures: the same in decimal MB/s
    source: str = ""                    # e.g. "WSAT rnd4k-write final level"


def _with_basis(row: dict, fresh: float | None, steady: float | None, reached: bool | None,
                fresh_mb_s: float | None = None, steady_mb_s: float | None = None, basis: str | None = None,
                saturated: Figure | None = None, fob_source: str = "", missing: str = "") -> dict:
    """measured = the figure of the claim's `basis`; without one, the fresh-out-of-box figure when there is one
    (what "up to" means), else the steady one. A basis the run lacks reads "not measured" (and `missing`: why).
    `fob_source`: where a fresh-out-of-box figure that is not the fresh-peak test's comes from."""
    row.update(steady=steady, steady_reached=reached, fresh=fresh, saturated=saturated.value if saturated else None)
    figures = {"fob": Figure(fresh, fresh_mb_s), "steady": Figure(steady, steady_mb_s),
               "saturated": saturated or Figure(None)}
    fob = f"fresh out of box: {fob_source}" if fob_source else BASES["fob"]
    if basis is None:
        chosen = "fob" if fresh is not None else "steady"
        text = fob if fresh is not None else (
            "steady state (no fresh-out-of-box result in this run)" if steady is not None else
            "not measured" + (f" ({missing})" if missing else ""))
    else:
        chosen = basis
        text = (fob if basis == "fob" else BASES[basis]) + (
            f": {figures[basis].source}" if figures[basis].source else "") + (
            " (the claim's basis)" if figures[basis].value is not None else " — not measured in this run"
            + (f" ({missing})" if missing else ""))
    row.update(measured=figures[chosen].value, basis=text, basis_key=chosen if figures[chosen].value is not None
               else None)
    if "claimed_mb_s" in row:
        row["measured_mb_s"] = figures[chosen].mb_s
    return row


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
                f = _fresh(fp, d, bs)
                swept, how = _swept(sweep, d, bs) if f is None else (None, "")
                rows.append(_with_basis(
                    {"what": f"SEQ {bs_label(bs) if bs is not None else '?'} {d}", "unit": "MiB/s",
                     "claimed": c[f"{d}_mb_s"] * 1e6 / 2**20, "claimed_mb_s": c[f"{d}_mb_s"], "better": "higher"},
                    f.mib_s if f else swept.mib_s if swept else None, mib_s, r.steady.reached if r else None,
                    f.mb_s if f else swept.mb_s if swept else None, mb_s, c.get("basis"),
                    fob_source=how if swept else "",
                    missing=_missing("throughput", tp is not None, how)))
    return rows


def _missing(test: str, ran: bool, swept: str) -> str:
    """Why a claim has no figure: the test that measures it did not run here (or not at its block size, mix),
    and what the block-size sweep had instead."""
    return ("this run has no " + test + " test" if not ran else f"its {test} test has no cell for it") + (
        f"; {swept}" if swept else "")


def _saturated(wsat: WsatSummary | None, bs: int, read_pct: int | None) -> Figure:
    """WSAT's final level of the workload at this block size and mix (Intel's "saturated" basis), if it ran."""
    for name, w in (wsat.workloads.items() if wsat else ()):
        spec = WSAT_WORKLOADS.get(name)
        if spec and spec[0].startswith("rand") and (spec[1], spec[2]) == (bs, read_pct):
            return Figure(w.final_iops, source=f"WSAT {name} final level")
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
                steady = iops.iops(bs, pct) if iops else None
                rw = {"read_iops": "randread", "write_iops": "randwrite"}.get(key, "")
                f = _fresh(fp, rw, bs)
                swept, how = _swept(sweep, rw, bs) if f is None and rw else (None, "")
                rows.append(_with_basis({"what": what, "unit": "IOPS",
                                         "claimed": c[key], "better": "higher"},
                                        f.iops if f else swept.iops if swept else None, steady,
                                        _reached(iops) if steady is not None else None,
                                        basis=c.get("basis"), saturated=_saturated(wsat, bs, pct),
                                        fob_source=how if swept else "",
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
                                            None, m, _reached(lat) if m is not None else None,
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


def _dirth_points(summaries: dict) -> list[LatencyPoint]:
    d: DirthSummary | None = summaries.get("dirth")
    if d is None:
        return []
    return [LatencyPoint(f"DIRTH point TC{p.tc}/QD{p.qd}", d.block_size, d.read_pct, p.tc, p.qd, p.read_lat,
                         p.write_lat) for p in d.points]


def _lat_iops_points(summaries: dict) -> list[LatencyPoint]:
    s: LatIopsSummary | None = summaries.get("lat-iops")
    if s is None:
        return []
    return [LatencyPoint(f"lat-iops point TC{p.tc}/QD{p.qd}", f.block_size, f.read_pct, p.tc, p.qd, p.read_lat,
                         p.write_lat) for f in s.families for p in f.points]


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
                                 "steady_reached": None, "saturated": None})
    return rows


def _endurance_rows(e: EnduranceSummary | None, claims: dict) -> list[dict]:
    """TBW against the endurance test's projected TBW; DWPD = that over capacity × warranty days."""
    rows = []
    pr = e.projection if e is not None else None
    why = ("not measured (no endurance result in this run)" if e is None else
           f"not measured (projection not available: {pr.reason or 'see the endurance section'})")
    tbw = pr.projected_tbw_tb if pr is not None and pr.available else None
    years = claims.get("warranty_years") or (e.rated.warranty_years if e else None)
    dwpd = tbw * 1e12 / e.rated.capacity_bytes / (years * 365) if tbw and years and e.rated.capacity_bytes else None
    for key, what, unit, value, extra in (("tbw", "Endurance (TBW)", "TB", tbw, ""),
                                          ("dwpd", "Endurance (DWPD)", "DWPD", dwpd,
                                           f" over {years:g} years" if years else " (needs warranty_years)")):
        if key in claims:
            rows.append({"what": what, "unit": unit, "claimed": claims[key], "better": "higher", "measured": value,
                         "basis": ("endurance projection (projected TBW)" + extra) if value is not None else why,
                         "basis_key": "endurance" if value is not None else None, "fresh": None, "steady": None,
                         "steady_reached": None, "saturated": None})
    return rows


def info_rows(claims: dict) -> list[tuple[str, str]]:
    """Informational fields (power, temperature range, weight …): shown, never judged."""
    return [(k, str(v)) for k, v in claims.get("info", {}).items()]


def claim_rows(store: Store, run: dict, claims: dict) -> list[dict]:
    """One dict per claim: what, unit, claimed, measured (None when not measured) and its basis, the
    fresh-out-of-box, steady-state and saturated figures, whether steady state was reached, better
    ('higher'|'lower'), basis_key (the basis measured: fob | steady | saturated | point | endurance; None: not
    measured)."""
    s = _summaries(store, run)
    fp = s.get("fresh-peak")
    return (_sequential_rows(s.get("throughput"), fp, claims.get("sequential", []), s.get("bs-sweep"))
            + _random_rows(s.get("iops"), fp, s.get("wsat"), claims.get("random", []), s.get("bs-sweep"))
            + _latency_rows(s.get("latency"), claims.get("latency", []))
            + _latency_point_rows(s, claims.get("latency_point", []))
            + _endurance_rows(s.get("endurance"), claims.get("endurance", {})))


def _n(v: float, unit: str) -> str:
    if unit == "IOPS":
        return f"{v:,.0f}"
    return f"{v:,.1f}"


def claimed_section(store: Store, run: dict, claims: dict, art: Artifacts) -> Markup:
    rows = claim_rows(store, run, claims)
    table = []
    for r in rows:
        m, c, u = r["measured"], r["claimed"], r["unit"]
        ratio = m / c if m is not None and c else None
        if m is None:
            mtext, verdict = f"not measured (claimed {_n(c, u)} {u})", Cell(None, "not measured")
        else:
            mtext = f"{_n(m, u)} {u} (claimed {_n(c, u)})"
            if r["fresh"] is None and r["steady_reached"] is False:
                mtext += " — steady state NOT reached"
            good = ratio >= 1 if r["better"] == "higher" else ratio <= 1
            verdict = Cell(good, "meets claim" if good else "misses claim", "ok" if good else "bad")
        mb = Cell(None, "–")
        if "claimed_mb_s" in r:
            mb = Cell(r["measured_mb_s"], (f"{r['measured_mb_s']:,.1f} MB/s" if r["measured_mb_s"] is not None
                                           else "not measured") + f" (claimed {r['claimed_mb_s']:,.1f})")
        st = r["steady"]
        steady = Cell(st, "not measured" if st is None else f"{_n(st, u)} {u}" + (
            " (steady state NOT reached)" if r["steady_reached"] is False else ""))
        reached = "" if r["steady_reached"] is None else "yes" if r["steady_reached"] else "no"
        table.append([r["what"], Cell(m, mtext), r["basis"], steady, Cell(reached, reached or "–"), mb,
                      Cell(c, f"{_n(c, u)}"), u, Cell(ratio, "–" if ratio is None else f"{ratio:.3f}×"),
                      r["better"], verdict])
    drive = claims.get("drive", {})
    intro = ""
    if drive:
        intro = "<p>Claims" + (f" for <strong>{escape(drive['model'])}</strong>" if drive.get("model") else "") + (
            f" from {escape(drive['source'])}" if drive.get("source") else "") + ".</p>"
    return Markup(intro) + art.table(
        "claimed-vs-measured",
        ["Claim", "Measured (claimed)", "Basis", "Steady state", "Steady state reached", "Decimal MB/s (claimed)",
         "Claimed", "Unit", "Measured / claimed", "Better", "Verdict"], table,
        caption="Vendor claims vs the figure of the claim's basis (fob | steady | saturated); without a basis, the "
                "fresh-out-of-box result (fresh-peak test) where the run has one, the steady-state figure beside it; "
                "sequential claims converted from MB/s to MiB/s: ×10^6/2^20",
        csv_headers=["claim", "measured", "basis", "steady", "steady_reached", "measured_mb_s", "claimed", "unit",
                     "ratio", "better", "meets_claim"]) + _info_table(claims, art)


def _info_table(claims: dict, art: Artifacts) -> Markup:
    rows = [[k, v, "informational (not judged)"] for k, v in info_rows(claims)]
    if not rows:
        return Markup("")
    return art.table("claimed-info", ["Field", "Claimed", "Verdict"], rows,
                     caption="Spec-sheet facts shown for reference: nothing in the run measures them")
