"""The report's 'Stimulus at the device' block of a test: each cell's I/O as the block layer (or the simulator)
counted it beside what the cell asked for (runresult/stimulus.py)."""

from __future__ import annotations

import logging

from markupsafe import Markup, escape

from ..engines.stimulus import size_label
from ..runresult.stimulus import summarise
from ..store.idle import CELL_KINDS

log = logging.getLogger("ssdpts")


def _pct(v: float | None) -> float | None:
    return None if v is None else 100 * v


def stimulus_block(ctx) -> Markup:
    """Never raises: a report is not lost for this block."""
    try:
        summary = summarise([r for kind in CELL_KINDS for r in ctx.rounds(kind=kind)])
        if not summary.measured:
            return Markup(f'<p class="note">Stimulus at the device: {escape(summary.why_unmeasured())}.</p>')
        bad = summary.mismatched
        head = Markup(f'<p class="{"ss bad" if bad else "note"}">Stimulus at the device: '
                      f'{len(summary.measured)} cells measured, '
                      f'{f"{len(bad)} NOT as asked (see the conformance verdict)" if bad else "all as asked"}.</p>')
        rows = [[c.kind, c.round, c.cell, c.asked, c.stimulus.read_ios, c.stimulus.write_ios,
                 size_label(c.stimulus.request_bytes("read") or 0) if c.stimulus.read_ios else "",
                 size_label(c.stimulus.request_bytes("write") or 0) if c.stimulus.write_ios else "",
                 _pct(c.stimulus.read_share), c.stimulus.queue_depth, _pct(c.stimulus.utilisation),
                 "; ".join(m.evidence for m in c.mismatches)] for c in summary.cells]
        table = ctx.table("stimulus", ["Kind", "Round", "Cell", "Asked", "Device reads", "Device writes",
                                       "Mean read request", "Mean write request", "Read share (% of bytes)",
                                       "Mean queue depth", "Utilisation (%)", "Mismatch"], rows,
                          caption="Each cell's I/O as " + ", ".join(dict.fromkeys(c.stimulus.source for c in summary.measured))
                          + " counted it (docs/conformance.md, 'Stimulus at the device')")
        return head + Markup(f"<details><summary>Stimulus per cell ({len(rows)} cells)</summary>{table}</details>")
    except Exception as e:
        log.warning("stimulus block for %s failed: %s", getattr(ctx, "name", "?"), e)
        return Markup(f'<p class="warn">Stimulus block failed: {escape(str(e))}</p>')
