"""Every text of a saved plot lies inside the figure (issue 20 item 12): a 4-inch measurement-window plot of
~190000 IOPS clipped its tick label "190k" to ".90k" with the old fixed 9 % left margin. Checked with
matplotlib's renderer (text extents in display pixels), not by looking at pixels."""

from __future__ import annotations

from ssdpts.render import plots
from ssdpts.render.toolkit import Artifacts


def outside(fig) -> list[str]:
    renderer = fig.canvas.get_renderer()
    width, height = fig.bbox.width, fig.bbox.height
    out = []
    for t in fig.findobj(lambda a: hasattr(a, "get_text") and hasattr(a, "get_window_extent")):
        if not t.get_visible() or not t.get_text():
            continue
        b = t.get_window_extent(renderer)
        if b.x0 < -0.5 or b.y0 < -0.5 or b.x1 > width + 0.5 or b.y1 > height + 0.5:
            out.append(f"{t.get_text()!r} at {b.bounds}")
    return out


def test_window_plot_with_190k_keeps_every_label_inside(tmp_path):
    art = Artifacts(tmp_path, embed=False)
    fig = art.figure((4.0, 3.9))       # one panel: steady_block's size for a single tracker
    plots.window_plots(fig, [{"label": "rnd_4K_0-100 iops", "unit": "IOPS", "rounds": [4, 5, 6, 7, 8],
                              "values": [188_000, 191_000, 190_500, 189_000, 192_000], "average": 190_100,
                              "slope": 500.0, "intercept": 187_000.0}])
    art.save_figure(fig, "window", "Drive — IOPS — steady-state measurement window", "ssdpts run x")
    texts = {t.get_text() for t in fig.axes[0].get_yticklabels()}
    assert "190k" in texts
    assert outside(fig) == []
    assert (tmp_path / "plots" / "window.png").stat().st_size > 0


def test_many_series_legend_outside_and_wide_labels_fit(tmp_path):
    art = Artifacts(tmp_path, embed=False)
    fig = art.figure((5.0, 3.0))
    series = {f"cell {i} with a long name": ([1, 2, 3], [1_900_000 + i, 1_950_000, 2_000_000]) for i in range(10)}
    plots.series_plot(fig, series, "round", "IOPS (read + write)")
    art.save_figure(fig, "many", "Drive — IOPS — convergence", "ssdpts run x")
    assert outside(fig) == []
