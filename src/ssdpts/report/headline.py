"""The report's first screen: per test its key figures (the test's `headline` renderer), whether steady state was
reached, its conformance deviations, and every figure that is not available, said plainly.

Typed (`HeadlineOfTest`) so results.json carries it and tests assert it without reading HTML."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup, escape

from ..conformance import Verdict
from ..pts.registry import find
from ..results import CellWindow, SteadyResult
from ..pts.spec import Headline
from ..render.toolkit import Artifacts, Cell, fmt_num


@dataclass(frozen=True)
class SteadyLine:
    """One steady-state loop of a test: its phase ("" the main loop, "pc" a preconditioning), reached or not."""

    phase: str
    reached: bool
    rounds: int
    window: tuple[int, int] | None        # first and last round of the measurement window; None: no full window

    @property
    def text(self) -> str:
        where = f" ({self.phase})" if self.phase else ""
        win = f", window rounds {self.window[0]}–{self.window[1]}" if self.window else ", no full window"
        if self.reached:
            return f"reached{where} after {self.rounds} rounds{win}"
        return f"NOT reached{where} after {self.rounds} rounds{win}"


@dataclass(frozen=True)
class HeadlineOfTest:
    test: str
    title: str
    status: str                           # the stored test status (completed, failed, running ...)
    figures: list[Headline] = field(default_factory=list)
    steady: list[SteadyLine] = field(default_factory=list)   # empty: the test has no steady-state loop
    deviations: list[str] = field(default_factory=list)      # conformance findings of this test, with evidence
    not_available: list[str] = field(default_factory=list)   # why a figure or the whole test has no value

    @property
    def steady_reached(self) -> bool | None:
        """All loops steady (True), any not (False), no loop (None)."""
        return all(s.reached for s in self.steady) if self.steady else None


def _steady_results(value: Any, depth: int = 0) -> list[SteadyResult]:
    """Every steady-state loop a summary records, also inside its parts (Throughput: one loop per block size);
    a preconditioning loop ("pc") first."""
    if isinstance(value, SteadyResult):
        return [value]
    if depth > 3 or isinstance(value, CellWindow):
        return []
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        items = [getattr(value, f.name) for f in dataclasses.fields(value)]
    elif isinstance(value, dict):
        items = list(value.values())
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        return []
    found = [s for item in items for s in _steady_results(item, depth + 1)]
    return sorted(found, key=lambda s: s.phase != "pc") if depth == 0 else found


def headlines_of_run(store, run: dict, verdict: Verdict) -> list[HeadlineOfTest]:
    """One HeadlineOfTest per stored test of the run, in run order."""
    out = []
    for t in store.tests(run["id"]):
        spec = find(t["name"])
        title = spec.title if spec is not None else t["name"].upper()
        deviations = [f"[{f.deviation.rule}] {f.deviation.evidence}" for f in verdict.findings if f.test == t["name"]]
        if spec is None or not t.get("summary"):
            why = "this ssdpts does not know the test" if spec is None else f"no summary stored (test {t['status']})"
            out.append(HeadlineOfTest(t["name"], title, t["status"], deviations=deviations,
                                    not_available=[f"results: {why}"]))
            continue
        summary = spec.decode(t["summary"])
        figures = spec.headline(summary) if spec.headline is not None else []
        steady = [SteadyLine(s.phase, s.reached, s.rounds,
                             (s.window_rounds[0], s.window_rounds[-1]) if s.window_rounds else None)
                  for s in _steady_results(summary)]
        missing = [f"{h.label}: not available" for h in figures if h.value is None]
        if not figures:
            missing.append("key figures: the test names none")
        out.append(HeadlineOfTest(t["name"], title, t["status"], [h for h in figures if h.value is not None], steady,
                                deviations, missing))
    return out


def headline_block(headlines: list[HeadlineOfTest], verdict: Verdict, art: Artifacts) -> Markup:
    """The summary table at the top of the report: one row per key figure, the test's verdicts beside it."""
    rows = []
    for h in headlines:
        steady = "; ".join(s.text for s in h.steady) or "no steady-state loop"
        st_cls = "" if h.steady_reached is None else ("ok" if h.steady_reached else "bad")
        # rule names only: the evidence (long) is under Conformance, and a whole sentence per row made the
        # summary run several screens
        rules = list(dict.fromkeys(d[1:d.index("]")] if d.startswith("[") and "]" in d else d for d in h.deviations))
        conf = f"{len(h.deviations)} deviation{'s' if len(h.deviations) != 1 else ''}: {', '.join(rules)}" \
            if h.deviations else "no deviation"
        conf_cls = "bad" if h.deviations else "ok"
        lines = [(f.label, Cell(f.value, f"{fmt_num(f.value)} {f.unit}"),
                  "" if f.steady is None else ("steady" if f.steady else "NOT steady")) for f in h.figures]
        lines += [(text, Cell(None, "not available", "bad"), "") for text in h.not_available]
        for i, (label, value, basis) in enumerate(lines):
            first = i == 0
            rows.append([Cell(None, h.title if first else ""), label, value, Cell(None, basis, "bad" if basis ==
                                                                                  "NOT steady" else ""),
                         Cell(h.steady_reached, steady if first else "", st_cls if first else ""),
                         Cell(None, conf if first else "", conf_cls if first else "")])
    verdict_text = (f"conformant to {verdict.spec or 'the spec'}" if verdict.conformant else
                    f"NOT conformant to {verdict.spec or 'the spec'}: {len(verdict.findings)} deviations")
    table = art.table("headline", ["Test", "Figure", "Value", "Basis", "Steady state", "Conformance"], rows,
                      caption=f"Key figures of every test; run {verdict_text} (details under Conformance)")
    return Markup('<section class="test" id="headline"><h2>Summary</h2>') + table + Markup("</section>")


def headline_data(headlines: list[HeadlineOfTest]) -> list[dict]:
    """The headline as plain data for results.json (figures with their units and basis)."""
    return [{"test": h.test, "title": h.title, "status": h.status, "steady_reached": h.steady_reached,
             "steady": [{**dataclasses.asdict(s), "text": s.text} for s in h.steady],
             "figures": [dataclasses.asdict(f) for f in h.figures], "deviations": h.deviations,
             "not_available": h.not_available} for h in headlines]
