"""RWSW renderers: the shared demand-sweep renderers (pts/demand_render.py), then the applied streams and the replay."""

from __future__ import annotations

from markupsafe import Markup

from ...render.context import SectionContext
from .. import demand_render
from ..spec import Headline, Renderers
from .composite import Composite
from .summary import ReplayStep, RwswSummary

parts = demand_render.parts
compare = demand_render.compare

STREAM_HEADERS = ["Stream", "Capture I/Os", "% of capture", "% requested", "% applied"]
REPLAY_HEADERS = ["Step", "Start (s)", "Captured IOPS", "Captured mean QD", "QD", "Idle before (s)", "Streams",
                  "Runtime (s)", "IOPS", "Mean latency (µs)", "Read p99 (µs)", "Write p99 (µs)",
                  "Largest share error (pp)"]


def stream_rows(c: Composite) -> list[list]:
    return [[s.label, s.capture_ios, round(s.capture_pct, 2), round(s.requested_pct, 2), round(s.applied_pct, 2)]
            for s in c.streams]


def share_error_pp(r: ReplayStep) -> float | None:
    """Largest |delivered - requested| share of the step's streams, when fio's counts tell them apart."""
    if r.delivered_pct is None:
        return None
    return max(abs(r.delivered_pct.get(s.label, 0.0) - s.requested_pct) for s in r.composite.streams)


def _p99(lat) -> float | None:
    return None if lat is None else lat.p("99")


def replay_rows(s: RwswSummary) -> list[list]:
    rows = []
    for r in s.replay:
        err = share_error_pp(r)
        rows.append([r.step, round(r.start_s, 3), round(r.captured_iops, 1), round(r.captured_qd_mean, 2), r.qd,
                     round(r.idle_before_s, 3), ", ".join(f"{x.label} {x.requested_pct:.0f}%" for x in r.composite.streams),
                     round(r.runtime_s, 3), round(r.iops, 1), round(r.lat_mean_us, 1), _p99(r.read_lat),
                     _p99(r.write_lat), None if err is None else round(err, 2)])
    return rows


def html(ctx: SectionContext) -> Markup:
    s: RwswSummary = ctx.summary
    w = s.workload
    pattern = (f"Workload {w.given} ({w.kind} capture of {w.device}, {w.duration_s:g} s, {w.ios:,} I/Os in "
               f"{w.streams} IO streams, mean device QD {w.queue_depth_mean:.1f}). Applied: the top "
               f"{len(s.applied.streams)} streams ({s.applied.coverage_pct:.1f} % of the I/Os) as one fio job: "
               f"{s.applied.spec_label}. TC = threads, QD = queue depth per thread.")
    out = [demand_render.html(ctx, pattern, split_rw=True)]
    out.append(Markup("<h3>Applied workload (IO streams)</h3>"))
    out.append(ctx.table("streams", STREAM_HEADERS, stream_rows(s.applied),
                         caption="% requested: of the chosen streams' I/Os; % applied: what the job's whole-percent "
                                 "draws give"))
    if s.replay:
        out.append(Markup("<h3>Replay (captured steps in order)</h3>"))
        out.append(ctx.table("replay", REPLAY_HEADERS, replay_rows(s),
                             caption=f"Each step: its own top streams at the step's mean QD (TC 1) for "
                                     f"{s.replay_time_scale:g} × its captured length; share error from fio's "
                                     "per-direction I/O and byte counts (blank: they cannot tell the streams apart)"))
    return Markup("").join(out)


def text(s: RwswSummary) -> list[str]:
    w = s.workload
    lines = [f"  workload {w.given}: {w.ios:,} I/Os, {w.streams} streams; applied {len(s.applied.streams)} "
             f"({s.applied.coverage_pct:.1f} %): {s.applied.spec_label}"]
    lines += [f"    {r[0]:<12} {r[3]:>6.2f} % requested, {r[4]:>6.2f} % applied" for r in stream_rows(s.applied)]
    lines += demand_render.text(s)
    if s.replay:
        lines.append(f"  replay ({len(s.replay)} steps): step, captured IOPS / QD, replayed QD, IOPS, mean µs")
        for r in s.replay:
            lines.append(f"    {r.step:>4} {r.captured_iops:>11,.0f} {r.captured_qd_mean:>6.1f}  QD{r.qd:<4}"
                         f"{r.iops:>11,.0f} {r.lat_mean_us:>9.1f}")
    return lines


def headline(s: RwswSummary) -> list[Headline]:
    return demand_render.headline(s, "rwsw")


RENDERERS = Renderers(html=html, parts=parts, compare=compare, text=text, headline=headline)
