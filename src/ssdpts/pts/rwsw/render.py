"""RWSW renderers: the shared demand-sweep renderers (pts/demand_render.py), then the applied streams and the replay."""

from __future__ import annotations

from markupsafe import Markup

from ...clock import Clock
from ...render.context import SectionContext
from .. import demand_render
from ..spec import Headline, Renderers
from .composite import Composite
from .summary import ReplayStep, RwswSummary, TraceReplay

parts = demand_render.parts
compare = demand_render.compare

STREAM_HEADERS = ["Stream", "Capture I/Os", "% of capture", "% requested", "% applied (jobs' draws)",
                  "% applied (fio counts)", "% measured (device)"]
REPLAY_HEADERS = ["Step", "Start (s)", "Captured IOPS", "Replayed IOPS", "IOPS error (%)", "Captured mean QD",
                  "QD per stream", "Captured threads", "Idle before (s)", "Runtime (s)", "Mean latency (µs)", "Read p99 (µs)",
                  "Write p99 (µs)", "Largest share error, fio (pp)", "Largest share error, device (pp)"]
REPLAY_STREAM_HEADERS = ["Step", "Stream", "% of step (captured)", "% requested", "Rate (IOPS)", "% applied (fio)",
                         "% measured (device)"]


def stream_rows(c: Composite, fio: dict | None = None, device: dict | None = None) -> list[list]:
    return [[s.label, s.capture_ios, round(s.capture_pct, 2), round(s.requested_pct, 2), round(s.applied_pct, 2),
             _r((fio or {}).get(s.label)), _r((device or {}).get(s.label))] for s in c.streams]


def _largest_error(got: dict | None, c: Composite) -> float | None:
    known = [abs(got[s.label] - s.requested_pct) for s in c.streams if got and got.get(s.label) is not None]
    return max(known) if known else None


def share_error_pp(r: ReplayStep) -> float | None:
    """Largest |applied - requested| share of the step's streams, from fio's per-job counts."""
    return _largest_error(r.delivered_pct, r.composite)


def measured_error_pp(r: ReplayStep) -> float | None:
    """Largest |measured - requested| share of the step's streams the block layer's counts tell apart; None where
    the step's device record is mixed with a neighbour's (its shares are the window's, not the step's: a note
    says so)."""
    return None if r.device_mixed else _largest_error(r.measured_pct, r.composite)


def _p99(lat) -> float | None:
    return None if lat is None else lat.p("99")


def _r(v: float | None, digits: int = 2) -> float | None:
    return None if v is None else round(v, digits)


def replay_rows(s: RwswSummary) -> list[list]:
    return [[r.step, round(r.start_s, 3), round(r.captured_iops, 1), round(r.iops, 1), _r(r.iops_error_pct, 1),
             round(r.captured_qd_mean, 2), r.qd_per_stream or r.qd, r.threads or "not captured",
             round(r.idle_before_s, 3),
             round(r.runtime_s, 3), round(r.lat_mean_us, 1), _p99(r.read_lat), _p99(r.write_lat),
             _r(share_error_pp(r)), _r(measured_error_pp(r))] for r in s.replay]


def replay_stream_rows(s: RwswSummary) -> list[list]:
    rows = []
    for r in s.replay:
        for x in r.composite.streams:
            rows.append([r.step, x.label, round(x.capture_pct, 2), round(x.requested_pct, 2), r.rates.get(x.job_name),
                         _r((r.delivered_pct or {}).get(x.label)), _r((r.measured_pct or {}).get(x.label))])
    return rows


def html(ctx: SectionContext) -> Markup:
    s: RwswSummary = ctx.summary
    w = s.workload
    pattern = (f"Workload {w.given} ({w.kind} capture of {w.device}, {w.duration_s:g} s, {w.ios:,} I/Os in "
               f"{w.streams} IO streams, mean device QD {w.queue_depth_mean:.1f}). Applied: the top "
               f"{len(s.applied.streams)} streams ({s.applied.coverage_pct:.1f} % of the I/Os) as "
               f"{f'{len(s.applied.groups)} fio jobs held by flow' if s.applied.groups else 'one fio job'}: "
               f"{s.applied.spec_label}. TC = threads, QD = queue depth per thread.")
    out = [demand_render.html(ctx, pattern, split_rw=True)]
    out.append(Markup("<h3>Applied workload (IO streams)</h3>"))
    out.append(ctx.table("streams", STREAM_HEADERS, stream_rows(s.applied, s.applied_fio_pct, s.applied_device_pct),
                         caption="% requested: of the chosen streams' I/Os; % applied: what the jobs' whole-percent "
                                 "draws and flow weights give, and what fio counted over the sweep's cells; % "
                                 "measured: the device's block-layer counts over them (blank where they cannot tell "
                                 "the streams apart)"))
    if s.replay:
        out.append(Markup("<h3>Replay (captured steps in order, at their captured intensity)</h3>"))
        out.append(ctx.table("replay", REPLAY_HEADERS, replay_rows(s),
                             caption=f"Each step: one fio job per top stream at its captured IOPS (rate_iops), each "
                                     f"allowed the step's 99th-percentile QD, for {s.replay_time_scale:g} × its "
                                     "captured length; IOPS error: replayed against captured; share errors: fio's "
                                     "own per-job counts, and the device's (block layer) where its per-direction "
                                     "counts tell the streams apart (blank where the step's record is mixed with "
                                     "a neighbour's: a note says so)"))
        out.append(ctx.table("replay-streams", REPLAY_STREAM_HEADERS, replay_stream_rows(s),
                             caption="Every replayed stream: captured, requested (of the step's top streams), "
                                     "applied (fio's per-job I/O counts) and measured (the device's block-layer "
                                     "counts; blank where they cannot tell the streams apart) shares"))
    if s.trace_replay is not None:
        out.append(Markup("<h3>Replay of the kept trace (I/O for I/O)</h3>"))
        out.append(ctx.table("trace-replay", TRACE_HEADERS, [trace_row(s.trace_replay)],
                             caption="fio read_iolog of the capture's kept trace, redirected to the target, a thread "
                                     "per issuing task, each I/O at its captured time (× 100 / rate %), each thread "
                                     "allowed the capture's deepest queue; "
                                     "device: the block layer's count during the cell"))
    return Markup("").join(out)


TRACE_HEADERS = ["Trace", "Captured I/Os", "Captured MiB", "Captured (s)", "Rate (%)", "Threads", "QD cap", "fio I/Os",
                 "Device I/Os", "Device MiB", "Runtime (s)", "IOPS", "Mean latency (µs)"]


def trace_row(t: TraceReplay) -> list:
    return [t.trace, t.captured_ios, round(t.captured_bytes / 2**20, 2), round(t.captured_s, 3), t.rate_pct, t.threads,
            t.iodepth,
            t.fio_ios, t.device_ios, None if t.device_bytes is None else round(t.device_bytes / 2**20, 2),
            round(t.runtime_s, 3), round(t.iops, 1), round(t.lat_mean_us, 1)]


def text(s: RwswSummary, clock: Clock) -> list[str]:
    w = s.workload
    lines = [f"  workload {w.given}: {w.ios:,} I/Os, {w.streams} streams; applied {len(s.applied.streams)} "
             f"({s.applied.coverage_pct:.1f} %): {s.applied.spec_label}"]
    lines.append("    stream: % captured, requested, applied (draws), applied (fio counts), measured (device)")
    lines += [f"    {r[0]:<12} {r[2]:>6.2f} {r[3]:>6.2f} {r[4]:>6.2f} {_pp(r[5])} {_pp(r[6])}"
              for r in stream_rows(s.applied, s.applied_fio_pct, s.applied_device_pct)]
    lines += demand_render.text(s, clock)
    if s.replay:
        lines.append(f"  replay ({len(s.replay)} steps): step, captured / replayed IOPS (error %), QD per stream, "
                     "mean µs, largest share error fio / device (pp)")
        for r, row in zip(s.replay, replay_rows(s)):
            err = "" if r.iops_error_pct is None else f"({r.iops_error_pct:+.1f} %)"
            device = "mixed".rjust(6) if r.device_mixed else _pp(row[14])     # its window held a neighbour's I/O
            lines.append(f"    {r.step:>4} {r.captured_iops:>11,.0f} {r.iops:>11,.0f} {err:>10}  QD{row[6]:<4}"
                         f"{r.lat_mean_us:>9.1f}  {_pp(row[13])} / {device}")
        if not any(r.threads for r in s.replay):
            lines.append("    threads not captured: each stream ran as one thread")
        lines.append("    stream shares per step: captured, requested, applied (fio), measured (device), %")
        for row in replay_stream_rows(s):
            lines.append(f"    {row[0]:>4} {row[1]:<12} {row[2]:>6.2f} {row[3]:>6.2f} {_pp(row[5])} {_pp(row[6])}")
    if s.trace_replay is not None:
        t = s.trace_replay
        lines.append(f"  trace replay ({t.trace}): {t.captured_ios:,} I/Os captured in {t.captured_s:g} s, fio replayed "
                     f"{t.fio_ios:,}, the device saw {'-' if t.device_ios is None else f'{t.device_ios:,}'} in "
                     f"{t.runtime_s:.3f} s ({t.iops:,.0f} IOPS, mean {t.lat_mean_us:.1f} µs) at {t.rate_pct} % rate, "
                     f"{t.threads} thread{'s' if t.threads != 1 else ''}")
    return lines


def _pp(v: float | None) -> str:
    return f"{v:>6.2f}" if v is not None else f"{'-':>6}"


def headline(s: RwswSummary) -> list[Headline]:
    return demand_render.headline(s, "rwsw")


RENDERERS = Renderers(html=html, parts=parts, compare=compare, text=text, headline=headline)
