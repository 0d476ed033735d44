"""CBW renderers: the shared demand-sweep renderers (pts/demand_render.py), reads and writes apart."""

from __future__ import annotations

from markupsafe import Markup

from ...render.context import SectionContext
from ...units import bs_label
from .. import demand_render
from ..spec import Headline, Renderers
from .summary import CbwSummary

parts = demand_render.parts
compare = demand_render.compare
text = demand_render.text


def html(ctx: SectionContext) -> Markup:
    s: CbwSummary = ctx.summary
    mix = ", ".join(f"{bs_label(b)} {p} %" for b, p in s.bssplit)
    pattern = (f"Block sizes: {mix}; access zones {s.zones}; R/W {s.read_pct}/{100 - s.read_pct}; I/O offsets "
               f"aligned to {s.alignment_bytes} bytes (logical block {s.block_sizes_bytes.logical} B, physical "
               f"{s.block_sizes_bytes.physical} B), so the workload is the same whatever the LBA format.")
    return demand_render.html(ctx, pattern, split_rw=True)


def headline(s: CbwSummary) -> list[Headline]:
    return demand_render.headline(s, "cbw")


RENDERERS = Renderers(html=html, parts=parts, compare=compare, text=text, headline=headline)
