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


def test_a_long_title_on_a_narrow_window_plot_is_wrapped_not_cut(tmp_path):
    """Issue 39 item 5: the latency test's single-panel window plot (4 inches) cut its title
    "ssdpts simulated SSD (client) — Latency – Response Time at TC1/QD1" at both ends."""
    art = Artifacts(tmp_path, embed=False)
    fig = art.figure((4.0, 3.9))
    plots.window_plots(fig, [{"label": "rnd_4K_0-100 lat_mean", "unit": "µs", "rounds": [2, 3, 4, 5],
                              "values": [88.0, 91.0, 90.5, 89.0], "average": 89.6, "slope": 0.2, "intercept": 89.0}])
    title = "ssdpts simulated SSD (client) — Latency – Response Time at TC1/QD1 — steady-state measurement window"
    art.save_figure(fig, "window", title, "ssdpts run 20261128-213432-7086")
    assert outside(fig) == []
    shown = fig._suptitle.get_text()
    assert shown.split() == "ssdpts simulated SSD (client) — Latency – Response Time at TC1/QD1 steady-state " \
                            "measurement window".split()        # every word kept, only the line breaks moved


def test_a_spec_sheet_legend_covers_no_bar(tmp_path):
    """Issue 39 item 5: in compare's throughput bars the legend of two long run labels and a spec sheet sat on
    the spec sheet's hatched bar. Checked with matplotlib's renderer: the legend's box meets no bar's box."""
    art = Artifacts(tmp_path, embed=False)
    fig = art.figure((8.0, 4.0))
    plots.bar_plot(fig, ["128K read", "128K write", "1M read", "1M write"],      # tall bars in every corner
                   {"ssdpts simulated SSD (client) · 20261124-153602-5c43": [4269, 3664, 4300, 3900],
                    "ssdpts simulated SSD (enterprise) · 20261124-153608-654a": [4852, 4805, 4700, 4650],
                    "Intel DC P3608 1.6TB (spec sheet)": [4768, 4907, 4800, 4850]},
                   "block size, direction", "MiB/s", dashed=["Intel DC P3608 1.6TB (spec sheet)"])
    art.save_figure(fig, "bars", "Throughput (comparison) — sequential throughput, one series per run", "ssdpts runs")
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    legend = ax.get_legend().get_window_extent(renderer)
    bars = [p.get_window_extent(renderer) for p in ax.patches]
    assert len(bars) == 12 and not any(legend.overlaps(b) for b in bars)
    assert outside(fig) == []
