"""The renderers' toolkit: figures saved as PNG + SVG, tables saved as CSV, both returned as HTML.

Every test's renderers (`html`, `compare`, `parts` of its `pts/spec.Renderers`) get a context (context.py)
that wraps an `Artifacts` collector; the collector is the only thing that writes files into the report
directory (the CSV tables exporter collects the tables without drawing: `Artifacts(..., plots=False)`).
Beside it, the cell formatting the renderers share: numbers, % deltas, block-size x mix matrices, notes.
"""

from __future__ import annotations

import base64
import csv
import io
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from functools import cache
from typing import TYPE_CHECKING, Any, Sequence

from markupsafe import Markup, escape

from ..results import CellWindow
from .plots import fit_inside

if TYPE_CHECKING:
    from matplotlib.figure import Figure


# every plot's series colours, in order (the results site draws its in-browser overlays with the same)
SERIES_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
                  "#17becf"]


@cache
def _matplotlib():
    """matplotlib, imported at the first figure: it is most of a second of CPU (half a minute in an emulated
    guest), and commands that draw nothing (list, show, check, --help) must not pay it. One look for every
    plot, set once, no pyplot state. (Figure, FigureCanvasAgg)"""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    matplotlib.rcParams.update({
        "font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9, "legend.fontsize": 8,
        "axes.grid": True, "grid.alpha": 0.3, "svg.fonttype": "none", "svg.hashsalt": "ssdpts",
        "axes.prop_cycle": matplotlib.cycler(color=SERIES_COLOURS),
    })
    return Figure, FigureCanvasAgg

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(text: str) -> str:
    """A file-name-safe key: 'rnd_4K_0-100 iops' -> 'rnd_4K_0-100_iops'."""
    return _SAFE.sub("_", text).strip("_") or "x"


@dataclass
class Cell:
    """A table cell: the raw value (written to CSV and data-v) and the text shown in HTML."""

    value: Any
    text: str | None = None
    cls: str = ""

    def html_text(self) -> str:
        return self.text if self.text is not None else fmt_num(self.value)


def fmt_num(v: Any, digits: int = 1) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return "–"
        a = abs(v)
        if a >= 100:
            return f"{v:,.{digits}f}"
        if a >= 1 or a == 0:
            return f"{v:.{max(digits, 1) + 1}f}"
        return f"{v:.3g}"
    return str(v)


@dataclass(frozen=True)
class SavedFigure:
    """A figure already on the page: the headline shows it again, small, linked to where it stands."""

    key: str                     # plots/KEY.png; the page's anchor is fig-KEY
    title: str
    src: str                     # the <img> source (embedded data or the PNG's relative path)


@dataclass
class Artifacts:
    """Writes plots and tables under `out_dir` and keeps a list of what it wrote.

    plots=False (CSV export) skips drawing entirely; embed=True puts the PNG into the HTML as base64
    so report.html is complete on its own; the PNG/SVG/CSV files beside it are linked relatively.
    """

    out_dir: Path
    plots: bool = True
    embed: bool = True
    dpi: int = 100
    written: list[Path] = field(default_factory=list)
    _figs: dict = field(default_factory=dict)
    _keys: set = field(default_factory=set)
    saved: dict[str, SavedFigure] = field(default_factory=dict)   # plot key -> the figure as the page shows it

    def __post_init__(self):
        self.out_dir = Path(self.out_dir)
        if self.plots:
            (self.out_dir / "plots").mkdir(parents=True, exist_ok=True)
        (self.out_dir / "tables").mkdir(parents=True, exist_ok=True)

    def _unique(self, key: str, kind: str) -> str:
        key = safe_name(key)
        base, n = key, 2
        while (kind, key) in self._keys:
            key, n = f"{base}-{n}", n + 1
        self._keys.add((kind, key))
        return key

    # figures ---------------------------------------------------------------------------------
    def figure(self, size: tuple[float, float] = (8.0, 4.2)) -> Figure:
        """A cleared figure of this size; figures are reused between plots (cheap, no pyplot)."""
        fig = self._figs.get(size)
        if fig is None:
            figure, canvas = _matplotlib()
            fig = figure(figsize=size, dpi=self.dpi)
            canvas(fig)
            self._figs[size] = fig
        fig.clear()
        fig.ssdpts_right = 0.97
        return fig

    def save_figure(self, fig: Figure, key: str, title: str, footer: str, caption: str = "") -> Markup:
        """Save as plots/KEY.png and plots/KEY.svg; return the <figure> block for the HTML."""
        key = self._unique(key, "plot")
        if not self.plots:
            return Markup("")
        head, _, sub = title.rpartition(" — ")
        suptitle = fig.suptitle(f"{head}\n{sub}" if head else title, fontsize=10, fontweight="bold", linespacing=1.4)
        _wrap_to_width(fig, suptitle)
        footer_text = fig.text(0.995, 0.005, footer, ha="right", va="bottom", fontsize=7, color="#666666")
        h = fig.get_figheight()
        fig.subplots_adjust(left=0.09, right=getattr(fig, "ssdpts_right", 0.97), top=1 - (0.62 + (0.22 if any(ax.get_title() for ax in fig.axes) else 0)) / h, bottom=0.55 / h + 0.04,
                            wspace=0.28, hspace=0.5)
        fit_inside(fig, reserved_top=_height_share(fig, suptitle), reserved_bottom=_height_share(fig, footer_text))
        png = self.out_dir / "plots" / f"{key}.png"
        svg = self.out_dir / "plots" / f"{key}.svg"
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=self.dpi)
        data = buf.getvalue()
        png.write_bytes(data)
        fig.savefig(svg, format="svg", metadata={"Date": None})
        self.written += [png, svg]
        src = "data:image/png;base64," + base64.b64encode(data).decode() if self.embed else f"plots/{key}.png"
        self.saved[key] = SavedFigure(key, title, src)
        return Markup(
            f'<figure class="plot" id="fig-{escape(key)}"><img src="{src}" alt="{escape(title)}" '
            f'width="{int(fig.get_figwidth() * self.dpi)}" height="{int(fig.get_figheight() * self.dpi)}">'
            f'<figcaption>{escape(caption)}{" " if caption else ""}'
            f'<a href="plots/{escape(key)}.svg">SVG</a> · <a href="plots/{escape(key)}.png">PNG</a></figcaption></figure>')

    # tables ----------------------------------------------------------------------------------
    def table(self, key: str, headers: Sequence[str], rows: Sequence[Sequence[Any]], caption: str = "",
              csv_headers: Sequence[str] | None = None, first_col_header: bool = True) -> Markup:
        """Write tables/KEY.csv (raw values) and return an HTML table (formatted values, raw in data-v)."""
        key = self._unique(key, "table")
        path = self.out_dir / "tables" / f"{key}.csv"
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(list(csv_headers or headers))
            for row in rows:
                w.writerow([_csv_value(c) for c in row])
        self.written.append(path)
        out = [f'<table class="data" id="tab-{escape(key)}">']
        if caption:
            out.append(f"<caption>{escape(caption)} <a href=\"tables/{escape(key)}.csv\">CSV</a></caption>")
        out.append("<thead><tr>" + "".join(f"<th>{escape(h)}</th>" for h in headers) + "</tr></thead><tbody>")
        for row in rows:
            tds = []
            for i, c in enumerate(row):
                cell = c if isinstance(c, Cell) else Cell(c)
                tag = "th" if i == 0 and first_col_header else "td"
                raw = cell.value
                dv = f' data-v="{escape(repr(raw))}"' if isinstance(raw, (int, float)) and not isinstance(raw, bool) else ""
                cls = f' class="{cell.cls}"' if cell.cls else (' class="num"' if dv else "")
                tds.append(f"<{tag}{cls}{dv}>{escape(cell.html_text())}</{tag}>")
            out.append("<tr>" + "".join(tds) + "</tr>")
        out.append("</tbody></table>")
        return Markup("".join(out))

    def close(self) -> None:
        self._figs.clear()


def _wrap_to_width(fig: Figure, text, pad_in: float = 0.1) -> None:
    """Break a centred text's lines at spaces until it fits the figure's width: a 4-inch window plot cut
    "ssdpts simulated SSD (client) — Latency – Response Time at TC1/QD1" at both ends."""
    import textwrap
    renderer = fig.canvas.get_renderer()
    room = fig.bbox.width - 2 * pad_in * fig.dpi
    for _ in range(4):     # the measured width shrinks with each pass; a long word may keep it over
        width = text.get_window_extent(renderer).width
        if width <= room:
            return
        lines = text.get_text().split("\n")
        chars = max(8, int(max(len(line) for line in lines) * room / width))
        text.set_text("\n".join(part for line in lines for part in textwrap.wrap(line, chars) or [""]))


def _height_share(fig: Figure, text) -> float:
    """The share of the figure's height from its edge to the far side of `text` (suptitle: top, footer: bottom)."""
    if text is None or not text.get_text():
        return 0.0
    box = text.get_window_extent(fig.canvas.get_renderer())
    height = fig.bbox.height
    return (height - box.y0) / height if box.y1 > height / 2 else box.y1 / height


def _csv_value(c: Any) -> Any:
    v = c.value if isinstance(c, Cell) else c
    if v is None:
        return c.text if isinstance(c, Cell) and c.text not in (None, "–") else ""
    if isinstance(v, float):
        return repr(v)
    return v


def pct_delta(new: float | None, base: float | None) -> float | None:
    """(new - base) / base in %, None when undefined."""
    if new is None or base is None or base == 0:
        return None
    return (new - base) / base * 100.0


def fmt_delta(d: float | None) -> Cell:
    if d is None:
        return Cell(None, "–")
    return Cell(d, f"{d:+.1f} %", "num pos" if d > 0 else "num neg" if d < 0 else "num")



def bs_mix_matrix(cells: dict[str, CellWindow]) -> tuple[list[int], list[int],
                                                         dict[tuple[int, int], tuple[str, CellWindow]]]:
    """From a window summary's cells: block sizes and read % in stored order, and (bs, read%) -> (name, cell)."""
    sizes: list[int] = []
    mixes: list[int] = []
    by: dict[tuple[int, int], tuple[str, CellWindow]] = {}
    for name, c in cells.items():
        bs = int(c.workload.bs or 0)
        rp = c.workload.read_pct
        if rp is None:
            rp = 100 if c.workload.rw in ("read", "randread") else 0
        if bs not in sizes:
            sizes.append(bs)
        if rp not in mixes:
            mixes.append(rp)
        by[(bs, int(rp))] = (name, c)
    return sizes, mixes, by


def notes_html(notes) -> list[Markup]:
    """A test's notes as the paragraphs that open its report section."""
    return [Markup(f'<p class="note">{escape(n)}</p>') for n in notes]


def mix_label(read_pct: int) -> str:
    return f"{read_pct}/{100 - read_pct}"
