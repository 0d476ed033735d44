"""`ssdpts compare`: the same tests from several runs (drives, firmware, settings) overlaid in one page."""

from __future__ import annotations

import logging
import time
import traceback
from pathlib import Path
from typing import Sequence

from markupsafe import Markup, escape

from .. import __version__
from ..errors import SsdptsError
from ..pts.registry import find
from ..pts.results import SteadyResult
from ..store import Store
from . import plots
from .context import CompareContext, RunView, device_label
from .core import env, require_runs
from .toolkit import Artifacts

log = logging.getLogger("ssdpts")


def generic_compare(ctx: CompareContext) -> Markup:
    """Tests without a compare renderer: tracking variables per round, one series per run."""
    html = []
    phases = [p for p in ctx.views[0].phases() if all(p in v.phases() for v in ctx.views[1:])]
    for phase in phases:
        per = [v.rounds(phase, with_cells=False) for v in ctx.views]
        labels = [k for k in dict.fromkeys(k for r in per[0] for k in r.tracking)
                  if all(any(k in r.tracking for r in rr) for rr in per[1:])]
        for label in labels:
            unit, scale = plots.unit_of(label)
            series = {v.label: ([r.round for r in rr if label in r.tracking],
                                [r.tracking[label] * scale for r in rr if label in r.tracking])
                      for v, rr in zip(ctx.views, per)}
            fig = ctx.figure()
            plots.series_plot(fig, series, "round", unit or "value", ylim0=True)
            ph = f" ({phase})" if phase else ""
            html.append(ctx.plot(fig, f"{phase}-{label}", f"{label} per round{ph}, one series per run"))
    def steady(v: RunView) -> str:
        st = getattr(v.summary, "steady", None)
        return ("reached" if st.reached else "NOT reached") if isinstance(st, SteadyResult) else "not applicable"

    rows = [[v.label, len(v.rounds(with_cells=False)), steady(v)] for v in ctx.views]
    html.append(ctx.table("rounds", ["Run", "Rounds", "Steady state"], rows, caption="Rounds per run"))
    return Markup("").join(html)


def write_compare(store: Store, run_ids: Sequence[str], out_dir: str | Path, strict: bool = False) -> Path:
    if len(run_ids) < 2:
        raise SsdptsError("compare needs at least two runs")
    runs = require_runs(store, run_ids)
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
        views = [RunView(store, r, next(t for t in store.tests(r["id"]) if t["name"] == name), spec) for r in runs]
        ctx = CompareContext(name, spec, views, art)
        renderer = spec.compare if spec else None
        sec = {"name": name, "title": ctx.title, "anchor": f"test-{name}", "body": Markup("")}
        try:
            sec["body"] = Markup(renderer(ctx)) if renderer else generic_compare(ctx)
        except Exception:
            if strict:
                raise
            log.exception("compare section %s failed", name)
            sec["body"] = Markup(f'<pre class="error">report section failed: {escape(traceback.format_exc(limit=3))}</pre>')
        sections.append(sec)
    html = env().get_template("compare.html.j2").render(
        runs=runs, labels=[f"{device_label(r)} · {r['id']}" for r in runs], labels_model=[device_label(r) for r in runs],
        sections=sections, skipped=skipped, version=__version__, generated=time.time())
    path = out / "compare.html"
    path.write_text(html, encoding="utf-8")
    art.close()
    return path
