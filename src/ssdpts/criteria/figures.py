"""The figures a rule may judge, declared once: a stable path into a test's typed summary, its unit, how to
read it, and the evidence of where the value came from (test, phase/cell, rounds).

A path is the test's name, a dot, and the figure's pattern with its selectors filled in, e.g.
`iops.cell[4k,0].iops` (block size, read %), `latency.cell[4k,100].read.p99.99`, `wsat.workload[rnd4k-write]
.final_over_fresh`, `throughput.bs[128k].write`, `endurance.waf`, `run.conformant`. `TEST.headline[KEY]` reads
any test's headline figures (the key figures the report quotes; a key the run lacks is answered with the
keys it has).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from ..conformance import Verdict
from ..errors import SsdptsError
from ..runresult.model import RunResult
from ..pts.matrix import MatrixSummary
from ..pts.registry import find, tests
from ..results import CellWindow, Latency, SteadyResult
from ..pts.throughput.summary import ThroughputSummary
from ..pts.wsat.summary import WsatSummary
from ..pts.endurance.summary import EnduranceSummary
from ..units import bs_label, parse_size

BOOL = "bool"       # the unit of a yes/no figure (steady state reached, conformant)


@dataclass(frozen=True)
class Reading:
    """A figure's value with its evidence."""

    value: float | bool
    where: str              # phase/cell/workload inside the test
    rounds: str             # which rounds or intervals the value summarises
    unit: str | None = None   # only where the figure's unit is known when read (headline figures)


@dataclass(frozen=True)
class Unavailable:
    reason: str


@dataclass(frozen=True)
class NotReached(Unavailable):
    """The figure was measured, but the state it stands for was not reached (WSAT's final level before the drive
    saturated): a rule on it is not judged. `reason`: "not reached: WSAT wrote 0.36 of 4 fills ..."."""


@dataclass(frozen=True)
class Source:
    """What a figure is read from: the run (with its conformance verdict, for run.* figures)."""

    run: RunResult
    conformance: Verdict


Reader = Callable[[Any, dict[str, Any]], "Reading | Unavailable"]


@dataclass(frozen=True)
class Figure:
    test: str                  # a registered test, or "run"
    pattern: str               # e.g. "cell[{bs},{read}].iops"
    unit: str | None           # None: the reading carries it (headline figures)
    description: str
    read: Reader               # (typed summary or Source for "run", selectors) -> Reading | Unavailable

    @property
    def path(self) -> str:
        return f"{self.test}.{self.pattern}"


# selectors: regex of what a user writes, and the typed value it becomes
_SELECTORS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "bs": (r"[0-9.]+[kKmM]?", lambda s: parse_size(s, "block size")),
    "read": (r"100|[1-9]?[0-9]", int),
    "dir": (r"read|write", str),
    "q": (r"[0-9]+(?:\.[0-9]+)?", lambda s: repr(float(s)).removesuffix(".0")),   # as stored: 99.990 -> "99.99"
    "workload": (r"[A-Za-z0-9_-]+", str),
    "key": (r"[^\]]+", str),
}


def _regex(pattern: str) -> re.Pattern:
    parts = re.split(r"\{(\w+)\}", pattern)
    out = "".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>{_SELECTORS[p][0]})" for i, p in enumerate(parts))
    return re.compile(out + r"\Z")


def _window(steady: SteadyResult) -> str:
    w = steady.window_rounds
    return (f"window rounds {w[0]}-{w[-1]} of {steady.rounds}" if w else
            f"{steady.rounds} rounds, no measurement window (steady state not reached)")


def _cell(s: MatrixSummary, a: dict) -> tuple[CellWindow, str] | Unavailable:
    c = s.cell(a["bs"], a["read"])
    if c is None:
        return Unavailable(f"the matrix has no cell {bs_label(a['bs'])} at {a['read']} % read")
    name = next(n for n, v in s.cells.items() if v is c)
    return c, f"cell {name} ({c.workload.threads} thread(s) × QD{c.workload.iodepth})"


def _cell_figure(value: Callable[[CellWindow, dict], float | None], missing: str) -> Reader:
    def read(s: MatrixSummary, a: dict) -> Reading | Unavailable:
        found = _cell(s, a)
        if isinstance(found, Unavailable):
            return found
        c, where = found
        v = value(c, a)
        return Unavailable(f"{where}: {missing.format(**a)}") if v is None else Reading(v, where, _window(s.steady))
    return read


def _latency(c: CellWindow, a: dict) -> Latency | None:
    return c.read_lat if a["dir"] == "read" else c.write_lat


def _matrix_figures(test: str) -> list[Figure]:
    return [
        Figure(test, "steady", BOOL, "steady state reached",
               lambda s, a: Reading(s.steady.reached, s.steady.phase or "matrix", _window(s.steady))),
        Figure(test, "cell[{bs},{read}].iops", "IOPS", "window-average IOPS (read + write) of a matrix cell",
               _cell_figure(lambda c, a: c.iops, "no IOPS")),
        Figure(test, "cell[{bs},{read}].{dir}_iops", "IOPS", "window-average IOPS of one direction",
               _cell_figure(lambda c, a: c.read_iops if a["dir"] == "read" else c.write_iops, "no {dir} IOPS")),
        Figure(test, "cell[{bs},{read}].{dir}_bw", "MiB/s", "window-average bandwidth of one direction",
               _cell_figure(lambda c, a: c.read_mib_s if a["dir"] == "read" else c.write_mib_s, "no {dir} bandwidth")),
        Figure(test, "cell[{bs},{read}].{dir}.mean", "µs", "mean total latency of one direction",
               _cell_figure(lambda c, a: (lat := _latency(c, a)) and lat.mean_us, "no {dir} latency")),
        Figure(test, "cell[{bs},{read}].{dir}.max", "µs", "maximum total latency of one direction",
               _cell_figure(lambda c, a: (lat := _latency(c, a)) and lat.max_us, "no {dir} latency")),
        Figure(test, "cell[{bs},{read}].{dir}.p{q}", "µs", "a total-latency percentile of one direction",
               _cell_figure(lambda c, a: (lat := _latency(c, a)) and lat.p(a["q"]), "no {dir} p{q} latency")),
    ]


def _throughput(value: Callable[[Any, dict], float | bool | None], missing: str) -> Reader:
    def read(s: ThroughputSummary, a: dict) -> Reading | Unavailable:
        r = s.at(a["bs"])
        if r is None:
            return Unavailable(f"no block size {bs_label(a['bs'])} was measured")
        v = value(r, a)
        return (Unavailable(f"{r.phase}: {missing.format(**a)}") if v is None
                else Reading(v, f"{r.phase}, SEQ {a.get('dir', 'read/write')} cell", _window(r.steady)))
    return read


def _wsat(value: Callable[[Any], float | None], missing: str, saturated: bool = False) -> Reader:
    """A WSAT workload's figure; `saturated`: it stands for the saturated drive (the final level), judged only when
    saturation was reached (WsatWorkload.saturation)."""
    def read(s: WsatSummary, a: dict) -> Reading | Unavailable:
        w = s.workloads.get(a["workload"])
        if w is None:
            return Unavailable(f"no WSAT workload {a['workload']!r} (measured: {', '.join(s.workloads) or 'none'})")
        if saturated and not w.saturation.reached:
            return NotReached(f"workload {a['workload']}: {w.saturation.how}")
        v = value(w)
        return (Unavailable(f"workload {a['workload']}: {missing}") if v is None
                else Reading(v, f"workload {a['workload']} (stopped: {w.stop_reason})",
                             f"{len(w.series)} intervals; final = mean of the last 5"))
    return read


def _projection(field: str) -> Reader:
    def read(s: EnduranceSummary, a: dict) -> Reading | Unavailable:
        v = getattr(s.projection, field)
        return (Unavailable(f"no {field} projection: {s.projection.reason or 'not enough health polls'}")
                if v is None else Reading(v, "health projection", f"{s.projection.points} health polls"))
    return read


def _headline(s: Any, a: dict, test: str) -> Reading | Unavailable:
    spec = find(test)
    lines = spec.headline(s) if spec is not None and spec.headline else []
    h = next((h for h in lines if h.key == a["key"]), None)
    if h is None or h.value is None:
        return Unavailable(f"no headline figure {a['key']!r} (stored: {', '.join(x.key for x in lines) or 'none'})")
    if h.unreached:
        return NotReached(f"{h.label}: {h.unreached}")
    return Reading(h.value, h.label, "as the test reports it", unit=h.unit)


def _run_conformant(src: Source, a: dict) -> Reading:
    return Reading(src.conformance.conformant, f"profile {src.run.profile_name}",
                   f"{len(src.conformance.findings)} deviation(s)")


def _run_deviations(src: Source, a: dict) -> Reading:
    return Reading(float(len(src.conformance.findings)), f"profile {src.run.profile_name}", "the whole run")


def _all() -> list[Figure]:
    figures = _matrix_figures("iops") + _matrix_figures("latency") + [
        Figure("throughput", "bs[{bs}].steady", BOOL, "steady state reached at one block size",
               _throughput(lambda r, a: r.steady.reached, "")),
        Figure("throughput", "bs[{bs}].{dir}", "MiB/s", "window-average SEQ bandwidth at one block size",
               _throughput(lambda r, a: r.mib_s(a["dir"]), "no {dir} bandwidth")),
        Figure("wsat", "workload[{workload}].fresh_iops", "IOPS", "IOPS of the first interval (fresh out of box)",
               _wsat(lambda w: w.fresh_iops, "no fresh IOPS")),
        Figure("wsat", "workload[{workload}].final_iops", "IOPS", "mean IOPS of the last 5 intervals",
               _wsat(lambda w: w.final_iops, "no final IOPS", saturated=True)),
        Figure("wsat", "workload[{workload}].final_over_fresh", "%", "final IOPS as a share of fresh IOPS",
               _wsat(lambda w: None if w.final_over_fresh is None else 100.0 * w.final_over_fresh, "fresh IOPS 0",
                     saturated=True)),
        Figure("wsat", "workload[{workload}].written", "GB", "total bytes written (TGBW)",
               _wsat(lambda w: w.tgbw_gb, "")),
        Figure("endurance", "waf", "", "write amplification (NAND / host writes)", _projection("waf")),
        Figure("endurance", "wear_per_day", "%/day", "wear per day at this load", _projection("wear_per_day")),
        Figure("endurance", "days_to_eol", "days", "days to end of life at this load", _projection("days_to_eol")),
        Figure("run", "conformant", BOOL, "the conformance verdict of `ssdpts check`", _run_conformant),
        Figure("run", "deviations", "deviations", "the number of conformance deviations", _run_deviations),
    ]
    figures += [Figure(name, "headline[{key}]", None, "a headline figure (the key figures the report quotes)",
                       lambda s, a, test=name: _headline(s, a, test))
                for name, spec in tests().items() if spec.headline]
    return figures


FIGURES: list[Figure] = _all()
_COMPILED = [(f, _regex(f.pattern)) for f in FIGURES]


def resolve(path: str, where: str) -> tuple[Figure, dict[str, Any]]:
    """The figure a path names and its selectors, typed; one line naming the known patterns otherwise."""
    test, _, rest = path.strip().partition(".")
    candidates = [(f, rx) for f, rx in _COMPILED if f.test == test]
    if not candidates:
        known = sorted({f.test for f in FIGURES})
        raise SsdptsError(f"{where}: figure {path!r} names no test with figures; the path starts with one of "
                          f"{', '.join(known)} (docs/criteria.md lists every figure)")
    for f, rx in candidates:
        m = rx.match(rest)
        if m:
            try:
                return f, {k: _SELECTORS[k][1](v) for k, v in m.groupdict().items()}
            except SsdptsError as e:
                raise SsdptsError(f"{where}: figure {path!r}: {e}") from None
    raise SsdptsError(f"{where}: figure {path!r} is not a figure of {test}; its figures: "
                      f"{', '.join(f.path for f, _ in candidates)} (docs/criteria.md)")
