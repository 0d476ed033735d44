"""What a report's figures drew, read back from their matplotlib artists as each one is saved: the lines'
points and the bars' heights per series and panel. Tests compare them with a truth outside the renderer (the
stored rounds, fio's own JSON, the simulator), so a chart is checked by what it shows, not by the function
that computed it."""

from __future__ import annotations

from dataclasses import dataclass, field

from ssdpts.render.toolkit import Artifacts


@dataclass
class Plotted:
    """One saved figure: {(panel title, series label): (x, y)} for lines, {series label: heights} for bars."""

    lines: dict[tuple[str, str], tuple[list[float], list[float]]] = field(default_factory=dict)
    bars: dict[str, list[float]] = field(default_factory=dict)
    groups: list[str] = field(default_factory=list)     # the bar groups, left to right (the x tick labels)
    ylabels: list[str] = field(default_factory=list)
    title: str = ""


def _read(fig) -> Plotted:
    out = Plotted(title=fig._suptitle.get_text() if fig._suptitle else "")
    for ax in fig.axes:
        out.ylabels.append(ax.get_ylabel())
        for line in ax.get_lines():
            label = line.get_label()
            if not label.startswith("_"):
                out.lines[(ax.get_title(), label)] = ([float(v) for v in line.get_xdata()],
                                                      [float(v) for v in line.get_ydata()])
        if ax.containers and not out.groups:
            out.groups = [t.get_text() for t in ax.get_xticklabels()]
        for bars in ax.containers:
            label = bars.get_label()
            if label and not label.startswith("_"):
                out.bars[label] = [float(p.get_height()) for p in bars.patches]
    return out


def capture(monkeypatch) -> dict[str, Plotted]:
    """From now on, every figure a report saves, by plot key (the PNG's name without its extension)."""
    seen: dict[str, Plotted] = {}
    save = Artifacts.save_figure

    def saving(self, fig, key, title, footer, caption=""):
        before = set(self.saved)
        html = save(self, fig, key, title, footer, caption)
        new = set(self.saved) - before
        seen[new.pop() if new else key] = _read(fig)
        return html

    monkeypatch.setattr(Artifacts, "save_figure", saving)
    return seen
