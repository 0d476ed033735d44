"""Vendor claims (a small TOML file) against measured results. Keys are documented in docs/report.md.

Vendors quote sequential speed in MB/s (10^6 B/s); ssdpts measures MiB/s (2^20 B/s). The table shows
both, e.g. "4857.4 MiB/s (claimed 4768.4)" next to "5093.4 MB/s (claimed 5000)".
"""

from __future__ import annotations

from pathlib import Path

from markupsafe import Markup, escape

from ..errors import SsdptsError
from ..inputs import read_toml
from ..pts import registry
from ..pts.fresh_peak.summary import FreshPeakSummary
from ..pts.iops.summary import IopsSummary
from ..pts.latency.summary import LatencySummary
from ..pts.results import Latency
from ..pts.throughput.summary import ThroughputSummary
from ..store import Store
from ..units import bs_label, parse_size
from .toolkit import Artifacts, Cell

# claim key suffix -> the measured statistic (µs); percentiles as fio names them ("99.9")
LAT_STATS = {"mean": lambda lat: lat.mean_us, "max": lambda lat: lat.max_us,
             **{f"p{q.replace('.', '_')}": (lambda lat, q=q: lat.p(q)) for q in ("99", "99.9", "99.99", "99.999")}}
SECTIONS = {
    "drive": {"model": str, "source": str, "notes": str},
    "sequential": {"block_size": str, "read_mb_s": float, "write_mb_s": float},
    "random": {"block_size": str, "read_iops": float, "write_iops": float, "mixed_iops": float,
               "mixed_read_pct": int},
    "latency": {"block_size": str, **{f"{d}_{s}_us": float for d in ("read", "write") for s in LAT_STATS}},
}


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
        if sec == "drive" and isinstance(val, list):
            raise _err(path, "[drive] must be a single table")
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
            norm.append(clean)
        out[sec] = norm[0] if sec == "drive" else norm
    if not any(k in out for k in ("sequential", "random", "latency")):
        raise _err(path, "no claims: add a [sequential], [random] or [latency] table")
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


def _with_basis(row: dict, fresh: float | None, steady: float | None, reached: bool | None,
                fresh_mb_s: float | None = None, steady_mb_s: float | None = None) -> dict:
    """measured = the fresh-out-of-box figure when there is one (what "up to" means), else the steady one."""
    row.update(steady=steady, steady_reached=reached, fresh=fresh)
    if fresh is not None:
        row.update(measured=fresh, basis="fresh out of box (fresh-peak test)")
        if "claimed_mb_s" in row:
            row["measured_mb_s"] = fresh_mb_s
    else:
        row.update(measured=steady, basis="steady state (no fresh-out-of-box result in this run)" if steady is not None
                   else "not measured")
        if "claimed_mb_s" in row:
            row["measured_mb_s"] = steady_mb_s
    return row


def _sequential_rows(tp: ThroughputSummary | None, fp: FreshPeakSummary | None, claims: list[dict]) -> list[dict]:
    rows = []
    for c in claims:
        if "block_size" in c:
            bs = parse_size(c["block_size"])
        else:   # no block size claimed: the largest measured one (vendors quote their best sequential figure)
            bs = max((r.block_size for r in tp.block_sizes), default=None) if tp else None
        r = tp.at(bs) if tp and bs is not None else None
        measured = {"read": (r.read_mib_s, r.read_mb_s) if r else (None, None),
                    "write": (r.write_mib_s, r.write_mb_s) if r else (None, None)}
        for d, (mib_s, mb_s) in measured.items():
            if f"{d}_mb_s" in c:
                f = _fresh(fp, d, bs)
                rows.append(_with_basis(
                    {"what": f"SEQ {bs_label(bs) if bs is not None else '?'} {d}", "unit": "MiB/s",
                     "claimed": c[f"{d}_mb_s"] * 1e6 / 2**20, "claimed_mb_s": c[f"{d}_mb_s"], "better": "higher"},
                    f.mib_s if f else None, mib_s, r.steady.reached if r else None, f.mb_s if f else None, mb_s))
    return rows


def _random_rows(iops: IopsSummary | None, fp: FreshPeakSummary | None, claims: list[dict]) -> list[dict]:
    rows = []
    for c in claims:
        bs = parse_size(c.get("block_size", "4k"))
        for key, pct in (("read_iops", 100), ("write_iops", 0), ("mixed_iops", c.get("mixed_read_pct"))):
            if key in c:
                steady = iops.iops(bs, pct) if iops else None
                f = _fresh(fp, {"read_iops": "randread", "write_iops": "randwrite"}.get(key, ""), bs)
                rows.append(_with_basis({"what": f"RND {bs_label(bs)} {pct}/{100 - pct}", "unit": "IOPS",
                                         "claimed": c[key], "better": "higher"},
                                        f.iops if f else None, steady, _reached(iops) if steady is not None else None))
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
                                            None, m, _reached(lat) if m is not None else None))
    return rows


def claim_rows(store: Store, run: dict, claims: dict) -> list[dict]:
    """One dict per claim: what, unit, claimed, measured (None when not measured) and its basis, the
    fresh-out-of-box and steady-state figures, whether steady state was reached, better ('higher'|'lower')."""
    s = _summaries(store, run)
    fp = s.get("fresh-peak")
    return (_sequential_rows(s.get("throughput"), fp, claims.get("sequential", []))
            + _random_rows(s.get("iops"), fp, claims.get("random", []))
            + _latency_rows(s.get("latency"), claims.get("latency", [])))


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
        caption="Vendor \"up to\" claims vs the fresh-out-of-box result (fresh-peak test) where the run has one, "
                "the steady-state figure beside it; sequential claims converted from MB/s to MiB/s: ×10^6/2^20",
        csv_headers=["claim", "measured", "basis", "steady", "steady_reached", "measured_mb_s", "claimed", "unit",
                     "ratio", "better", "meets_claim"])
