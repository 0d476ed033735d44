"""`ssdpts compare`: the same tests from several runs (drives, firmware, settings) overlaid in one page."""

from __future__ import annotations

import logging
import time
import traceback
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Sequence

from markupsafe import Markup, escape

from .. import __version__
from ..errors import SsdptsError
from ..inputs import one_line
from ..pts.registry import find
from ..pts.spec import Headline
from ..results import SteadyResult
from ..store import Store
from ..units import bs_label
from ..render import plots
from .claimed import load_claims
from ..render.context import CompareContext, RunView, device_label
from .core import env, require_runs
from .headline import FIRST_COMPARE_CHARTS, CompareHeadline, first_charts, run_line, side_by_side
from ..render.matching import CompareOptions, SpecSheet, parse_mix_match
from ..render.toolkit import Artifacts

log = logging.getLogger("ssdpts")


@dataclass(frozen=True)
class TrackingSeries:
    """One tracking variable of one run's test phase, per round, in its shown unit (what `generic_compare`
    overlays, and the results site draws in the browser)."""

    label: str                   # the tracking variable, as the rounds store it
    unit: str                    # its shown unit ("" when it has none)
    rounds: list[int]
    values: list[float]          # scaled to `unit`


def tracking_series(view: RunView, phase: str) -> dict[str, TrackingSeries]:
    """Every tracking variable of one phase of a run's test, in the order its rounds first record them."""
    rounds = view.rounds(phase, with_cells=False)
    out = {}
    for label in dict.fromkeys(k for r in rounds for k in r.tracking):
        unit, scale = plots.unit_of(label)
        out[label] = TrackingSeries(label, unit, [r.round for r in rounds if label in r.tracking],
                                    [r.tracking[label] * scale for r in rounds if label in r.tracking])
    return out


def generic_compare(ctx: CompareContext) -> Markup:
    """Tests without a compare renderer: tracking variables per round, one series per run."""
    html = []
    phases = [p for p in ctx.views[0].phases() if all(p in v.phases() for v in ctx.views[1:])]
    for phase in phases:
        per = [tracking_series(v, phase) for v in ctx.views]
        for label in [k for k in per[0] if all(k in p for p in per[1:])]:
            series = {v.label: (p[label].rounds, p[label].values) for v, p in zip(ctx.views, per)}
            fig = ctx.figure()
            plots.series_plot(fig, series, "round", per[0][label].unit or "value", ylim0=True)
            ph = f" ({phase})" if phase else ""
            html.append(ctx.plot(fig, f"{phase}-{label}", f"{label} per round{ph}, one series per run"))
    def steady(v: RunView) -> str:
        st = getattr(v.summary, "steady", None)
        return ("reached" if st.reached else "NOT reached") if isinstance(st, SteadyResult) else "not applicable"

    rows = [[v.label, len(v.rounds(with_cells=False)), steady(v)] for v in ctx.views]
    html.append(ctx.table("rounds", ["Run", "Rounds", "Steady state"], rows, caption="Rounds per run"))
    return Markup("").join(html)


@dataclass
class SectionNotes:
    """What is stated above a test's compare tables: settings that differ between the runs and results that
    did not reach steady state (the cells dropped or matched are stated by each table)."""

    differing: list[str] = field(default_factory=list)     # "cell_runtime: A 0.25 s, B 0.3 s"
    not_steady: list[str] = field(default_factory=list)    # "A: steady state NOT reached (bs=128K)"

    def html(self) -> Markup:
        lines = [f"settings differ: {d}" for d in self.differing] + self.not_steady
        if not lines:
            return Markup("")
        return Markup('<ul class="compare-notes">') + Markup("").join(
            Markup("<li>") + escape(x) + Markup("</li>") for x in lines) + Markup("</ul>")


def _fmt_setting(name: str, v) -> str:
    if isinstance(v, tuple):
        return "[" + ", ".join(_fmt_setting(name, x) for x in v) + "]"
    if "block_size" in name and isinstance(v, int):
        return bs_label(v)
    return f"{v:g}" if isinstance(v, float) else str(v)


# differ by design between runs (a fresh random seed each): not a difference of method
NOT_METHOD = {"seed"}


def _not_steady(summary, label: str) -> list[str]:
    """Every steady-state result of a summary that was not reached (the test's own, and per block size etc.)."""
    out = []
    for f in fields(summary) if is_dataclass(summary) else ():
        value = getattr(summary, f.name)
        for item in value if isinstance(value, list) else [value]:
            st = item if isinstance(item, SteadyResult) else getattr(item, "steady", None)
            if isinstance(st, SteadyResult) and not st.reached:
                where = f" ({st.phase})" if st.phase else ""
                out.append(f"{label}: steady state NOT reached{where}")
    return out


def section_notes(views: Sequence[RunView]) -> SectionNotes:
    notes = SectionNotes()
    profiles = {v.run_id: v.run.get("profile_name") for v in views}
    if len(set(profiles.values())) > 1:
        notes.differing.append("profile: " + ", ".join(f"{k} {p}" for k, p in profiles.items()))
    settings = [v.settings for v in views]
    for f in fields(settings[0]):
        values = [getattr(s, f.name, None) for s in settings]
        if f.name not in NOT_METHOD and any(x != values[0] for x in values[1:]):
            notes.differing.append(f"{f.name}: " + ", ".join(f"{v.run_id} {_fmt_setting(f.name, x)}"
                                                             for v, x in zip(views, values)))
    for v in views:
        notes.not_steady += _not_steady(v.summary, v.run_id)
    return notes


def load_options(spec_sheets: Sequence[str] = (), match_mix: Sequence[str] = ()) -> CompareOptions:
    """Read and check every spec-sheet file and --match-mix pair (one-line errors, before anything is written)."""
    sheets = tuple(SpecSheet.of_claims(load_claims(p), str(p)) for p in spec_sheets)
    return CompareOptions(spec_sheets=sheets, mix_matches=tuple(parse_mix_match(m) for m in match_mix))


def series_names(store: Store, runs: Sequence[dict], given: Sequence[str] = ()) -> dict[str, str]:
    """Run id -> its name in the comparison's legends and tables: `--label RUN=NAME` (RUN: an id or part of one),
    else the label stored by `run --label`. Two runs given the same name are refused; two runs whose stored
    labels collide keep their ids beside the name, so no series hides another."""
    ids = [r["id"] for r in runs]
    names: dict[str, str] = {}
    for item in given:
        run, sep, name = item.partition("=")
        name = one_line(name, "--label", "write the name on one line")
        if not sep or not run.strip() or not name:
            raise SsdptsError(f"--label {item!r} is not RUN=NAME; write e.g. --label {ids[0]}=partition")
        rid = store.run_id(run.strip())
        if rid not in ids:
            raise SsdptsError(f"--label {item!r}: run {rid} is not one of the compared runs ({', '.join(ids)}); "
                              "name a run given to compare")
        if rid in names:
            raise SsdptsError(f"--label names run {rid} twice ({names[rid]!r}, {name!r}); give it one name")
        names[rid] = name
    twice = [n for n in set(names.values()) if list(names.values()).count(n) > 1]
    if twice:
        raise SsdptsError(f"--label gives {twice[0]!r} to several runs; give each run its own name")
    stored = {r["id"]: r["options"].label for r in runs if r["id"] not in names and r["options"].label}
    merged = {**stored, **names}
    return {rid: (n if list(merged.values()).count(n) == 1 else f"{n} · {rid}") for rid, n in merged.items()}


def run_label(run: dict, name: str | None) -> str:
    """A run as the comparison's first screen names it: its series name with drive and id, or drive and id."""
    return f"{name} ({device_label(run)} · {run['id']})" if name else f"{device_label(run)} · {run['id']}"


def compare_views(store: Store, runs: Sequence[dict], name: str, names: dict[str, str] | None = None) -> list[RunView]:
    """The RunView of test `name` in each run (the runs must all have it), named as `series_names` says."""
    spec = find(name)
    names = series_names(store, runs) if names is None else names
    return [RunView(store, r, next(t for t in store.tests(r["id"]) if t["name"] == name), spec, names.get(r["id"]))
            for r in runs]


def key_figures_of(views: Sequence[RunView]) -> list[list[Headline]] | None:
    """Each run's key figures of one test (its `headline` renderer); None where the test names none or a run
    stored no summary."""
    spec = find(views[0].name)
    if spec is None or spec.headline is None or any(v.summary is None for v in views):
        return None
    return [spec.headline(v.summary) for v in views]


def compare_headline(store: Store, runs: Sequence[dict], labels: Sequence[str], common: Sequence[str],
                     sections: Sequence[dict], art: Artifacts, options: CompareOptions) -> CompareHeadline:
    """The compare page's first screen: each run and its verdict, the key figures side by side, three charts,
    links down to the evidence."""
    from ..conformance import check
    from ..runresult.model import load_run

    lines = [run_line(r, label, device_label(r), check(load_run(store, r["id"]), store))
             for r, label in zip(runs, labels)]
    per_test = []
    for name in common:
        figures = key_figures_of(compare_views(store, runs, name))
        if figures is not None:
            per_test.append((name, figures))
    links = [("Runs", "#runs")] + [(s["title"], f"#{s['anchor']}") for s in sections]
    return CompareHeadline(lines, side_by_side(per_test), first_charts(art.saved, order=FIRST_COMPARE_CHARTS), links,
                           [s.label for s in options.spec_sheets])


def write_compare(store: Store, run_ids: Sequence[str], out_dir: str | Path, strict: bool = False,
                  options: CompareOptions = CompareOptions(), labels: Sequence[str] = ()) -> Path:
    if len(run_ids) + len(options.spec_sheets) < 2 or not run_ids:
        raise SsdptsError("compare needs at least two runs, or one run and a --spec-sheet (a claims file)")
    runs = require_runs(store, run_ids)
    named = series_names(store, runs, labels)     # a bad --label: one line, before anything is written
    names = [[t["name"] for t in store.tests(r["id"]) if t.get("summary") or t["status"] == "completed"] for r in runs]
    common = [n for n in names[0] if all(n in other for other in names[1:])]
    if not common:
        raise SsdptsError("the runs share no test with results (" + "; ".join(
            f"{r['id']}: {', '.join(n) or 'none'}" for r, n in zip(runs, names)) + "); nothing to compare")
    skipped = sorted({n for ns in names for n in ns} - set(common))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    art = Artifacts(out)
    sections = []
    for name in common:
        spec = find(name)
        views = compare_views(store, runs, name, named)
        ctx = CompareContext(name, spec, views, art, options)
        renderer = spec.compare if spec else None
        sec = {"name": name, "title": ctx.title, "anchor": f"test-{name}", "body": Markup("")}
        try:
            sec["body"] = section_notes(views).html() + (Markup(renderer(ctx)) if renderer else generic_compare(ctx))
        except Exception:
            if strict:
                raise
            log.exception("compare section %s failed", name)
            sec["body"] = Markup(f'<pre class="error">report section failed: {escape(traceback.format_exc(limit=3))}</pre>')
        sections.append(sec)
    labels = [run_label(r, named.get(r["id"])) for r in runs]
    page = compare_headline(store, runs, labels, common, sections, art, options)
    html = env().get_template("compare.html.j2").render(
        runs=runs, labels=labels, labels_model=[device_label(r) for r in runs],
        names=[named.get(r["id"], "") for r in runs],
        sections=sections, skipped=skipped, version=__version__, generated=time.time(),
        spec_sheets=[(s.label, s.source) for s in options.spec_sheets], page=page)
    path = out / "compare.html"
    path.write_text(html, encoding="utf-8")
    art.close()
    return path
