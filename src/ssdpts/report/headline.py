"""The report's first screen (`HeadlinePage`): the drive, the verdict (conformance and, when given, the lab's
criteria), a handful of key figures with units and basis, claims vs measured, the three charts a reader looks at
first and links down to the evidence; for a simulated drive, which of its preset's figures match the drive it
imitates and that its times are simulated.

Below it the Summary table: per test its key figures (the test's `headline` renderer), whether steady state was
reached, its conformance deviations, and every figure that is not available, said plainly.

Typed (`HeadlineOfTest`, `HeadlinePage`) so results.json carries it and tests assert it without reading HTML."""

from __future__ import annotations

import dataclasses
import fnmatch
from dataclasses import dataclass, field
from typing import Any, Sequence

from markupsafe import Markup, escape

from ..conformance import Verdict
from ..pts.registry import find
from ..results import CellWindow, SteadyResult
from ..pts.spec import Headline
from ..render.toolkit import Artifacts, Cell, SavedFigure, fmt_num
from ..runresult.simulated import held_text


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
        lines = [(f.label, Cell(f.value, f"{fmt_num(f.value)} {f.unit}"), "NOT reached" if f.unreached else
                  "" if f.steady is None else ("steady" if f.steady else "NOT steady")) for f in h.figures]
        lines += [(text, Cell(None, "not available", "bad"), "") for text in h.not_available]
        for i, (label, value, basis) in enumerate(lines):
            first = i == 0
            rows.append([Cell(None, h.title if first else ""), label, value, Cell(None, basis, "bad" if "NOT" in basis
                                                                                  else ""),
                         Cell(h.steady_reached, steady if first else "", st_cls if first else ""),
                         Cell(None, conf if first else "", conf_cls if first else "")])
    verdict_text = (f"conformant to {verdict.spec or 'the spec'}" if verdict.conformant else
                    f"NOT conformant to {verdict.spec or 'the spec'}: {len(verdict.findings)} deviations")
    table = art.table("headline", ["Test", "Figure", "Value", "Basis", "Steady state", "Conformance"], rows,
                      caption=f"Key figures of every test; run {verdict_text} (details under Conformance)")
    return Markup('<section class="test" id="summary"><h2>Summary: every key figure</h2>') + table + Markup(
        "</section>")


def headline_data(headlines: list[HeadlineOfTest]) -> list[dict]:
    """The headline as plain data for results.json (figures with their units and basis)."""
    return [{"test": h.test, "title": h.title, "status": h.status, "steady_reached": h.steady_reached,
             "steady": [{**dataclasses.asdict(s), "text": s.text} for s in h.steady],
             "figures": [dataclasses.asdict(f) for f in h.figures], "deviations": h.deviations,
             "not_available": h.not_available} for h in headlines]


# ---------------------------------------------------------------------------------------------
# the headline page: one screen at 1400 x 900

KEY_FIGURES = 8             # a handful: the rest are in the Summary table below
CHARTS = 3
# the charts a reader looks at first, in order (plot keys, shell patterns); then any other result chart
FIRST_CHARTS = ("lat-iops-reviewers-p99_99", "iops-iops-vs-bs", "wsat-*-iops-vs-time", "dirth-latency-vs-iops",
                "cbw-latency-vs-iops", "throughput-bars", "hir-iops-vs-time", "latency-percentiles",
                "iops-bars", "latency-p99_99", "fresh-peak-*")
# plots that show how a result was reached, not the result: never a headline chart
NOT_RESULTS = ("*convergence*", "*-window", "*histograms*")


@dataclass(frozen=True)
class KeyFigure:
    test: str
    title: str                   # the test's title
    label: str
    value: float
    unit: str
    basis: str                   # "steady state", "steady state NOT reached", "no steady-state judgement"
    anchor: str                  # where its evidence stands: #test-NAME

    @property
    def shown(self) -> str:
        return f"{fmt_num(self.value)} {self.unit}"


@dataclass(frozen=True)
class CriteriaVerdict:
    """The lab's acceptance rules as `ssdpts check --criteria` judges them (the command layer judges and hands
    this in: the criteria sit above the report)."""

    name: str
    passed: bool
    held: int
    total: int
    failures: list[str] = field(default_factory=list)     # "rule: evidence" of every rule that does not hold
    lines: list[str] = field(default_factory=list)        # every rule with its evidence, as `check` prints them


@dataclass(frozen=True)
class ClaimLine:
    what: str
    unit: str
    claimed: float
    measured: float | None       # None: the run does not measure it
    meets: bool | None           # None: not judged (not measured, or its basis not reached)
    reason: str = ""             # how the claim's basis was reached, or why not ("not reached: WSAT wrote ...")


@dataclass(frozen=True)
class CalibrationFigure:
    """One figure of the review a simulated preset was shaped on (simdrive/calibration.py)."""

    review_figure: str           # the review's section and wording
    what: str                    # the quantity as the simulator measures it
    review_value: float
    unit: str
    held: bool                   # held to the calibration tolerance (tests/sim/test_presets.py checks it)
    note: str                    # why it is not held, or how the review was read


@dataclass(frozen=True)
class SimulatedDrive:
    """A `sim:` run: what its preset imitates, which figures of that drive it holds, and its two clocks."""

    preset: str
    imitates: str                # "Kingston KC2000 500 GB, True System 2019"; "" for a user file
    tolerance: float             # the calibration tolerance (0.15: ±15 %)
    figures: list[CalibrationFigure]
    simulated_s: float           # simulated time of the stored rounds' I/O and idle waits (warm-ups not counted)
    wall_s: float                # wall-clock time the same rounds took
    drives: int = 1              # simulated drives in the run (several: their figures are summed)

    @property
    def held(self) -> list[CalibrationFigure]:
        return [f for f in self.figures if f.held]

    @property
    def held_text(self) -> str:
        """"7 of 8 review figures held to ±15%", qualified where the run sums several drives."""
        return held_text(len(self.held), len(self.figures), self.tolerance, self.drives)

    @property
    def not_held(self) -> list[CalibrationFigure]:
        return [f for f in self.figures if not f.held]


@dataclass(frozen=True)
class VerdictLine:
    text: str
    ok: bool | None              # None: informational
    href: str


@dataclass(frozen=True)
class HeadlinePage:
    drive: list[tuple[str, str]]
    verdicts: list[VerdictLine]
    figures: list[KeyFigure]
    figures_total: int           # all key figures of the run (the Summary table)
    claims: list[ClaimLine]
    claims_total: int
    charts: list[SavedFigure]
    links: list[tuple[str, str]]
    simulated: SimulatedDrive | None = None


def _basis(f: Headline) -> str:
    if f.unreached:
        return "NOT reached: " + f.unreached.removeprefix("not reached: ")
    return "no steady-state judgement" if f.steady is None else "steady state" if f.steady else \
        "steady state NOT reached"


def key_figures(headlines: Sequence[HeadlineOfTest], limit: int = KEY_FIGURES) -> list[KeyFigure]:
    """One figure per test, in run order: its first, or its final level where it names one (WSAT's final IOPS
    before its first interval's)."""
    out = []
    for h in headlines:
        if not h.figures:
            continue
        f = next((f for f in h.figures if "_final_" in f.key), h.figures[0])
        out.append(KeyFigure(h.test, h.title, f.label, f.value, f.unit, _basis(f), f"#test-{h.test}"))
    return out[:limit]


def first_charts(saved: dict[str, SavedFigure], limit: int = CHARTS,
                 order: Sequence[str] = FIRST_CHARTS) -> list[SavedFigure]:
    """The charts a reader looks at first (`order`), then any other result chart, `limit` of them."""
    keys = [k for k in saved if not any(fnmatch.fnmatch(k, p) for p in NOT_RESULTS)]
    ordered = [k for p in order for k in keys if fnmatch.fnmatch(k, p)] + keys
    return [saved[k] for k in dict.fromkeys(ordered)][:limit]


def claim_lines(rows: Sequence[dict]) -> list[ClaimLine]:
    """claimed.claim_rows, as the headline shows them: claimed, measured, whether it meets the claim (judged only
    where its basis was reached) and the basis's reason."""
    return [ClaimLine(r["what"], r["unit"], r["claimed"], r["measured"], r["meets"], r["reason"]) for r in rows]


def _seconds(store, run_id: str) -> tuple[float, float]:
    """(simulated, wall) seconds of every stored round: a simulated drive's cells and idle waits run in simulated
    time, its rounds' start and end stamps are the wall clock."""
    sim = wall = 0.0
    for t in store.tests(run_id):
        for kind in ("precondition", "round"):
            for r in store.rounds(run_id, t["name"], kind=kind):
                wall += max(r.ended - r.started, 0.0)
                sim += sum(c.runtime_ms for c in r.cells) / 1000 + ((r.gap_before_ms or 0.0)
                                                                     + sum(r.gaps_inside_ms or [])) / 1000
    return sim, wall


def calibration(preset: str) -> tuple[str, float, list[CalibrationFigure]]:
    """(the drive the preset imitates, the tolerance, its review figures) from simdrive/calibration.py."""
    from ..simdrive.calibration import FIGURES, TOLERANCE, imitated   # here: it loads the simulator, which a sim run has

    presets = preset.split(" + ")     # several simulated drives: each preset's figures, named by it
    figures = [CalibrationFigure(f"{f.preset}: {f.where}" if len(presets) > 1 else f.where, f.what, f.value, f.unit,
                                 f.held, f.note) for p in presets for f in FIGURES if f.preset == p]
    return imitated(presets), TOLERANCE, figures


def sim_preset(run: dict) -> str | None:
    """The preset (or user file) of a `sim:` run, "client + enterprise" for several simulated drives at once;
    None for a real drive."""
    presets = run["target"].simulated_presets
    return None if presets is None else " + ".join(presets)


def simulated_drive(store, run: dict) -> SimulatedDrive | None:
    """A `sim:` run's calibration against the drive its preset imitates; None for a real drive."""
    preset = sim_preset(run)
    if preset is None:
        return None
    imitates, tolerance, figures = calibration(preset)
    sim, wall = _seconds(store, run["id"])
    return SimulatedDrive(preset, imitates, tolerance, figures, sim, wall, len(run["target"].drives()))


def conformance_line(verdict: Verdict) -> VerdictLine:
    spec = (verdict.spec or "the spec").split(" (")[0]     # the profile's own remark stands under Conformance
    if verdict.conformant:
        return VerdictLine(f"Conformant to {spec}", True, "#conformance")
    return VerdictLine(f"NOT conformant to {spec}: {len(verdict.findings)} deviations", False, "#conformance")


def steady_line(headlines: Sequence[HeadlineOfTest]) -> VerdictLine | None:
    judged = [h for h in headlines if h.steady_reached is not None]
    if not judged:
        return None
    missed = [h.title for h in judged if not h.steady_reached]
    text = f"Steady state reached in {len(judged) - len(missed)} of {len(judged)} tests that judge it"
    return VerdictLine(text + (f"; NOT in {', '.join(missed)}" if missed else ""), not missed, "#summary")


def criteria_line(c: CriteriaVerdict) -> VerdictLine:
    text = f"Criteria {c.name}: {'PASS' if c.passed else 'FAIL'} ({c.held} of {c.total} rules hold)"
    if c.failures:      # rule names only: the evidence stands under Criteria
        names = [f.partition(":")[0] for f in c.failures]
        text += "; fails " + ", ".join(names[:4]) + (f" (+{len(names) - 4} more)" if len(names) > 4 else "")
    return VerdictLine(text, c.passed, "#criteria")


def headline_page(store, run: dict, verdict: Verdict, headlines: Sequence[HeadlineOfTest], art: Artifacts,
                  drive: list[tuple[str, str]], claims: Sequence[dict] | None = None,
                  criteria: CriteriaVerdict | None = None, sections: Sequence[dict] = (),
                  extra_links: Sequence[tuple[str, str]] = ()) -> HeadlinePage:
    """The first screen of a report; `drive`: the rows that name the drive; `claims`: claimed.claim_rows when
    claims are known; `sections`: the report's test sections (for the links)."""
    verdicts = [conformance_line(verdict)]
    if (steady := steady_line(headlines)) is not None:
        verdicts.append(steady)
    if criteria is not None:
        verdicts.append(criteria_line(criteria))
    lines = claim_lines(claims or [])
    links = [("All key figures", "#summary"), ("Conformance", "#conformance"), *extra_links]
    links += [(s["title"], f"#{s['anchor']}") for s in sections]
    links.append(("results.json", "results.json"))
    return HeadlinePage(drive, verdicts, key_figures(headlines), sum(len(h.figures) for h in headlines), lines[:6],
                        len(lines), first_charts(art.saved), links, simulated_drive(store, run))


def headline_page_data(page: HeadlinePage) -> dict:
    """The headline page as plain data for results.json (the charts by their plot key)."""
    data = dataclasses.asdict(page)
    data["charts"] = [c.key for c in page.charts]
    return data


# ---------------------------------------------------------------------------------------------
# the compare page's headline: the drives side by side

LOWER_IS_BETTER = {"µs", "us", "ms", "s"}
FIRST_COMPARE_CHARTS = ("lat-iops-reviewers-p99_99", "iops-*", "wsat-*iops*", "throughput-*", "dirth-*", "cbw-*",
                        "latency-mean", "hir-*", "fresh-peak-*")


@dataclass(frozen=True)
class RunLine:
    """One run of a comparison as its headline names it."""

    label: str                   # the series name in every chart and table
    drive: str
    capacity: str
    profile: str
    verdict: VerdictLine
    simulated: str               # "" for a real drive, else "simulated: preset client (imitates ...)"


def side_value(value: float) -> str:
    """A key figure's value in the compare page's side-by-side table (the results site prints the same)."""
    return f"{value:,.1f}"


@dataclass(frozen=True)
class SideBySide:
    """A key figure of every run; Δ % against the first."""

    test: str
    label: str
    unit: str
    values: list[float | None]
    anchor: str

    @property
    def deltas(self) -> list[float | None]:
        base = self.values[0]
        return [None if v is None or not base else 100 * (v / base - 1) for v in self.values]

    @property
    def shown(self) -> list[str]:
        """Each value as the compare page prints it, its unit beside ("–": a run without it)."""
        return ["–" if v is None else f"{side_value(v)} {self.unit}" for v in self.values]

    @property
    def lower_is_better(self) -> bool:
        """Latencies: a rise is worse (the page colours a delta by whether it is better)."""
        return self.unit in LOWER_IS_BETTER


@dataclass(frozen=True)
class CompareHeadline:
    runs: list[RunLine]
    figures: list[SideBySide]
    charts: list[SavedFigure]
    links: list[tuple[str, str]]
    spec_sheets: list[str] = field(default_factory=list)


def side_by_side(per_test: Sequence[tuple[str, Sequence[Sequence[Headline]]]],
                 limit: int = KEY_FIGURES) -> list[SideBySide]:
    """Per test (name, each run's figures): its lead figure (as `key_figures` picks it) where every run has
    it."""
    out = []
    for test, runs in per_test:
        shared = [f for f in runs[0] if f.value is not None and all(
            any(g.key == f.key and g.value is not None for g in r) for r in runs[1:])]
        if not shared:
            continue
        lead = next((f for f in shared if "_final_" in f.key), shared[0])
        values = [next(g.value for g in r if g.key == lead.key) for r in runs]
        out.append(SideBySide(test, lead.label, lead.unit, values, f"#test-{test}"))
    return out[:limit]


def run_line(run: dict, label: str, drive: str, verdict: Verdict) -> RunLine:
    sim, preset = "", sim_preset(run)
    if preset is not None:
        imitates, _, figures = calibration(preset)
        missed = sum(not f.held for f in figures)
        several = "" if len(run["target"].drives()) == 1 else f"; {len(run['target'].drives())} drives summed"
        sim = f"simulated, preset {preset}" + (f" (imitates {imitates.split(',')[0]}; {missed} of {len(figures)} "
                                               f"review figures not held{several})" if imitates else ", no calibration")
    size = run["target"].size_bytes
    # the spec in full stands in each run's report: here the verdict and its count
    short = VerdictLine("conformant" if verdict.conformant else f"NOT conformant ({len(verdict.findings)} "
                        "deviations)", verdict.conformant, "#runs")
    return RunLine(label, drive, f"{size / 2**30:,.2f} GiB", str(run.get("profile_name")), short, sim)
