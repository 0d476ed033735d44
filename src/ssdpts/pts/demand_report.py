"""DIRTH and CBW report and compare sections (the TC x QD sweep of pts/demand.py).

Steady state of the largest point; latency vs IOPS (one line per TC) and IOPS vs QD (one line per
TC) with the Max / Mid / Min operating points marked; a table of every point; per-direction latency
percentiles; response-time histograms of the operating points from the window rounds' merged fio
json+ bins (CBW: reads and writes drawn separately, DIRTH: all I/Os).
"""

from __future__ import annotations

from typing import Sequence

from ..engines.results import merge_bins

OP_ORDER = ("max", "mid", "min")
OP_STYLE = {"max": ("Max", "#d62728", "*"), "mid": ("Mid", "#ff7f0e", "D"), "min": ("Min", "#2ca02c", "P")}
PCTS = ("99", "99.9", "99.99")


def op_of(summary: dict) -> dict[str, str]:
    """point name -> 'Max' / 'Mid' / 'Min' (a point can be several)."""
    out: dict[str, list[str]] = {}
    for k in OP_ORDER:
        n = (summary.get("operating_points") or {}).get(k)
        if n:
            out.setdefault(n, []).append(OP_STYLE[k][0])
    return {n: " / ".join(v) for n, v in out.items()}


def window_bins(ctx, names: Sequence[str], window: Sequence[int]) -> dict[str, dict[str, dict[int, int]]]:
    """point -> {'read': bins, 'write': bins, 'all': bins}, merged over the measurement-window rounds."""
    rounds = [r for r in ctx.rounds("") if r.round in set(window)]
    out = {}
    for n in names:
        cells = [c for r in rounds for c in r.cells if c.name == n]
        rb = merge_bins(c.read.bins for c in cells if c.read.bins)
        wb = merge_bins(c.write.bins for c in cells if c.write.bins)
        out[n] = {"read": rb, "write": wb, "all": merge_bins([rb, wb])}
    return out


def op_bins(ctx, op: str) -> dict[str, dict[int, int]] | None:
    """The operating point's own logged measurement period, merged ('read', 'write', 'all'); None if not run."""
    cells = [c for r in ctx.rounds(f"op={op}/measure") for c in r.cells]
    if not cells:
        return None
    rb = merge_bins(c.read.bins for c in cells if c.read.bins)
    wb = merge_bins(c.write.bins for c in cells if c.write.bins)
    return {"read": rb, "write": wb, "all": merge_bins([rb, wb])}


def _pct(bins: dict, p: str) -> float | None:
    from ..engines.results import percentile_from_bins

    v = percentile_from_bins(bins, float(p)) if bins else None
    return None if v is None else v / 1000


def point_rows(s: dict, bins: dict) -> list[list]:
    """One row per point: TC, QD, OIO, IOPS, mean, p99/p99.9/p99.99 (all I/Os, merged window bins), max."""
    ops = op_of(s)
    rows = []
    for p in s.get("points") or []:
        b = (bins.get(p["name"]) or {}).get("all") or {}
        rows.append([p["name"], p["tc"], p["qd"], p["oio"], p["iops"], p["lat_mean_us"]]
                    + [_pct(b, q) for q in PCTS] + [p["lat_max_us"], ops.get(p["name"], "")])
    return rows


POINT_HEADERS = ["Point", "TC", "QD", "OIO", "IOPS", "Mean latency (µs)"] + [f"p{q} (µs)" for q in PCTS] + [
    "Max latency (µs)", "Operating point"]


def direction_rows(s: dict) -> list[list]:
    """Per point and direction: latency statistics exactly as stored in the summary."""
    ops = op_of(s)
    rows = []
    for p in s.get("points") or []:
        for d in ("read", "write"):
            lat = p.get(f"{d}_lat")
            if not lat:
                continue
            rows.append([p["name"], p["tc"], p["qd"], p["oio"], d, lat.get("mean_us")]
                        + [lat.get(f"p{q}_us") for q in PCTS] + [lat.get("p99.999_us"), lat.get("max_us"),
                                                                 ops.get(p["name"], "")])
    return rows


DIRECTION_HEADERS = ["Point", "TC", "QD", "OIO", "Direction", "Mean (µs)"] + [f"p{q} (µs)" for q in PCTS] + [
    "p99.999 (µs)", "Max (µs)", "Operating point"]


def by_tc(points: list[dict]) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = {}
    for p in sorted(points, key=lambda p: (-p["tc"], p["qd"])):
        out.setdefault(p["tc"], []).append(p)
    return out


def _mark_ops(ax, s: dict, xkey: str, ykey: str) -> None:
    pts = {p["name"]: p for p in s.get("points") or []}
    for k in OP_ORDER:
        n = (s.get("operating_points") or {}).get(k)
        if n not in pts:
            continue
        label, col, m = OP_STYLE[k]
        p = pts[n]
        ax.plot([p[xkey]], [p[ykey]], linestyle="none", marker=m, markersize=12, markerfacecolor="none",
                markeredgecolor=col, markeredgewidth=1.8, label=f"{label}: TC{p['tc']}/QD{p['qd']}")


def log_x(ax) -> None:
    """Log x axis labelled like the report's log y axes (1k, 20k, 1M; minor 2x/5x ticks on short spans)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    from ..report import plots

    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(plots._thousands))
    lo, hi = ax.get_xlim()
    if lo > 0 and hi / lo < 300:
        ax.xaxis.set_minor_locator(LogLocator(base=10, subs=(2.0, 5.0)))
        ax.xaxis.set_minor_formatter(FuncFormatter(plots._thousands))
    else:
        ax.xaxis.set_minor_formatter(NullFormatter())


def histogram(ax, bins: dict[int, int], label: str, color: str, per_decade: int = 20) -> None:
    """fio json+ bins (ns -> count) re-binned on a log µs axis, drawn as steps (counts, log y)."""
    import numpy as np

    if not bins:
        return
    v = np.array(sorted(bins), dtype=float) / 1000
    w = np.array([bins[k] for k in sorted(bins)], dtype=float)
    v = np.maximum(v, 1e-3)
    lo, hi = np.floor(np.log10(v.min())), np.ceil(np.log10(v.max()) + 1e-9)
    hi = max(hi, lo + 1)
    edges = np.logspace(lo, hi, int((hi - lo) * per_decade) + 1)
    counts, edges = np.histogram(v, bins=edges, weights=w)
    nz = np.nonzero(counts)[0]
    a, b = nz.min(), nz.max() + 1
    ax.stairs(counts[a:b], edges[a:b + 1], color=color, linewidth=1.4, label=f"{label} ({int(w.sum()):,} I/Os)",
              baseline=None)


def report_section(ctx) -> str:
    if not ctx.summary.get("points"):   # an older or foreign summary: the core's generic section
        from ..report.core import generic_section

        return generic_section(ctx)
    from markupsafe import Markup, escape

    from ..report import plots
    from ..units import bs_label

    s = ctx.summary
    split_rw = ctx.name == "cbw"
    html = [Markup(f'<p class="note">{escape(n)}</p>') for n in s.get("notes", []) if isinstance(n, str)]
    if s.get("bssplit"):
        mix = ", ".join(f"{bs_label(b)} {p} %" for b, p in s["bssplit"])
        align = (f'; I/O offsets aligned to {s["alignment_bytes"]} bytes (logical block '
                 f'{(s.get("block_sizes_bytes") or {}).get("logical", "?")} B)' if s.get("alignment_bytes") else "")
        html.append(Markup(f'<p class="note">Block sizes: {escape(mix)}; access zones {escape(str(s.get("zones")))}'
                           f'; R/W {ctx.settings.get("read_pct", 40)}/{100 - int(ctx.settings.get("read_pct", 40))}'
                           f'{escape(align)}.</p>'))
    elif s.get("block_size"):
        html.append(Markup(f'<p class="note">RND {escape(bs_label(s["block_size"]))} '
                           f'{s.get("read_pct")}/{100 - int(s.get("read_pct") or 0)} (R/W), TC = threads, '
                           f'QD = queue depth per thread, OIO = TC × QD.</p>'))
    html.append(Markup("<h3>Steady state (largest demand point)</h3>"))
    html.append(ctx.steady_block("", s.get("steady")))
    points = s.get("points") or []
    if not points:
        return Markup("").join(html)
    window = (s.get("steady") or {}).get("window_rounds") or []
    bins = window_bins(ctx, [p["name"] for p in points], window)
    limit = s.get("latency_limit_us")
    ops = s.get("operating_points") or {}
    pts = {p["name"]: p for p in points}
    html.append(Markup("<h3>Demand intensity (measurement-window averages)</h3>"))
    if ops:
        txt = "; ".join(f"{OP_STYLE[k][0]} = TC{pts[ops[k]]['tc']}/QD{pts[ops[k]]['qd']} "
                        f"({pts[ops[k]]['iops']:,.0f} IOPS, {pts[ops[k]]['lat_mean_us']:,.1f} µs mean)"
                        for k in OP_ORDER if ops.get(k) in pts)
        warn = "" if s.get("max_under_limit", True) else (
            f" No point has a mean latency under {limit / 1000:g} ms: Max is the highest IOPS regardless.")
        html.append(Markup(f'<p class="note">Operating points: {escape(txt)}. Max = highest IOPS with mean latency '
                           f'under {(limit or 0) / 1000:g} ms, Min = smallest OIO, Mid = IOPS closest to '
                           f'(Max + Min) / 2.{escape(warn)}</p>'))
    groups = by_tc(points)
    # latency vs IOPS, one line per TC
    fig = ctx.figure((8.5, 4.8))
    plots.series_plot(fig, {f"TC {tc}": ([p["iops"] for p in ps], [p["lat_mean_us"] for p in ps])
                            for tc, ps in groups.items()}, "IOPS (read + write)", "mean latency (µs)",
                      logy=True)
    ax = fig.axes[0]
    log_x(ax)
    for p in points:
        ax.annotate(f"QD{p['qd']}", (p["iops"], p["lat_mean_us"]), textcoords="offset points", xytext=(4, -9),
                    fontsize=6, color="#555555")
    _mark_ops(ax, s, "iops", "lat_mean_us")
    top = max(p["lat_mean_us"] for p in points)
    if limit and limit <= 10 * top:
        ax.axhline(limit, color="#555555", linestyle="--", linewidth=1, label=f"limit {limit / 1000:g} ms")
    ax.legend(loc="best", fontsize=7, framealpha=0.85, markerscale=0.6)
    html.append(ctx.plot(fig, "latency-vs-iops", "mean latency vs IOPS, one line per TC",
                         "Each line: one thread count, queue depths increasing to the right; Max / Mid / Min "
                         "operating points circled."))
    # IOPS vs QD, one line per TC
    qds = sorted({p["qd"] for p in points})
    fig = ctx.figure()
    plots.series_plot(fig, {f"TC {tc}": ([p["qd"] for p in ps], [p["iops"] for p in ps]) for tc, ps in groups.items()},
                      "queue depth per thread (QD)", "IOPS (read + write)", logx=len(qds) > 1, ylim0=True,
                      xticks=qds)
    _mark_ops(fig.axes[0], s, "qd", "iops")
    fig.axes[0].legend(loc="best", fontsize=7, framealpha=0.85, markerscale=0.6)
    html.append(ctx.plot(fig, "iops-vs-qd", "IOPS vs queue depth, one line per TC"))
    html.append(ctx.table("points", POINT_HEADERS, point_rows(s, bins),
                          caption="Every TC × QD point: IOPS (read + write) and latency of all I/Os; percentiles from "
                                  "the measurement window's merged read + write histograms"))
    tab = ctx.table("directions", DIRECTION_HEADERS, direction_rows(s),
                    caption="Latency per direction (reads and writes separately), measurement window")
    html.append(Markup(f"<details{' open' if split_rw else ''}><summary>Latency per direction "
                       f"({len(points)} points × R/W)</summary>{tab}</details>"))
    from ..report.parts import demand_parts

    html.append(demand_parts(ctx, s))   # several drives at once: every point of every drive (else nothing)
    # response-time histograms of the operating points
    chosen = [k for k in OP_ORDER if ops.get(k) in pts]
    if chosen:
        html.append(Markup("<h3>Response-time histograms (operating points)</h3>"))
        fig = ctx.figure((min(4.2 * len(chosen), 12.6), 4.2))
        for i, k in enumerate(chosen):
            n = ops[k]
            p = pts[n]
            ax = fig.add_subplot(1, len(chosen), i + 1)
            own = op_bins(ctx, k)
            b = own or bins.get(n) or {}
            if split_rw:
                histogram(ax, b.get("read"), "read", "#1f77b4")
                histogram(ax, b.get("write"), "write", "#d62728")
            else:
                histogram(ax, b.get("all"), "all I/Os", "#1f77b4")
            ax.axvline(p["lat_mean_us"], color="#555555", linestyle="--", linewidth=1,
                       label=f"mean {p['lat_mean_us']:,.1f} µs")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(f"{OP_STYLE[k][0]}: TC{p['tc']}/QD{p['qd']}, {p['iops']:,.0f} IOPS", fontsize=8)
            ax.set_xlabel("response time (µs)")
            ax.set_ylabel("I/Os per bin (count)")
            ax.legend(loc="best", fontsize=6.5, framealpha=0.85)
        what = "reads vs writes" if split_rw else "all I/Os"
        html.append(ctx.plot(fig, "histograms", f"response-time histograms, Max / Mid / Min, {what}",
                             "Each point's own measurement period after its pre-write (merged fio json+ "
                             "histograms); 20 bins per decade." if op_bins(ctx, chosen[0]) else
                             f"Measurement-window rounds ({len(window)}) merged; 20 bins per decade."))
    return Markup("").join(html)


def compare_section(ctx) -> str:
    """Latency vs IOPS per shared TC (one panel per TC, one line per run); operating points side by side."""
    if not all(v.summary.get("points") for v in ctx.views):
        from ..report.compare import generic_compare

        return generic_compare(ctx)
    from markupsafe import Markup

    from ..report import plots

    per = [{p["name"]: p for p in v.summary.get("points") or []} for v in ctx.views]
    names = [n for n in per[0] if all(n in p for p in per[1:])]
    if not names:
        return Markup('<p class="warn">The runs share no TC × QD point.</p>')
    tcs = sorted({per[0][n]["tc"] for n in names}, reverse=True)
    panels = []
    for tc in tcs:
        ns = sorted((n for n in names if per[0][n]["tc"] == tc), key=lambda n: per[0][n]["qd"])
        panels.append((f"TC {tc}", {v.label: ([p[n]["iops"] for n in ns], [p[n]["lat_mean_us"] for n in ns])
                                    for v, p in zip(ctx.views, per)}))
    fig = ctx.figure((11.0, 3.4 * ((len(panels) + 3) // 4) + 0.9))
    plots.small_multiples(fig, panels, "IOPS", "mean latency (µs)", logy=True)
    for ax in fig.axes:
        log_x(ax)
    html = [ctx.plot(fig, "latency-vs-iops", "mean latency vs IOPS per TC, one line per run")]
    keys = [(per[0][n]["tc"], per[0][n]["qd"]) for n in names]
    html.append(ctx.side_by_side("iops", keys, [[p[n]["iops"] for p in per] for n in names], ["TC", "QD"], "IOPS",
                                 caption="IOPS per point; Δ relative to the first run"))
    html.append(ctx.side_by_side("latency", keys, [[p[n]["lat_mean_us"] for p in per] for n in names], ["TC", "QD"],
                                 "mean µs", caption="Mean latency per point (µs); Δ relative to the first run "
                                                    "(lower is better)"))
    rows = []
    for v in ctx.views:
        ops = v.summary.get("operating_points") or {}
        pts = {p["name"]: p for p in v.summary.get("points") or []}
        row = [v.label]
        for k in OP_ORDER:
            p = pts.get(ops.get(k))
            row += [f"TC{p['tc']}/QD{p['qd']}" if p else "–", p["iops"] if p else None,
                    p["lat_mean_us"] if p else None]
        rows.append(row)
    hdr = ["Run"] + [f"{OP_STYLE[k][0]} {what}" for k in OP_ORDER for what in ("point", "IOPS", "mean latency (µs)")]
    html.append(ctx.table("operating-points", hdr, rows, caption="Operating points per run"))
    return Markup("").join(html)
