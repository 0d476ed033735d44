"""`ssdpts site`: a static results site over a results store (docs/site.md).

Plain files that work from file:// and any web server: `index.html` lists every run (filterable by model,
firmware, capacity, profile, label and date; the data in `site-data.js`, a script, because a browser reads no
JSON file from file://), each run's report (`runs/ID/report.html`, written by the report's own `HtmlReport`), and
comparisons written by `compare`'s own writer (`compare/KEY/compare.html`), pre-generated for every pair of runs
of one drive model that share a test, every model's runs together (two to eight, the newest), and each set given
with `--compare`. Any other two to eight runs a reader ticks are compared in the browser (`compare.html?runs=...`)
from each run's `runs/ID/compare-data.js`: its run line, its tests' key figures and per-round tracking series,
made by the functions `compare` itself uses; that page draws less than `compare` and says so. Runs are read
only through the Store and RunResult APIs.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from dataclasses import asdict, dataclass
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from .. import __version__
from ..errors import SsdptsError
from ..store import Store

TEMPLATES = Path(__file__).parent / "templates"
if TYPE_CHECKING:                 # typed records of modules the site imports where it writes (compare loads plots)
    from ..conformance import Verdict
    from ..pts.spec import Headline
    from .compare import TrackingSeries
    from .headline import RunLine

MARKER = ".ssdpts-site"           # in the site's folder: made by `ssdpts site`, so a rebuild may replace it
MAX_COMPARED = 8


@dataclass(frozen=True)
class SiteRun:
    """One run as the index lists it."""
    id: str
    date: str                    # YYYY-MM-DD, the run's creation (UTC)
    created: float
    status: str
    model: str
    firmware: str
    capacity: str                # GiB, as the report and compare pages give it
    profile: str
    label: str
    target: str
    simulated: bool
    tests: list[str]
    report: str                  # relative link, "" when the run has nothing to report


@dataclass(frozen=True)
class SiteComparison:
    runs: list[str]              # run ids, in the order compare lays them out
    page: str                    # relative link
    why: str                     # "same model" | "asked for"


@dataclass(frozen=True)
class SitePhase:
    phase: str                   # "" the main loop
    tracking: list[TrackingSeries]   # in the order compare overlays them


@dataclass(frozen=True)
class SiteFigure:
    figure: Headline
    shown: str | None            # its value as compare's side-by-side table prints it (headline.side_value)


@dataclass(frozen=True)
class SiteTest:
    name: str
    title: str
    figures: list[SiteFigure] | None     # its key figures; None: compare shows none (no renderer or no summary)
    phases: list[SitePhase]


@dataclass(frozen=True)
class SiteRunData:
    """What the in-browser comparison reads of one run (`runs/ID/compare-data.js`): the run line, key figures
    and per-round tracking series `compare` shows, computed by compare's own functions. A series name depends on
    the set compared (two runs of one stored label keep their ids beside it, `compare.series_names`), so `name`
    is the stored label and the page applies that rule."""

    id: str
    name: str                    # the label stored by `run --label`; "" none
    line: RunLine                # its `label` is this run's when no other compared run has its label
    series: str                  # its name in the overlays' legends, when no other run has its label
    tests: list[SiteTest]


def check_out(out: Path) -> None:
    """A folder the site may be written into: new, empty, or made by `ssdpts site` before; writable."""
    from ..inputs import output_dir

    output_dir(out, "--out")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise SsdptsError(f"--out {out} is not empty and was not made by 'ssdpts site'; give a new or empty folder "
                          "(a site folder is replaced as a whole)")


def key_of(run_ids: Sequence[str]) -> str:
    return hashlib.sha1(",".join(sorted(run_ids)).encode()).hexdigest()[:12]


def _capacity(size: int) -> str:
    return f"{size / 2**30:,.2f} GiB"


def site_runs(store: Store) -> list[SiteRun]:
    from ..render.context import device_label

    out = []
    for r in store.runs():
        t = r["target"]
        tests = [x["name"] for x in store.tests(r["id"]) if x.get("summary") or x["status"] == "completed"]
        out.append(SiteRun(
            id=r["id"], date=time.strftime("%Y-%m-%d", time.gmtime(r["created"])), created=r["created"],
            status=r["status"], model=device_label(r), firmware=(t.firmware or "").strip() or "not reported",
            capacity=_capacity(t.size_bytes), profile=r["profile_name"], label=r["options"].label or "",
            target=r["target_spec"], simulated=t.kind == "sim", tests=tests,
            report=f"runs/{r['id']}/report.html" if tests else ""))
    return sorted(out, key=lambda x: x.created)


def planned_comparisons(runs: list[SiteRun], asked: Sequence[Sequence[str]]) -> list[tuple[list[str], str]]:
    """Which sets get a compare page: pairs of one model sharing a test, each model's newest two to eight together,
    and the sets asked for (in their given order)."""
    sets: dict[frozenset, tuple[list[str], str]] = {}
    for ids in asked:
        sets.setdefault(frozenset(ids), (list(ids), "asked for"))
    by_model: dict[str, list[SiteRun]] = {}
    for r in runs:
        if r.tests:
            by_model.setdefault(r.model, []).append(r)
    for group in by_model.values():
        for a, b in combinations(group, 2):
            if set(a.tests) & set(b.tests):
                sets.setdefault(frozenset((a.id, b.id)), ([a.id, b.id], "same model"))
        newest = group[-MAX_COMPARED:]
        if len(newest) > 2 and set.intersection(*(set(r.tests) for r in newest)):
            sets.setdefault(frozenset(r.id for r in newest), ([r.id for r in newest], "same model"))
    return list(sets.values())


def run_data(store: Store, run: dict, verdict: Verdict) -> SiteRunData:
    """One run's comparison data (a run with at least one test with results), through the functions `ssdpts
    compare` uses."""
    from ..pts.registry import find
    from ..render.context import RunView, device_label
    from .compare import key_figures_of, run_label, series_names, tracking_series
    from .headline import run_line, side_value

    name = series_names(store, [run]).get(run["id"])
    tests, series = [], ""
    for t in store.tests(run["id"]):
        if not (t.get("summary") or t["status"] == "completed"):
            continue
        spec = find(t["name"])
        view = RunView(store, run, t, spec, name)
        series = view.label
        figures = key_figures_of([view])
        tests.append(SiteTest(
            t["name"], spec.title if spec else t["name"].upper(),
            None if figures is None else [SiteFigure(f, None if f.value is None else side_value(f.value))
                                          for f in figures[0]],
            [SitePhase(p, list(tracking_series(view, p).values())) for p in view.phases()]))
    line = run_line(run, run_label(run, name), device_label(run), verdict)
    return SiteRunData(run["id"], name or "", line, series, tests)


def results_option(store: Store) -> str:
    """What `--results` takes to open this store again: a SQLite store's folder, a PostgreSQL store's address
    as shown (no password)."""
    return str(store.path.parent.resolve()) if isinstance(store.path, Path) else str(store.path)


def js_data(variable: str, key: str | None, data) -> str:
    """A script that sets `window.VARIABLE` (or its entry KEY) to `data`: the browser loads it from file://,
    where it reads no JSON file."""
    text = json.dumps(data, indent=None if key else 1, ensure_ascii=False)
    if key is None:
        return f"window.{variable} = {text};\n"
    return f"window.{variable} = window.{variable} || {{}};\nwindow.{variable}[{json.dumps(key)}] = {text};\n"


def write_site(store: Store, out: Path, asked: Sequence[Sequence[str]] = (), log=lambda line: None) -> Path:
    """The whole site into `out` (checked with `check_out` first); its index page."""
    from ..conformance import check
    from ..runresult.model import load_run
    from .compare import write_compare
    from ..render.toolkit import SERIES_COLOURS
    from .headline import KEY_FIGURES, LOWER_IS_BETTER
    from .html import HtmlReport

    runs = site_runs(store)
    known = {r.id for r in runs}
    asked = [[store.run_id(i) for i in ids] for ids in asked]
    for ids in asked:
        if not 2 <= len(ids) <= MAX_COMPARED or len(set(ids)) != len(ids):
            raise SsdptsError(f"--compare {','.join(ids)}: give two to {MAX_COMPARED} different runs")
        missing = [i for i in ids if i not in known]
        if missing:
            raise SsdptsError(f"--compare: no run {', '.join(missing)} in {store.path}; 'ssdpts list' shows them")
    plan = planned_comparisons(runs, asked)
    if out.exists():
        for child in out.iterdir():              # a site folder (check_out): replaced as a whole
            shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text(json.dumps({"made_by": "ssdpts site", "version": __version__}) + "\n")
    for r in runs:
        if r.report:
            log(f"report {r.id}")
            run = load_run(store, r.id)
            verdict = check(run, store)
            HtmlReport(store).write(run, verdict, out / "runs" / r.id)
            (out / "runs" / r.id / "compare-data.js").write_text(
                js_data("SSDPTS_RUNS", r.id, asdict(run_data(store, store.run(r.id), verdict))), encoding="utf-8")
    comparisons = []
    for ids, why in plan:
        page = Path("compare") / key_of(ids)
        log(f"compare {' '.join(ids)}")
        try:
            write_compare(store, ids, out / page)
        except SsdptsError as e:                 # e.g. no shared test with results: said on the index
            log(f"compare {' '.join(ids)} not written: {e}")
            continue
        comparisons.append(SiteComparison(ids, f"{page}/compare.html", why))
    data = {"generated": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "version": __version__,
            "store": str(store.path), "results": results_option(store), "max_compared": MAX_COMPARED, "key_figures": KEY_FIGURES,
            "lower_is_better": sorted(LOWER_IS_BETTER), "colours": SERIES_COLOURS,
            "runs": [asdict(r) for r in runs], "comparisons": [asdict(c) for c in comparisons]}
    (out / "site-data.js").write_text(js_data("SSDPTS_SITE", None, data), encoding="utf-8")
    for page, template in (("index.html", "site-index.html"), ("compare.html", "site-compare.html"),
                           ("site.js", "site.js"), ("style.css", "style.css")):
        (out / page).write_text((TEMPLATES / template).read_text(encoding="utf-8"), encoding="utf-8")
    return out / "index.html"
