"""Shared plotting: every chart type the report uses lives here once (Agg, reused figures, no pyplot)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

from .. import metrics

if TYPE_CHECKING:       # numpy and matplotlib are imported where a chart is drawn (commands that draw none start fast)
    from matplotlib.figure import Figure


def fit_inside(fig: Figure, pad_in: float = 0.05, reserved_top: float = 0.0, reserved_bottom: float = 0.0) -> None:
    """Widen the subplot margins until every axes' tick labels, axis labels, titles and legends lie inside the
    figure (between `reserved_bottom` and `reserved_top`, figure fractions kept for the footer and suptitle).

    Fixed margin fractions clip on narrow figures: 9 % of a 4-inch window plot is 0.36 in, less than "190k" plus
    the axis label, so the label read ".90k". Measured with the renderer, so any font size or label length fits."""
    if not fig.axes:
        return
    renderer = fig.canvas.get_renderer()
    pad = pad_in * fig.dpi
    for _ in range(3):    # a margin change re-flows ticks: settle in a few passes
        width, height = fig.bbox.width, fig.bbox.height
        boxes = [b for ax in fig.axes if ax.get_visible() and (b := ax.get_tightbbox(renderer)) is not None]
        if not boxes:
            return
        x0, x1 = min(b.x0 for b in boxes), max(b.x1 for b in boxes)
        y0, y1 = min(b.y0 for b in boxes), max(b.y1 for b in boxes)
        sp = fig.subplotpars
        over_left = max(0.0, pad - x0) / width
        over_right = max(0.0, x1 - (width - pad)) / width
        over_bottom = max(0.0, reserved_bottom * height + pad - y0) / height
        over_top = max(0.0, y1 - ((1 - reserved_top) * height - pad)) / height
        if max(over_left, over_right, over_bottom, over_top) < 0.5 / max(width, height):
            return
        left, right = sp.left + over_left, sp.right - over_right
        bottom, top = sp.bottom + over_bottom, sp.top - over_top
        if right - left < 0.2 or top - bottom < 0.2:   # nothing sensible left to plot in: keep what fits best
            return
        fig.subplots_adjust(left=left, right=right, bottom=bottom, top=top)


def unit_of(label: str) -> tuple[str, float]:
    """(shown unit, scale from the stored value) of a metric or tracker label (ssdpts.metrics)."""
    m = metrics.unit_of(label)
    return m.shown, m.scale


def _thousands(v, _pos=None) -> str:
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1e6:
        return f"{v / 1e6:g}M"
    if a >= 1e4:
        return f"{v / 1e3:g}k"
    return f"{v:g}"


def thousands_formatter():
    """Tick labels 0, 500, 20k, 1.5M."""
    from matplotlib.ticker import FuncFormatter
    return FuncFormatter(_thousands)


def log_y(ax) -> None:
    """Log y axis with readable labels: minor ticks (2x, 3x, 5x) are labelled when the span is short."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(_thousands))
    lo, hi = ax.get_ylim()
    if lo > 0 and hi / lo < 300:
        ax.yaxis.set_minor_locator(LogLocator(base=10, subs=(2.0, 3.0, 5.0)))
        ax.yaxis.set_minor_formatter(FuncFormatter(_thousands))
    else:
        ax.yaxis.set_minor_formatter(NullFormatter())


def scale_said(label: str, log: bool) -> str:
    """An axis label that says when its axis is logarithmic (a reader assumes linear from zero otherwise)."""
    return f"{label} (log scale)" if log and "log" not in label else label


def _ax_style(ax, xlabel: str, ylabel: str, legend: bool = True) -> None:
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if legend and ax.get_legend_handles_labels()[0]:
        ax.legend(loc="best", framealpha=0.85)


def series_plot(fig: Figure, series: dict[str, tuple[Sequence[float], Sequence[float]]], xlabel: str, ylabel: str,
                logx: bool = False, logy: bool = False, markers: bool = True, xticks: Sequence | None = None,
                xticklabels: Sequence[str] | None = None, styles: dict[str, dict] | None = None,
                ylim0: bool = False) -> None:
    """Lines, one per series (label -> (x, y)); the workhorse for convergence, IOPS vs BS, time series."""
    from matplotlib.ticker import FuncFormatter, NullFormatter
    ax = fig.add_subplot(1, 1, 1)
    many = max((len(x) for x, _ in series.values()), default=0) > 60
    for label, (x, y) in series.items():
        st = dict(marker=None if many or not markers else "o", markersize=3.5, linewidth=1.2 if many else 1.5)
        st.update((styles or {}).get(label, {}))
        ax.plot(x, y, label=label, **st)
    if logx:
        ax.set_xscale("log", base=2)
    if logy:
        log_y(ax)
    elif ylim0:
        ax.set_ylim(bottom=0)
        ax.yaxis.set_major_formatter(FuncFormatter(_thousands))
    else:
        ax.yaxis.set_major_formatter(FuncFormatter(_thousands))
    if xticks is not None:
        ax.set_xticks(list(xticks))
        ax.set_xticklabels(list(xticklabels or [str(x) for x in xticks]))
        ax.xaxis.set_minor_formatter(NullFormatter())
    _ax_style(ax, scale_said(xlabel, logx), scale_said(ylabel, logy), legend=len(series) > 0)
    if len(series) > 8:
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7)
        fig.ssdpts_right = 0.78


def window_plots(fig: Figure, panels: Sequence[dict]) -> None:
    """The steady-state measurement window, one panel per tracking variable.

    panel: {label, unit, rounds, values, average, slope, intercept} in display units; draws the data,
    the average, the ±10 % band (90 %..110 % of the average) and the least-squares line.
    """
    import numpy as np
    from matplotlib.ticker import FuncFormatter
    n = len(panels)
    cols = min(n, 3)
    rows = math.ceil(n / cols)
    for i, p in enumerate(panels):
        ax = fig.add_subplot(rows, cols, i + 1)
        x = np.asarray(p["rounds"], dtype=float)
        y = np.asarray(p["values"], dtype=float)
        avg = p["average"]
        ax.axhspan(0.9 * avg, 1.1 * avg, color="#2ca02c", alpha=0.10, label="±10 % of average")
        ax.axhline(1.1 * avg, color="#2ca02c", linestyle="--", linewidth=1)
        ax.axhline(0.9 * avg, color="#2ca02c", linestyle="--", linewidth=1)
        ax.axhline(avg, color="#555555", linewidth=1.2, label=f"average {_short(avg)}")
        ax.plot(x, y, marker="o", color="#1f77b4", linewidth=1.5, label=p["label"])
        if p.get("slope") is not None:
            ax.plot(x, p["slope"] * x + p["intercept"], color="#d62728", linestyle="-.", linewidth=1.2,
                    label="least-squares fit")
        ax.set_xticks(x)
        lo = min(float(y.min()), 0.9 * avg)
        hi = max(float(y.max()), 1.1 * avg)
        pad = (hi - lo) * 0.15 or abs(avg) * 0.1 or 1
        ax.set_ylim(lo - pad, hi + pad)
        ax.yaxis.set_major_formatter(FuncFormatter(_thousands))
        if n > 1:
            ax.set_title(p["label"], fontsize=8)
        _ax_style(ax, "round", p["unit"])
        ax.legend(loc="best", fontsize=6.5, framealpha=0.7)


def bar_plot(fig: Figure, groups: Sequence[str], series: dict[str, Sequence[float | None]], xlabel: str,
             ylabel: str, logy: bool = False, annotate: bool = True, dashed: Sequence[str] = ()) -> None:
    """Grouped bars: one group per x label, one bar per series; `dashed` series (spec sheets) hatched, unfilled."""
    import numpy as np
    from matplotlib.ticker import FuncFormatter
    ax = fig.add_subplot(1, 1, 1)
    n = max(len(series), 1)
    width = 0.8 / n
    x = np.arange(len(groups))
    for i, (label, vals) in enumerate(series.items()):
        v = np.array([np.nan if a is None else a for a in vals], dtype=float)
        style = {"fill": False, "hatch": "//", "linestyle": "--", "edgecolor": f"C{i}"} if label in dashed else {}
        bars = ax.bar(x - 0.4 + width * (i + 0.5), v, width, label=label, **style)
        if annotate and len(groups) * n <= 24:
            ax.bar_label(bars, labels=[("" if np.isnan(a) else _short(a)) for a in v], fontsize=6.5, padding=1)
    ax.set_xticks(x)
    ax.set_xticklabels(groups, rotation=0 if len(groups) <= 8 else 30, ha="center" if len(groups) <= 8 else "right")
    if logy:
        log_y(ax)
    else:
        ax.yaxis.set_major_formatter(FuncFormatter(_thousands))
        ax.margins(y=0.12)
    ax.grid(axis="x", visible=False)
    _ax_style(ax, xlabel, scale_said(ylabel, logy), legend=False)
    legend_above(fig, ax)


def legend_above(fig: Figure, ax) -> None:
    """The legend above the axes, outside the data: inside ("best") it covered bars (a spec sheet's hatched bar
    under three long run labels). One row when the labels fit the figure's width, else one column;
    `fit_inside` then makes room for it under the title."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    row_chars = sum(len(lab) + 6 for lab in labels)
    ncol = len(labels) if row_chars * 0.075 <= fig.get_figwidth() else 1     # ~0.075 in per 7-pt character
    ax.legend(handles, labels, loc="lower left", bbox_to_anchor=(0.0, 1.01), ncol=ncol, fontsize=7, frameon=False,
              borderaxespad=0.2)


def _short(v: float) -> str:
    a = abs(v)
    if a >= 1e6:
        return f"{v / 1e6:.3g}M"
    if a >= 1e4:
        return f"{v / 1e3:.3g}k"
    if a >= 100:
        return f"{v:.0f}"
    return f"{v:.3g}"


def heatmap(fig: Figure, rows: Sequence[str], cols: Sequence[str], values: Sequence[Sequence[float | None]],
            xlabel: str, ylabel: str, unit: str) -> None:
    """A BS x mix heat map with the value in each cell (log colour scale)."""
    import numpy as np
    from matplotlib.colors import LogNorm

    ax = fig.add_subplot(1, 1, 1)
    a = np.array([[np.nan if v is None else v for v in r] for r in values], dtype=float)
    pos = a[np.isfinite(a) & (a > 0)]
    norm = LogNorm(vmin=pos.min(), vmax=pos.max()) if pos.size and pos.min() < pos.max() else None
    im = ax.imshow(np.where(a > 0, a, np.nan), aspect="auto", cmap="viridis", norm=norm)
    ax.set_xticks(range(len(cols)))
    ax.set_xticklabels(cols)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(rows)
    ax.grid(False)
    mid = math.sqrt(pos.min() * pos.max()) if pos.size else 0
    if a.size <= 120:
        for i in range(a.shape[0]):
            for j in range(a.shape[1]):
                if np.isfinite(a[i, j]):
                    ax.text(j, i, _short(a[i, j]), ha="center", va="center", fontsize=7,
                            color="white" if a[i, j] < mid else "black")
    cb = fig.colorbar(im, ax=ax, pad=0.01)
    cb.set_label(unit)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)


def small_multiples(fig: Figure, panels: Sequence[tuple[str, dict[str, tuple[Sequence, Sequence]]]], xlabel: str,
                    ylabel: str, logx: bool = False, logy: bool = False, xticks: Sequence | None = None,
                    xticklabels: Sequence[str] | None = None, dashed: Sequence[str] = ()) -> None:
    """A grid of line plots sharing axes labels: (panel title, {series: (x, y)}) each; the legend in an empty
    grid slot, else on the first panel;
    `dashed` series (spec sheets) drawn dashed, and every series keeps its colour across panels."""
    from matplotlib.ticker import FuncFormatter, NullFormatter
    n = len(panels)
    cols = min(n, 4)
    rows = math.ceil(n / cols)
    for i, (title, series) in enumerate(panels):
        ax = fig.add_subplot(rows, cols, i + 1)
        for j, (label, (x, y)) in enumerate(series.items()):
            ax.plot(x, y, marker="s" if label in dashed else "o", markersize=3, linewidth=1.3, label=label,
                    linestyle="--" if label in dashed else "-", color=f"C{j}")
        if logx:
            ax.set_xscale("log", base=2)
        if logy:
            log_y(ax)
        else:
            ax.yaxis.set_major_formatter(FuncFormatter(_thousands))
        if xticks is not None:
            ax.set_xticks(list(xticks))
            ax.set_xticklabels(list(xticklabels or xticks), fontsize=6.5)
            ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(title, fontsize=8)
        ax.set_xlabel(scale_said(xlabel, logx), fontsize=7)
        if i % cols == 0:       # one y label per row: beside an inner panel it would sit on its neighbour's ticks
            ax.set_ylabel(scale_said(ylabel, logy), fontsize=7)
    first = fig.axes[0] if fig.axes else None
    if first is None or not first.get_legend_handles_labels()[0]:
        return
    if n < rows * cols:     # an empty grid slot holds the legend, where it hides no data
        slot = fig.add_subplot(rows, cols, n + 1)
        slot.axis("off")
        slot.legend(*first.get_legend_handles_labels(), fontsize=7, loc="center", frameon=False)
    else:
        first.legend(fontsize=6.5, loc="best")


def stacked_steps(fig: Figure, starts: Sequence[float], widths: Sequence[float],
                  series: dict[str, Sequence[float]], xlabel: str, ylabel: str,
                  colors: dict[str, str] | None = None) -> None:
    """Stacked bars, one per time step, as wide as the step (so many steps read as an area); series in order,
    the first at the bottom. The legend sits outside on the right: there is one entry per series. More than
    ten series take tab20's colours, so none repeats."""
    import numpy as np
    from matplotlib import colormaps

    ax = fig.add_subplot(1, 1, 1)
    bottom = np.zeros(len(starts))
    wide = colormaps["tab20"] if len(series) > 10 else None
    for i, (label, values) in enumerate(series.items()):
        v = np.asarray(values, dtype=float)
        color = (colors or {}).get(label) or (wide(i % 20) if wide else None)
        ax.bar(starts, v, widths, bottom=bottom, align="edge", label=label, linewidth=0, color=color)
        bottom += v
    ax.set_xlim(min(starts, default=0), max((s + w for s, w in zip(starts, widths)), default=1))
    ax.set_ylim(0, max(100.0, float(bottom.max(initial=0))))
    ax.grid(axis="x", visible=False)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, reverse=True)
    fig.ssdpts_right = 0.8


def bars_3d(fig: Figure, rows: Sequence[str], cols: Sequence[str], values: Sequence[Sequence[float | None]],
            xlabel: str, ylabel: str, zlabel: str) -> None:
    """A rows x cols matrix as 3-D bars (matplotlib mplot3d bar3d), coloured by value like the heat map;
    linear height, as the reviewers' 3-D IOPS charts (seed 004) draw it. Missing cells: no bar."""
    import numpy as np
    from matplotlib.ticker import FuncFormatter
    from matplotlib import colormaps
    from matplotlib.colors import Normalize

    ax = fig.add_subplot(1, 1, 1, projection="3d")
    a = np.array([[np.nan if v is None else v for v in r] for r in values], dtype=float)
    finite = a[np.isfinite(a)]
    norm = Normalize(vmin=0, vmax=float(finite.max()) if finite.size else 1.0)
    cmap = colormaps["viridis"]
    xs, ys, hs = [], [], []
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            if np.isfinite(a[i, j]):
                xs.append(j)
                ys.append(i)
                hs.append(a[i, j])
    if hs:
        ax.bar3d(np.asarray(xs) - 0.3, np.asarray(ys) - 0.3, np.zeros(len(hs)), 0.6, 0.6, hs,
                 color=[cmap(norm(h)) for h in hs], shade=True, edgecolor="#333333", linewidth=0.3)
    ax.set_xticks(range(len(cols)))
    ax.set_xticklabels(cols, fontsize=7)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(rows, fontsize=7)
    ax.zaxis.set_major_formatter(FuncFormatter(_thousands))
    ax.tick_params(axis="z", labelsize=7)
    ax.set_xlabel(xlabel, fontsize=8, labelpad=6)
    ax.set_ylabel(ylabel, fontsize=8, labelpad=6)
    ax.set_zlabel(zlabel, fontsize=8, labelpad=8)
    ax.view_init(elev=24, azim=-56)
    ax.set_box_aspect(None, zoom=1.05)


def over_time(fig: Figure, panels: Sequence[tuple[str, dict[str, tuple[Sequence[float], Sequence[float | None]]]]],
              xlabel: str) -> None:
    """Stacked panels sharing the time axis: (y label with unit, {series: (t, y)}) each; None values skipped."""
    from matplotlib.ticker import FuncFormatter
    first = None
    for i, (ylabel, series) in enumerate(panels):
        ax = fig.add_subplot(len(panels), 1, i + 1, sharex=first)
        first = first or ax
        for label, (x, y) in series.items():
            pts = [(a, b) for a, b in zip(x, y) if b is not None]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], linewidth=1.2, marker="o" if len(pts) <= 60 else None,
                    markersize=2.5, label=label)
        ax.set_ylim(bottom=0)
        ax.yaxis.set_major_formatter(FuncFormatter(_thousands))
        ax.set_ylabel(ylabel)
        if i == len(panels) - 1:
            ax.set_xlabel(xlabel)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="best", fontsize=7, framealpha=0.8)


def twin_plot(fig: Figure, left: tuple[Sequence[float], Sequence[float]], right: tuple[Sequence[float], Sequence[float]],
              xlabel: str, left_label: str, right_label: str) -> None:
    """Two quantities over one x axis (e.g. IOPS and temperature over time): left axis blue, right axis red."""
    from matplotlib.ticker import FuncFormatter
    ax = fig.add_subplot(1, 1, 1)
    ax.plot(left[0], left[1], color="#1f77b4", marker="o", markersize=3, linewidth=1.3, label=left_label)
    ax.set_ylim(bottom=0)
    ax.yaxis.set_major_formatter(FuncFormatter(_thousands))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(left_label, color="#1f77b4")
    ax2 = ax.twinx()
    ax2.plot(right[0], right[1], color="#d62728", marker="s", markersize=3, linewidth=1.3, label=right_label)
    ax2.set_ylabel(right_label, color="#d62728")
    fig.ssdpts_right = 0.90      # room for the right axis label (Artifacts.save_figure reads it)
