"""HIR renderers: report section, per-drive part, comparison, text for `show`, headline figures.

Preconditioning: the shared steady-state block (IOPS per round, window, determination). Wait states:
IOPS of every burst vs test time (bursts plus measured idle), coloured by wait state, AB bursts
(after idle) dark, C baseline bursts pale; mean AB vs C IOPS per wait state; a table per wait state.
Latency of the bursts (seeds 003/004): mean, p99.9, p99.99 and max of every burst vs the same time axis,
and a table per wait state and segment. The preconditioning that ran (WIPC, fixed length) is stated.
"""

from __future__ import annotations

from typing import Callable

from markupsafe import Markup, escape

from ...clock import Clock
from ...render import plots
from ...render.context import CompareContext, SectionContext
from ...render.drives import drives_intro, ordered_part_labels
from ...render.toolkit import Cell, notes_html
from ...results import Latency
from ..spec import Headline, Renderers
from ..wsat.render import time_axis
from .summary import HirSummary, WaitState


def _mean(v: list[float]) -> float | None:
    return sum(v) / len(v) if v else None


def wait_state_rows(segments: dict[str, WaitState]) -> list[list]:
    """The wait-state table, values as stored (means of the stored lists)."""
    rows = []
    for label, seg in segments.items():
        idle = seg.idle_measured_ms
        ratio = seg.recovery_ratio
        rows.append([label, seg.idle_s, seg.bursts, seg.ab_iops_mean, seg.c_iops_mean,
                     Cell(ratio, "–" if ratio is None else f"{ratio:.3f}"),
                     _mean(idle), Cell(min(idle) if idle else None), Cell(max(idle) if idle else None),
                     _mean(seg.burst_seconds)])
    return rows


WAIT_STATE_HEADERS = ["Wait state", "Idle (s, set)", "AB bursts", "Mean AB burst IOPS", "Mean C IOPS",
                      "Recovery ratio (AB / C)", "Measured idle, mean (ms)", "min (ms)", "max (ms)",
                      "Burst length, mean (s)"]


def timeline(ctx: SectionContext, segments: dict[str, WaitState]) -> list[tuple[str, str, list[float], list[float]]]:
    """(wait state, segment 'AB'|'C', burst start times in s, burst lengths in s) in execution order.

    Test time counts bursts (fio runtime) and the measured idle between them (gaps inside a round and
    before each round), from the first wait-state burst; preconditioning is not on this axis."""
    t = 0.0
    out = []
    first = True
    for label in segments:
        for seg in ("AB", "C"):
            xs, ds = [], []
            for r in ctx.rounds(f"ws={label}/{seg}"):
                if not first and r.gap_before_ms:
                    t += r.gap_before_ms / 1000
                inside = r.gaps_inside_ms
                for i, c in enumerate(r.cells):
                    if i and i - 1 < len(inside) and inside[i - 1]:
                        t += inside[i - 1] / 1000
                    xs.append(t)
                    ds.append(c.runtime_ms / 1000)
                    t += c.runtime_ms / 1000
                    first = False
            out.append((label, seg, xs, ds))
    return out


COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]

# the per-burst latency charts (seeds 003/004: mean, p99.9, p99.99, max of every burst vs time): key, label, value
LATENCY_STATS: tuple[tuple[str, str, Callable[[Latency], float | None]], ...] = (
    ("mean", "mean", lambda lat: lat.mean_us), ("p99.9", "p99.9", lambda lat: lat.p("99.9")),
    ("p99.99", "p99.99", lambda lat: lat.p("99.99")), ("max", "max", lambda lat: lat.max_us))


def _burst_values(w: WaitState, seg: str, value: Callable[[Latency], float | None] | None) -> list[float | None]:
    """Per burst of a segment: its IOPS (value None) or a latency statistic in ms (None where not measured)."""
    if value is None:
        return list(w.ab_iops if seg == "AB" else w.c_iops)
    lats = w.ab_burst_latency if seg == "AB" else w.c_burst_latency
    return [None if lat is None or value(lat) is None else value(lat) / 1000 for lat in lats]


def burst_timeline_plot(ctx: SectionContext, segments: dict[str, WaitState], line: list, key: str, what: str,
                        ylabel: str, value: Callable[[Latency], float | None] | None = None) -> Markup:
    """Every burst as a bar from its start to its end at its value, coloured by wait state; AB dark, C pale."""
    div, unit = time_axis([x for _, _, xs, _ in line for x in xs])
    series, styles = {}, {}
    for i, label in enumerate(segments):
        col = COLOURS[i % len(COLOURS)]
        for lab, seg, xs, ds in line:
            ys = _burst_values(segments[label], seg, value) if lab == label else []
            if not xs or len(ys) != len(xs):
                continue
            name = f"idle {label}: AB (after idle)" if seg == "AB" else f"idle {label}: C (continuous)"
            bx, by = [], []   # each burst a level segment from its start to its end, gaps left open
            for x, y, d in zip(xs, ys, ds):
                bx += [x / div, (x + d) / div, float("nan")]
                by += [float("nan") if y is None else y] * 2 + [float("nan")]
            series[name] = (bx, by)
            styles[name] = {"color": col, "marker": None, "linestyle": "-", "linewidth": 2.2,
                            **({} if seg == "AB" else {"alpha": 0.45})}
    if not series:
        return Markup("")
    fig = ctx.figure((10.0, 4.6))
    plots.series_plot(fig, series, f"test time ({unit}; bursts + measured idle)", ylabel, ylim0=True, styles=styles)
    top = max((y for _, ys in series.values() for y in ys if y == y), default=0.0)   # y == y: not NaN
    if top > 0:
        fig.axes[0].set_ylim(0, top * 1.08)     # room above the highest burst: a bar on the frame is hidden
    fig.axes[0].legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7)
    fig.ssdpts_right = 0.74
    return ctx.plot(fig, key, f"{what} of every burst vs time, all wait states",
                    f"Each burst is a bar from its start to its end at its {what}; colour = wait state; "
                    "dark = AB bursts after idle, pale = C baseline (no idle).")


def latency_rows(s: HirSummary) -> list[list]:
    """Per wait state and segment (and every burst together): write latency of the bursts, µs as stored."""
    rows = []
    for label, w in s.wait_states.items():
        for seg, lat, n in (("AB (after idle)", w.ab_latency, max(len(w.ab_iops) - 1, 1)),
                            ("C (continuous)", w.c_latency, max(len(w.c_iops) - 1, 1))):
            rows.append([label, seg, n] + _lat_cells(lat))
    if s.bursts_latency is not None:
        n = sum(len(w.ab_iops) + len(w.c_iops) for w in s.wait_states.values())
        rows.append(["all", "every burst (AB and C)", n] + _lat_cells(s.bursts_latency))
    return rows


def _lat_cells(lat: Latency | None) -> list:
    return [NOT_AVAILABLE] * len(LATENCY_STATS) if lat is None else \
        [Cell(get(lat)) if get(lat) is not None else NOT_AVAILABLE for _, _, get in LATENCY_STATS]


NOT_AVAILABLE = Cell(None, "not available")
LATENCY_HEADERS = ["Wait state", "Segment", "Bursts counted"] + [f"{lab} latency (µs)" for _, lab, _ in LATENCY_STATS]


def html(ctx: SectionContext) -> Markup:
    s: HirSummary = ctx.summary
    out = notes_html(s.notes)
    out.append(Markup("<h3>Preconditioning</h3>"))
    if s.preconditioning is not None:
        fixed = s.preconditioning.fixed_length or s.preconditioning.wipc_multiple
        out.append(Markup(f'<p class="{"warn" if fixed else "note"}">{escape(s.preconditioning.describe())}.</p>'))
    out.append(Markup(f'<p class="note">Each round: {s.preconditioning_cells_per_round} RND 4K write cells back to '
                      f'back; steady state is judged on the IOPS of the last cell of each round.</p>'))
    if s.load():
        out.append(Markup('<p class="note">Every burst and preconditioning cell at {}: the burst latency includes '
                          'the queueing of that many I/Os.</p>').format(s.load()))
    if s.steady.trackers:
        out.append(ctx.steady_block("pc", s.steady, key="preconditioning"))
    elif s.preconditioning_iops:
        y = s.preconditioning_iops
        fig = ctx.figure()
        plots.series_plot(fig, {"IOPS": (list(range(1, len(y) + 1)), y)}, "round", "IOPS", ylim0=True)
        out.append(ctx.plot(fig, "preconditioning", "preconditioning IOPS per round"))
    segments = s.wait_states
    if not segments:
        return Markup("").join(out)
    out.append(Markup("<h3>Wait states</h3>"))
    out.append(Markup(f'<p class="note">Each wait state: {s.repetitions} × [{s.burst_s:g} s '
                      f'of RND 4K writes after the idle] (AB), then {s.repetitions} × '
                      f'{s.burst_s:g} s of continuous writes (C, the baseline). '
                      f'Recovery ratio = mean AB IOPS / mean C IOPS.</p>'))
    out.append(ctx.table("wait-states", WAIT_STATE_HEADERS, wait_state_rows(segments),
                         caption="Per wait state: mean IOPS of the bursts after idle (AB) and of the continuous "
                                 "baseline (C), their ratio, the idle measured between AB bursts, and burst length"))
    line = timeline(ctx, segments)
    out.append(burst_timeline_plot(ctx, segments, line, "iops-vs-time", "IOPS", "IOPS"))
    labels = list(segments)
    fig = ctx.figure()
    plots.bar_plot(fig, [f"idle {x}" for x in labels],
                   {"AB: mean IOPS after idle": [segments[x].ab_iops_mean for x in labels],
                    "C: mean IOPS, continuous": [segments[x].c_iops_mean for x in labels]},
                   "wait state", "IOPS")
    out.append(ctx.plot(fig, "ab-vs-c", "mean burst IOPS per wait state, AB vs C"))
    out.append(Markup("<h3>Latency of the bursts</h3>"))
    if all(w.ab_latency is None and w.c_latency is None for w in segments.values()):
        # a summary of before HIR latency (version 3) has no per-burst list; one since has one entry per burst,
        # None where a burst completed no write
        stored_before = all(not w.ab_burst_latency and not w.c_burst_latency for w in segments.values())
        why = ("this run was stored before ssdpts summarised HIR latency" if stored_before else
               "no burst completed a write in fio's records")
        out.append(Markup(f'<p class="note">Burst latency: not available ({why}).</p>'))
        return Markup("").join(out)
    out.append(ctx.table("latency", LATENCY_HEADERS, latency_rows(s),
                         caption="Write latency of the bursts (total latency, µs): AB bursts after an idle and C "
                                 "bursts after the first, as the IOPS means; percentiles from the bursts' merged "
                                 "fio histograms"))
    for key, lab, get in LATENCY_STATS:
        out.append(burst_timeline_plot(ctx, segments, line, f"latency-{key.replace('.', '_')}-vs-time",
                                       f"{lab} latency", f"{lab} latency (ms)", get))
    return Markup("").join(out)


def parts(ctx: SectionContext) -> Markup:
    """Several drives at once: per wait state and drive, AB / C burst means and their ratio."""
    s: HirSummary = ctx.summary
    rows = []
    found: set[str] = set()
    per: dict[tuple[str, str, str], list[float]] = {}
    for ws in s.wait_states:
        for seg in ("AB", "C"):
            for r in ctx.rounds(f"ws={ws}/{seg}"):
                for c in r.cells:
                    for label, p in c.parts.items():
                        found.add(label)
                        per.setdefault((ws, seg, label), []).append(p.iops)
    if not found:
        return Markup("")
    labels = ordered_part_labels(ctx.run, found)
    for ws in s.wait_states:
        for label in labels:
            ab, cc = per.get((ws, "AB", label), []), per.get((ws, "C", label), [])
            after, base = ab[1:] or ab, cc[1:] or cc      # as hir/run.py: bursts after an idle, continuous
            ab_mean, c_mean = _mean(after), _mean(base)
            ratio = ab_mean / c_mean if ab_mean is not None and c_mean else None
            rows.append([ws, label, len(ab), ab_mean, c_mean, Cell(ratio, "–" if ratio is None else f"{ratio:.3f}")])
    return Markup("").join([
        Markup("<h3>Wait states per drive</h3>"), drives_intro(labels),
        ctx.table("drives", ["Wait state", "Drive", "AB bursts", "Mean AB burst IOPS", "Mean C IOPS",
                             "Recovery ratio (AB / C)"], rows,
                  caption="Per wait state and drive: mean IOPS after idle (AB), continuous (C), and their ratio")])


def compare(ctx: CompareContext) -> Markup:
    """Recovery ratio and mean AB / C IOPS per shared wait state, one series per run."""
    per: list[dict[str, WaitState]] = [v.summary.wait_states for v in ctx.views]
    labels = [x for x in per[0] if all(x in p for p in per[1:])]
    if not labels:
        return Markup('<p class="warn">The runs share no HIR wait state.</p>')
    out = []
    fig = ctx.figure()
    plots.bar_plot(fig, [f"idle {x}" for x in labels],
                   {v.label: [p[x].recovery_ratio for x in labels] for v, p in zip(ctx.views, per)},
                   "wait state", "recovery ratio (AB / C IOPS)")
    out.append(ctx.plot(fig, "recovery-ratio", "recovery ratio per wait state, one series per run"))
    quantities: tuple[tuple[str, str, Callable[[WaitState], float | None]], ...] = (
        ("ab-iops-mean", "mean AB burst IOPS", lambda w: w.ab_iops_mean),
        ("c-iops-mean", "mean C IOPS", lambda w: w.c_iops_mean),
        ("recovery-ratio", "recovery ratio", lambda w: w.recovery_ratio))
    for key, what, get in quantities:
        out.append(ctx.side_by_side(key, [(x,) for x in labels], [[get(p[x]) for p in per] for x in labels],
                                    ["Wait state"], what,
                                    caption=f"HIR {what} per wait state; Δ relative to the first run"))
    out.append(_compare_latency(ctx, per, labels))
    return Markup("").join(out)


def _compare_latency(ctx: CompareContext, per: list[dict[str, WaitState]], labels: list[str]) -> Markup:
    """Write latency of the AB bursts (after idle) per shared wait state: one chart and table per statistic."""
    out = []
    for key, lab, get in LATENCY_STATS:
        vals = [[None if p[x].ab_latency is None else get(p[x].ab_latency) for p in per] for x in labels]
        if all(v is None for row in vals for v in row):
            continue
        slug = f"ab-latency-{key.replace('.', '_')}"
        fig = ctx.figure()
        plots.bar_plot(fig, [f"idle {x}" for x in labels],
                       {v.label: [None if row[i] is None else row[i] / 1000 for row in vals]
                        for i, v in enumerate(ctx.views)},
                       "wait state", f"{lab} latency (ms)")
        out.append(ctx.plot(fig, slug, f"{lab} write latency of the bursts after idle (AB) per wait state, "
                                       "one series per run"))
        out.append(ctx.side_by_side(slug, [(x,) for x in labels], vals, ["Wait state"], f"AB {lab} latency (µs)",
                                    caption=f"HIR {lab} latency of the AB bursts per wait state (µs); Δ relative "
                                            "to the first run; empty: not available in that run"))
    return Markup("").join(out)


def text(s: HirSummary, clock: Clock) -> list[str]:
    lines = ["  wait states (after the RND 4K write preconditioning above):",
             f"  {'idle':>6} {'burst IOPS after idle':>22} {'continuous IOPS':>16} {'ratio':>6}"]
    for label, w in s.wait_states.items():
        ratio = "–" if w.recovery_ratio is None else f"{w.recovery_ratio:.2f}"
        lines.append(f"  {label:>6} {w.ab_iops_mean:>22,.0f} {w.c_iops_mean:>16,.0f} {ratio:>6}")
    if s.preconditioning is not None:
        lines.insert(0, f"  preconditioning: {s.preconditioning.describe()}")
    if s.load():
        lines.insert(0, f"  every burst at {s.load()}")
    if any(w.ab_latency for w in s.wait_states.values()):
        lines += ["  write latency of the AB bursts after idle (µs):",
                  f"  {'idle':>6} " + " ".join(f"{lab:>9}" for _, lab, _ in LATENCY_STATS)]
        for label, w in s.wait_states.items():
            lines.append(f"  {label:>6} " + " ".join(
                f"{'–' if v is None else f'{v:,.0f}':>9}" for v in
                (None if w.ab_latency is None else get(w.ab_latency) for _, _, get in LATENCY_STATS)))
    return lines


def headline(s: HirSummary) -> list[Headline]:
    """Per wait state: mean IOPS of the bursts after idle, and the recovery ratio (AB / C)."""
    out = []
    for label, w in s.wait_states.items():
        key = label.replace(".", "_")
        out.append(Headline(f"hir_{key}_ab_iops", f"HIR idle {label}: mean burst IOPS after idle", w.ab_iops_mean,
                            "IOPS"))
        out.append(Headline(f"hir_{key}_recovery_ratio", f"HIR idle {label}: recovery ratio (AB / C IOPS)",
                            w.recovery_ratio, "×"))
    if s.threads is not None and s.iodepth is not None:
        # a latency bound holds only at a load: criteria name this figure beside their HIR latency rules
        out.append(Headline("hir_outstanding_ios", "HIR I/Os outstanding in every burst (threads × queue depth)",
                            s.threads * s.iodepth, ""))
    if s.bursts_latency is not None:
        at = f" at {s.load()}" if s.load() else ""
        out.append(Headline("hir_bursts_lat_p99.9_us", f"HIR p99.9 write latency, every burst{at}",
                            s.bursts_latency.p("99.9"), "µs"))
        out.append(Headline("hir_bursts_lat_p99.99_us", f"HIR p99.99 write latency, every burst{at}",
                            s.bursts_latency.p("99.99"), "µs"))
        out.append(Headline("hir_bursts_lat_max_us", f"HIR max write latency, every burst{at}",
                            s.bursts_latency.max_us, "µs"))
    return out


RENDERERS = Renderers(html=html, parts=parts, compare=compare, text=text, headline=headline)
