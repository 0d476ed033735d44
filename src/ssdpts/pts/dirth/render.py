"""DIRTH renderers: the shared demand-sweep renderers (pts/demand_render.py), all I/Os in one histogram."""

from __future__ import annotations

from markupsafe import Markup

from ...render.context import SectionContext
from ...units import bs_label
from .. import demand_render
from ..spec import Headline, Renderers
from .summary import DirthSummary

parts = demand_render.parts
compare = demand_render.compare
text = demand_render.text


def html(ctx: SectionContext) -> Markup:
    s: DirthSummary = ctx.summary
    pattern = (f"RND {bs_label(s.block_size)} {s.read_pct}/{100 - s.read_pct} (R/W), TC = threads, "
               f"QD = queue depth per thread, OIO = TC × QD.")
    return demand_render.html(ctx, pattern, split_rw=False)


def headline(s: DirthSummary) -> list[Headline]:
    return demand_render.headline(s, "dirth")


RENDERERS = Renderers(html=html, parts=parts, compare=compare, text=text, headline=headline)
