"""HIR report and compare sections (see pts/hir.py for what the summary holds).

Preconditioning: the shared steady-state block (IOPS per round, window, determination). Wait states:
IOPS of every burst vs test time (bursts plus measured idle), coloured by wait state, AB bursts
(after idle) solid, C baseline bursts dashed; mean AB vs C IOPS per wait state; a table per wait state.
"""

from __future__ import annotations

import json


def _mean(v: list) -> float | None:
    return sum(v) / len(v) if v else None


def wait_state_rows(segments: dict) -> list[list]:
    """The wait-state table, values as stored (means of the stored lists)."""
    from ..report.toolkit import Cell

    rows = []
    for label, seg in segments.items():
        idle = seg.get("idle_measured_ms") or []
        bursts = seg.get("burst_seconds") or []
        ratio = seg.get("recovery_ratio")
        rows.append([label, seg.get("idle_s"), seg.get("bursts"), seg.get("ab_iops_mean"), seg.get("c_iops_mean"),
                     Cell(ratio, "–" if ratio is None else f"{ratio:.3f}"),
                     _mean(idle), Cell(min(idle) if idle else None), Cell(max(idle) if idle else None),
                     _mean(bursts)])
    return rows


WAIT_STATE_HEADERS = ["Wait state", "Idle (s, set)", "AB bursts", "Mean AB burst IOPS", "Mean C IOPS",
                      "Recovery ratio (AB / C)", "Measured idle, mean (ms)", "min (ms)", "max (ms)",
                      "Burst length, mean (s)"]


def timeline(ctx, segments: dict) -> list[tuple[str, str, list[float], list[float]]]:
    """(wait state, segment 'AB'|'C', burst start times in s, burst IOPS) in execution order.

    Test time counts bursts (fio runtime) and the measured idle between them (gaps inside a round and
    before each round), from the first wait-state burst; preconditioning is not on this axis."""
    gaps = {r[0]: json.loads(r[1] or "[]") for r in ctx.store.db.execute(
        "SELECT id, gaps_inside_json FROM rounds WHERE run_id=? AND test=?", (ctx.run_id, ctx.name))}
    t = 0.0
    out = []
    first = True
    for label in segments:
        for seg in ("AB", "C"):
            xs, ys = [], []
            for r in ctx.rounds(f"ws={label}/{seg}"):
                if not first and r.gap_before_ms:
                    t += r.gap_before_ms / 1000
                inside = gaps.get(r.id, [])
                for i, c in enumerate(r.cells):
                    if i and i - 1 < len(inside) and inside[i - 1]:
                        t += inside[i - 1] / 1000
                    xs.append(t)
                    ys.append(c.iops)
                    t += c.runtime_ms / 1000
                    first = False
            out.append((label, seg, xs, ys))
    return out


def report_section(ctx) -> str:
    if not ctx.summary.get("wait_states"):   # an older or foreign summary: the core's generic section
        from ..report.core import generic_section

        return generic_section(ctx)
    from markupsafe import Markup, escape

    from ..report import plots
    from .wsat_report import time_axis

    s = ctx.summary
    html = [Markup(f'<p class="note">{escape(n)}</p>') for n in s.get("notes", []) if isinstance(n, str)]
    html.append(Markup("<h3>Preconditioning (RND 4K writes to steady state)</h3>"))
    pc = s.get("preconditioning")
    if pc and pc.get("trackers"):
        html.append(ctx.steady_block("pc", pc, key="preconditioning"))
    elif s.get("preconditioning_iops"):
        y = s["preconditioning_iops"]
        fig = ctx.figure()
        plots.series_plot(fig, {"IOPS": (list(range(1, len(y) + 1)), y)}, "round", "IOPS", ylim0=True)
        html.append(ctx.plot(fig, "preconditioning", "preconditioning IOPS per round"))
    segments = s.get("wait_states") or {}
    if not segments:
        return Markup("").join(html)
    html.append(Markup("<h3>Wait states</h3>"))
    html.append(Markup(f'<p class="note">Each wait state: {s.get("repetitions", "?")} × [{s.get("burst_s", 0):g} s '
                       f'of RND 4K writes after the idle] (AB), then {s.get("repetitions", "?")} × '
                       f'{s.get("burst_s", 0):g} s of continuous writes (C, the baseline). '
                       f'Recovery ratio = mean AB IOPS / mean C IOPS.</p>'))
    html.append(ctx.table("wait-states", WAIT_STATE_HEADERS, wait_state_rows(segments),
                          caption="Per wait state: mean IOPS of the bursts after idle (AB) and of the continuous "
                                  "baseline (C), their ratio, the idle measured between AB bursts, and burst length"))
    line = timeline(ctx, segments)
    durs = {(lab, seg): [c.runtime_ms / 1000 for r in ctx.rounds(f"ws={lab}/{seg}") for c in r.cells]
            for lab, seg, _, _ in line}
    secs = [x for _, _, xs, _ in line for x in xs]
    div, unit = time_axis(secs)
    colours = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]
    series, styles = {}, {}
    for i, label in enumerate(segments):
        col = colours[i % len(colours)]
        for lab, seg, xs, ys in line:
            if lab != label or not xs:
                continue
            name = f"idle {label}: AB (after idle)" if seg == "AB" else f"idle {label}: C (continuous)"
            bx, by = [], []   # each burst a level segment from its start to its end, gaps left open
            for x, y, d in zip(xs, ys, durs[(lab, seg)]):
                bx += [x / div, (x + d) / div, float("nan")]
                by += [y, y, float("nan")]
            series[name] = (bx, by)
            styles[name] = ({"color": col, "marker": None, "linestyle": "-", "linewidth": 2.2} if seg == "AB" else
                            {"color": col, "marker": None, "linestyle": "-", "linewidth": 2.2, "alpha": 0.45})
    if series:
        fig = ctx.figure((10.0, 4.6))
        plots.series_plot(fig, series, f"test time ({unit}; bursts + measured idle)", "IOPS", ylim0=True,
                          styles=styles)
        fig.axes[0].legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7)
        fig.ssdpts_right = 0.74
        html.append(ctx.plot(fig, "iops-vs-time", "IOPS of every burst vs time, all wait states",
                             "Each burst is a bar from its start to its end at its IOPS; colour = wait state; "
                             "dark = AB bursts after idle, pale = C baseline (no idle)."))
    labels = list(segments)
    fig = ctx.figure()
    plots.bar_plot(fig, [f"idle {x}" for x in labels],
                   {"AB: mean IOPS after idle": [segments[x].get("ab_iops_mean") for x in labels],
                    "C: mean IOPS, continuous": [segments[x].get("c_iops_mean") for x in labels]},
                   "wait state", "IOPS")
    html.append(ctx.plot(fig, "ab-vs-c", "mean burst IOPS per wait state, AB vs C"))
    from ..report.parts import hir_parts

    html.append(hir_parts(ctx, s))   # several drives at once: AB / C means of each drive (else nothing)
    return Markup("").join(html)


def compare_section(ctx) -> str:
    """Recovery ratio and mean AB / C IOPS per shared wait state, one series per run."""
    if not all(v.summary.get("wait_states") for v in ctx.views):
        from ..report.compare import generic_compare

        return generic_compare(ctx)
    from markupsafe import Markup

    from ..report import plots

    per = [v.summary.get("wait_states") or {} for v in ctx.views]
    labels = [x for x in per[0] if all(x in p for p in per[1:])]
    if not labels:
        return Markup('<p class="warn">The runs share no HIR wait state.</p>')
    html = []
    fig = ctx.figure()
    plots.bar_plot(fig, [f"idle {x}" for x in labels],
                   {v.label: [p[x].get("recovery_ratio") for x in labels] for v, p in zip(ctx.views, per)},
                   "wait state", "recovery ratio (AB / C IOPS)")
    html.append(ctx.plot(fig, "recovery-ratio", "recovery ratio per wait state, one series per run"))
    for key, what in (("ab_iops_mean", "mean AB burst IOPS"), ("c_iops_mean", "mean C IOPS"),
                      ("recovery_ratio", "recovery ratio")):
        html.append(ctx.side_by_side(key.replace("_", "-"), [(x,) for x in labels],
                                     [[p[x].get(key) for p in per] for x in labels], ["Wait state"], what,
                                     caption=f"HIR {what} per wait state; Δ relative to the first run"))
    return Markup("").join(html)
