"""The HTML report as an exporter (`ssdpts report`, the runner's end-of-run report, `export --format html`):
report.html with its plots, its tables as CSV and the JSON results document beside it, over one `RunResult`
and its verdict (export/exporter.py's `Exporter`).

The sections are laid out from the store the run was loaded from: each test's renderer reads its rounds and
steps through a section context (render/context.py), so this exporter holds the store, as `CsvTables` does."""

from __future__ import annotations

import json
import time
from pathlib import Path

from markupsafe import Markup

from .. import __version__
from ..conformance import Verdict, check
from ..export.json import document
from ..render.context import device_label
from ..render.drives import member_rows
from ..render.toolkit import Artifacts
from ..runresult.model import RunResult, load_run
from ..store import Store
from .claimed import claim_rows, claimed_section, load_claims
from .core import conformance_block, default_out_dir, drive_rows, env, render_sections, simulated_block
from .headline import CriteriaVerdict, headline_block, headline_data, headline_page, headline_page_data, \
    headlines_of_run, sim_preset
from .notice import run_notice


class HtmlReport:
    """OUT_DIR/report.html (+ plots/*.png|svg, tables/*.csv, results.json); `write` returns report.html first.

    `claims`: vendor claims as `claimed.load_claims` read them (the caller reads them first: a bad file is
    refused before anything is written or judged). `criteria`: the lab's acceptance rules as judged (the command layer judges them), shown
    in the verdict. `strict`: a section that fails to render raises instead of showing its error in the page.
    `embed`: the plots also inside report.html, so that the page is complete on its own."""

    def __init__(self, store: Store, *, claims: dict | None = None, criteria: CriteriaVerdict | None = None,
                 strict: bool = False, embed: bool = True):
        self.store = store
        self.claims = claims
        self.criteria = criteria
        self.strict = strict
        self.embed = embed

    def write(self, run: RunResult, verdict: Verdict, out_dir: Path) -> list[Path]:
        store, claims, criteria = self.store, self.claims, self.criteria
        stored = store.run(run.id)
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        art = Artifacts(out, embed=self.embed)
        sections = render_sections(store, stored, art, strict=self.strict)
        claimed_html = Markup("") if claims is None else claimed_section(store, stored, claims, art)
        notice = run_notice(store, stored, art)
        doc = document(run, verdict)
        headlines = headlines_of_run(store, stored, verdict)
        links = [(text, href) for text, href, shown in (
            ("Run status", "#run-status", bool(notice)), ("Claimed vs measured", "#claimed", claims is not None),
            ("Criteria", "#criteria", criteria is not None),
            ("Simulated drive", "#simulated", sim_preset(stored) is not None)) if shown]
        page = headline_page(store, stored, verdict, headlines, art, drive_rows(stored),
                             claim_rows(store, stored, claims) if claims is not None else None, criteria, sections,
                             links)
        doc["headline"] = headline_data(headlines)
        doc["headline_page"] = headline_page_data(page)
        results_json = out / "results.json"
        results_json.write_text(json.dumps(doc, indent=1, default=str))
        html = env().get_template("report.html.j2").render(
            run=stored, model=device_label(stored), sections=sections, claimed=claimed_html, version=__version__,
            generated=time.time(), tests=sections, run_notice=notice, drives=member_rows(stored),
            conformance=conformance_block(verdict, art), headline=headline_block(headlines, verdict, art), page=page,
            criteria=criteria, simulated=simulated_block(page.simulated, art))
        path = out / "report.html"
        path.write_text(html, encoding="utf-8")
        art.close()
        return [path, results_json, *art.written]


def write_report(store: Store, run_id: str, out_dir: str | Path | None = None, *, claimed: str | Path | None = None,
                 strict: bool = False, embed: bool = True, criteria: CriteriaVerdict | None = None) -> Path:
    """The HTML report of a stored run by its id, the path of its report.html: the run read and judged once,
    then `HtmlReport`. Default out_dir: <results dir>/reports/<run_id>/. Safe to call on unfinished runs."""
    claims = load_claims(claimed) if claimed else None   # a bad claims file: refused before anything is read
    run = load_run(store, run_id)
    out = Path(out_dir) if out_dir else default_out_dir(store, run.id)
    exporter = HtmlReport(store, claims=claims, criteria=criteria, strict=strict, embed=embed)
    return exporter.write(run, check(run, store), out)[0]
