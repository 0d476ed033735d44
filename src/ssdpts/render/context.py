"""What a test's renderers receive: `SectionContext`, one test of one run (the run and test records, the typed
summary and settings, cached stored rounds, figures and tables through the toolkit's `Artifacts`), and
`CompareContext`, the same test in several runs (`views`, the first the base).

    def html(ctx: SectionContext) -> Markup:                    # pts/<test>/render.py
        s = ctx.summary                                          # the test's typed summary
        out = [ctx.steady_block("", s.steady)]
        fig = ctx.figure()
        plots.series_plot(fig, {...}, "round", "IOPS")
        out.append(ctx.plot(fig, "iops-vs-bs", "IOPS vs block size"))
        out.append(ctx.table("iops", headers, rows, caption="..."))
        return Markup("").join(out)

    def compare(ctx: CompareContext) -> Markup: ...              # optional: overlays several runs

    RENDERERS = Renderers(html=html, text=text, compare=compare)  # pts/spec.py; TestSpec(renderers=...)

The report (report/core.py) calls each test's `html` (and `compare`, `parts`, `headline`) through its
`TestSpec`, and gives a test that declares none its generic section (rounds table, tracking plot, steady state).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, Protocol, Sequence

from markupsafe import Markup, escape

from ..clock import Clock
from ..results import SteadyResult, TrackerKey
from ..settings import TestSettings, run_settings
from ..store import RoundRecord, Store
from . import plots
from .toolkit import Artifacts, Cell, fmt_delta, fmt_num, pct_delta
from .matching import CompareOptions



class SpecView(Protocol):
    """What a view reads of a test's declaration (`pts.spec.TestSpec` is one): declared here, below the tests,
    so the render kit never imports `pts/` (the report core passes the registry's spec in)."""

    @property
    def title(self) -> str: ...

    def decode(self, data: dict | None) -> Any: ...

    @property
    def settings(self) -> type[TestSettings]: ...


def device_label(run: dict) -> str:
    """The drive's model, or the device path when the model is unknown (loop, file)."""
    t = run["target"]
    model = (t.model or "").strip()
    if model:
        return model
    return f"{t.path or t.spec}" + (f" ({t.transport})" if t.transport else "")


class RunView:
    """One run's data as renderers read it: run record, test record, cached rounds."""

    def __init__(self, store: Store, run: dict, test: dict, spec: SpecView | None = None,
                 series_name: str | None = None):
        self.store = store
        self.run = run
        self.test = test
        self.spec = spec
        self.series_name = series_name       # compare --label RUN=NAME, else the run's own --label
        self._rounds: dict = {}

    @property
    def run_id(self) -> str:
        return self.run["id"]

    @property
    def name(self) -> str:
        return self.test["name"]

    @cached_property
    def summary(self) -> Any:
        """The test's typed summary (None when the test stored none)."""
        return self.spec.decode(self.test.get("summary")) if self.spec is not None else None

    @property
    def model(self) -> str:
        return device_label(self.run)

    @property
    def clock(self) -> Clock:
        """The run's clock: its durations and rates are simulated time where the simulated drive ran it."""
        return Clock.of_engine(self.run["engine"])

    @property
    def label(self) -> str:
        """Series label in comparisons: the run's name when it has one, else drive model + run id (a named
        run's id stays in the figures' stamp and the compare page's run table)."""
        return self.series_name or f"{self.model} · {self.run_id}"

    @cached_property
    def settings(self) -> TestSettings:
        """The test's typed settings from the profile the run stored (a test this ssdpts does not know: the
        keys every test has)."""
        record = self.spec.settings if self.spec is not None else TestSettings
        return run_settings(self.run.get("profile") or {}, {self.name: record}).of(self.name)

    def rounds(self, phase: str | None = None, kind: str = "round", with_cells: bool = True) -> list[RoundRecord]:
        key = (phase, kind, with_cells)
        if key not in self._rounds:
            cached = self._rounds.get((phase, kind, True))
            self._rounds[key] = cached if cached is not None else self.store.rounds(
                self.run_id, self.name, phase, kind=kind, with_cells=with_cells)
        return self._rounds[key]

    def phases(self) -> list[str]:
        return self.store.phases(self.run_id, self.name)

    def steps(self, kind: str | None = None) -> list[dict]:
        return [s for s in self.store.steps(self.run_id, self.name) if kind is None or s["kind"] == kind]


class _Base:
    art: Artifacts
    title: str
    name: str

    def figure(self, size: tuple[float, float] = (8.0, 4.2)):
        """A cleared, reusable matplotlib Figure (Agg)."""
        return self.art.figure(size)

    def _footer(self) -> str:
        raise NotImplementedError

    def _heading(self) -> str:
        raise NotImplementedError

    def plot(self, fig, key: str, title: str, caption: str = "") -> Markup:
        """Title the figure with device model and test, stamp the run id, save PNG + SVG, return HTML."""
        return self.art.save_figure(fig, f"{self.name}-{key}", f"{self._heading()} — {title}", self._footer(), caption)

    def table(self, key: str, headers: Sequence[str], rows: Sequence[Sequence[Any]], caption: str = "",
              csv_headers: Sequence[str] | None = None) -> Markup:
        """Write tables/<test>-KEY.csv and return the HTML table."""
        return self.art.table(f"{self.name}-{key}", headers, rows, caption, csv_headers)


class SectionContext(RunView, _Base):
    """One test of one run, as its renderers (`html`, `parts`) see it."""

    def __init__(self, store: Store, run: dict, test: dict, spec: SpecView | None, art: Artifacts):
        RunView.__init__(self, store, run, test, spec)
        self.art = art
        self.title = spec.title if spec is not None else test["name"].upper()

    def _heading(self) -> str:
        return f"{self.model} — {self.title}"

    def _footer(self) -> str:
        return f"ssdpts run {self.run_id}"

    def steady_block(self, phase: str = "", steady: SteadyResult | None = None, key: str = "") -> Markup:
        """Convergence plot, measurement-window plot and determination table of one steady-state loop."""
        return steady_block(self, phase, steady, key)


class CompareContext(_Base):
    """The same test in several runs; `views` keep the order given on the command line (first = base)."""

    def __init__(self, name: str, spec: SpecView | None, views: list[RunView], art: Artifacts,
                 options: CompareOptions = CompareOptions()):
        self.name = name
        self.spec = spec
        self.views = views
        self.art = art
        self.options = options          # spec-sheet drives and --match-mix pairs
        self.title = spec.title if spec is not None else name.upper()

    def _heading(self) -> str:
        return f"{self.title} (comparison)"

    def _footer(self) -> str:
        return "ssdpts runs " + ", ".join(v.run_id for v in self.views)

    def side_by_side(self, key: str, row_keys: Sequence[tuple], values: Sequence[Sequence[float | None]],
                     key_headers: Sequence[str], value_name: str, caption: str = "",
                     series: Sequence[str] | None = None) -> Markup:
        """Rows = row_keys; per run (or per `series`: runs, then spec sheets) a value column, after the first a
        % delta column against the first."""
        headers = list(key_headers)
        for i, label in enumerate(series or [v.label for v in self.views]):
            headers.append(f"{label} {value_name}")
            if i:
                headers.append(f"Δ vs {self.views[0].series_name or self.views[0].run_id}")
        rows = []
        for rk, vals in zip(row_keys, values):
            row: list = list(rk)
            for i, x in enumerate(vals):
                row.append(x)
                if i:
                    row.append(fmt_delta(pct_delta(x, vals[0])))
            rows.append(row)
        return self.table(key, headers, rows, caption)


# ------------------------------------------------------------------------------------------------
# the steady-state block shared by every steady-state test

def _series(rounds: list[RoundRecord], key: TrackerKey) -> list[float | None]:
    out = []
    for r in rounds:
        v = r.tracking.get(key.label)
        if v is None and r.cells:
            try:
                c = r.cell(key.cell)
                v = (c.parts[key.part] if key.part else c).metric(key.metric)
            except KeyError:
                v = None
        out.append(v)
    return out


def steady_block(ctx: SectionContext, phase: str = "", steady: SteadyResult | None = None, key: str = "") -> Markup:
    rounds = ctx.rounds(phase, with_cells=False)
    if not any(r.tracking for r in rounds):
        rounds = ctx.rounds(phase)
    key = key or (plots_key(phase) if phase else "steady")
    ph = f" ({phase})" if phase else ""
    if not steady or not rounds:
        return Markup(f'<p class="warn">No steady-state result stored{escape(ph)}.</p>')
    trackers = {t.key.label: t for t in steady.trackers}
    window = steady.window_rounds
    max_rounds = ctx.settings.steady.max_rounds
    win = f"rounds {window[0]}–{window[-1]}" if window else "no full window"
    if steady.reached:
        banner = (f'<p class="ss ok">Steady state reached{escape(ph)} in round {window[-1] if window else "?"}; '
                  f'measurement window {escape(win)}.</p>')
    else:
        banner = (f'<p class="ss bad"><strong>Steady state NOT reached{escape(ph)}</strong> after '
                  f'{steady.rounds} rounds (max {max_rounds}); results are from the last '
                  f'window ({escape(win)}). {escape("; ".join(steady.reasons))}</p>')
    html = [Markup(banner)]
    # convergence: every round, every tracking variable
    nums = [r.round for r in rounds]
    series = {}
    units = set()
    for label, t in trackers.items():
        unit, scale = plots.unit_of(t.key.metric)
        units.add(unit)
        vals = _series(rounds, t.key)
        series[label] = ([n for n, v in zip(nums, vals) if v is not None],
                         [v * scale for v in vals if v is not None])
    if series:
        ys = [y for _, yy in series.values() for y in yy if y and y > 0]
        logy = bool(ys) and max(ys) / min(ys) > 30
        fig = ctx.figure()
        unit = " / ".join(sorted(u for u in units if u)) or "value"
        plots.series_plot(fig, series, "round", unit, logy=logy, ylim0=not logy,
                          xticks=nums if len(nums) <= 30 else None)
        ax = fig.axes[0]
        if window:
            ax.axvspan(window[0] - 0.3, window[-1] + 0.3, color="#999999", alpha=0.15, label="measurement window")
            ax.legend(loc="best", framealpha=0.85)
        html.append(ctx.plot(fig, f"{key}-convergence", f"steady-state convergence{ph}",
                             "Tracking variables, every round."))
    # measurement window and determination
    panels, cols = [], []
    for label, t in trackers.items():
        st = t.state
        unit, scale = plots.unit_of(t.key.metric)
        wr = st.window_rounds or window
        vals = dict(zip(nums, _series(rounds, t.key)))
        if st.average is not None and wr and all(vals.get(r) is not None for r in wr):
            panels.append({"label": label, "unit": unit, "rounds": wr, "values": [vals[r] * scale for r in wr],
                           "average": st.average * scale, "slope": (st.slope or 0) * scale,
                           "intercept": (st.intercept or 0) * scale})
        cols.append((label, st, unit, scale))
    if panels:
        fig = ctx.figure((min(4.0 * len(panels), 12.0), 3.9 if len(panels) <= 3 else 6.8))
        plots.window_plots(fig, panels)
        html.append(ctx.plot(fig, f"{key}-window", f"steady-state measurement window{ph}",
                             "Average, ±10 % band (90 %..110 % of the average) and least-squares fit."))
    if cols:
        def num(st, k, scale):
            v = getattr(st, k)
            return None if v is None else v * scale

        rows = [
            ["Steady state"] + [Cell(st.reached, "reached" if st.reached else
                                     f"NOT reached ({st.reason or 'not judged'})",
                                     "ok" if st.reached else "bad") for _, st, _, _ in cols],
            ["Measurement window"] + [Cell(None, "–" if not st.window_rounds else
                                           f"rounds {st.window_rounds[0]}–{st.window_rounds[-1]}")
                                      for _, st, _, _ in cols],
            ["Unit"] + [Cell(None, u or "–") for _, _, u, _ in cols],
            ["Average"] + [num(st, "average", s) for _, st, _, s in cols],
            ["Allowed maximum data excursion"] + [num(st, "range_allowed", s) for _, st, _, s in cols],
            ["Measured maximum data excursion"] + [num(st, "range_measured", s) for _, st, _, s in cols],
            ["Allowed maximum slope excursion"] + [num(st, "slope_excursion_allowed", s) for _, st, _, s in cols],
            ["Measured maximum slope excursion"] + [num(st, "slope_excursion_measured", s) for _, st, _, s in cols],
            ["Least-squares linear fit formula"] + [Cell(None, fit_formula(st, s)) for _, st, _, s in cols],
        ]
        html.append(ctx.table(f"{key}-determination", ["Steady-state determination"] + [c[0] for c in cols], rows,
                              caption=f"Steady-state determination data{ph} (rule {_rule(cols)}; display units)"))
    return Markup("").join(html)


def _rule(cols) -> str:
    rules = {st.rule for _, st, _, _ in cols if st.rule}
    return ", ".join(sorted(rules)) or "snia"


def fit_formula(st, scale: float = 1.0) -> str:
    """The least-squares line of a SteadyState, in display units."""
    if st.slope is None or st.intercept is None:
        return "–"
    m, b = st.slope * scale, st.intercept * scale
    return f"y = {m:.4g} * R {'+' if b >= 0 else '-'} {abs(b):.6g}"


def plots_key(phase: str) -> str:
    return "steady-" + phase.replace("=", "")


__all__ = ["SectionContext", "CompareContext", "RunView", "steady_block", "device_label", "fmt_num", "fit_formula"]
