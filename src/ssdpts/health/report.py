"""The "Health" part of reports: SMART / NVMe deltas per test, for any run.

Two entry points for the report core (neither ever raises; both return Markup, empty when there is
nothing to show):

* `health_block(ctx)`  - one test (ctx: ssdpts.render.context.SectionContext): a small table of
  what the test did to the drive (host/NAND bytes, WAF, wear, errors, temperature before/after).
  Hook: in `report/core.py::render_sections`, after the section body is rendered:
      sec["body"] += health_block(ctx)
* `health_section(store, run, art)` - the whole run: one row per test, the same columns.
  Hook: render it once per report (e.g. next to `claimed_section`) and place it in the template.
"""

from __future__ import annotations

import logging

from markupsafe import Markup, escape

from .projection import deltas
from .record import HealthSnapshot

log = logging.getLogger("ssdpts")

HEADERS = ["Test", "Host written (GB)", "Host read (GB)", "NAND written (GB)", "WAF", "Wear before (%)",
           "Wear after (%)", "Δ wear (%)", "Δ media errors", "Temperature before → after (°C)", "Source"]


def _pair(store_steps: list[dict]) -> tuple[HealthSnapshot | None, HealthSnapshot | None]:
    """A test's snapshots before and after it, as the store decodes them."""
    by_key = {s["key"]: s["data"] for s in store_steps}
    return by_key.get("health:before"), by_key.get("health:after")


def _gb(v):
    return None if v is None else v / 1e9


def _temp(a, b) -> str:
    if a is None and b is None:
        return "–"
    f = (lambda v: "–" if v is None else f"{v:.0f}")
    return f"{f(a)} → {f(b)}"


def row_for(test: str, before: HealthSnapshot | None, after: HealthSnapshot | None) -> list | None:
    """One table row, or None when the test has no health snapshots at all."""
    if before is None and after is None:
        return None
    d = deltas(before, after)
    if not d.get("available"):
        return [test] + [None] * 9 + [f"not available: {d.get('reason')}"]
    src = next((s.source for s in (after, before) if s is not None and s.source), "")
    return [test, _gb(d["host_written_bytes"]), _gb(d["host_read_bytes"]), _gb(d["media_written_bytes"]),
            d["waf"], d["wear_before"], d["wear_after"], d["wear_percent"], d["media_errors"],
            _temp(d["temperature_before_c"], d["temperature_after_c"]), src]


def health_block(ctx) -> Markup:
    """SMART deltas of one test (before -> after). Empty Markup when no snapshot was stored."""
    try:
        before, after = _pair(ctx.steps("health"))
        row = row_for(ctx.name, before, after)
        if row is None:
            return Markup("")
        if after is None:
            row[-1] = f"{row[-1]} (test not finished: no 'after' snapshot yet)"
        return ctx.table("health", HEADERS, [row], caption="Health (SMART / NVMe) before → after this test; "
                         "GB = 10^9 bytes, WAF = Δ NAND writes / Δ host writes")
    except Exception as e:   # never lose a report for health data
        log.warning("health block for %s failed: %s", getattr(ctx, "name", "?"), e)
        return Markup(f'<p class="warn">Health table failed: {escape(str(e))}</p>')


def health_section(store, run: dict, art) -> Markup:
    """One table for the whole run: a row per test with health snapshots."""
    try:
        rows = []
        for t in store.tests(run["id"]):
            r = row_for(t["name"], *_pair([s for s in store.steps(run["id"], t["name"]) if s["kind"] == "health"]))
            if r is not None:
                rows.append(r)
        if not rows:
            return Markup("")
        tab = art.table("health-deltas", HEADERS, rows,
                        "Health (SMART / NVMe) deltas per test; GB = 10^9 bytes, WAF = Δ NAND / Δ host writes", None)
        return Markup('<section id="health"><h2>Health</h2>') + tab + Markup("</section>")
    except Exception as e:
        log.warning("health section failed: %s", e)
        return Markup(f'<p class="warn">Health section failed: {escape(str(e))}</p>')
