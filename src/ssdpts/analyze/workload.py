"""`ssdpts analyze workload FILE`: what a captured workload (`*.workload.json`, capture.model) is made of.

The SNIA RWSW views of a capture (docs/rwsw.md): the IO stream map (each step's share of I/Os per stream, the
top-N streams named and the rest folded into "other"), the top-N table (the applied test workload), the
read/write and random/sequential shares, and the queue depth over time. Every figure is computed from the
file's counts; nothing is run on a device. Printed as text (or `--json`); `--out DIR` also writes an HTML page
in the report style with PNG/SVG charts and CSV tables.

Module-level imports stay light: `ssdpts analyze workload --help` imports every analysis (commands/analyses.py),
so the report and the render kit are imported inside `write_html` only.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from ..capture.model import CaptureSource, QueueDepth, StreamCount, WorkloadCapture
from ..errors import SsdptsError
from ..records import to_data

SCHEMA = "ssdpts.workload-analysis/1"
DEFAULT_TOP = 5
COVER_PCT = 80.0             # testmyworkload.com asks how many streams make at least 80 % of the I/Os
OTHER = "other"
HTML_NAME = "workload.html"


@dataclass
class StreamRow:
    """A group of IO streams with its I/Os and bytes: a row of the top-N table (one stream, or `other`: the
    streams outside the top N folded together), or one side of the read/write or random/sequential division."""

    label: str                   # 'RND 4K R', 'other', or read | write | random | sequential
    streams: int                 # how many IO streams the row holds
    ios: int
    bytes: int
    ios_pct: float               # share of all I/Os of the capture
    bytes_pct: float             # share of all bytes


@dataclass
class QueueDepthSummary:
    samples: int                 # issues seen (each saw the device with this many requests in flight)
    mean: float
    p99: int
    max: int


@dataclass
class StepRow:
    """One time step: its I/Os, each top-N stream's share of them (and 'other'), and its queue depth."""

    index: int                   # 1-based, as printed
    start_s: float
    duration_s: float
    ios: int
    iops: float                  # ios / duration_s (0 for a zero-length step)
    read_pct: float              # of the step's I/Os
    shares: dict[str, float]     # label -> % of the step's I/Os; top-N labels in table order, then 'other'
    queue_depth: QueueDepthSummary
    threads: int = 0             # tasks that queued the step's I/O (0: not captured)


@dataclass
class WorkloadAnalysis:
    schema: str
    file: str
    source: CaptureSource
    ios: int
    bytes: int
    stream_count: int            # distinct IO streams in the capture
    streams_for_80pct: int       # the fewest streams (most I/Os first) that hold at least 80 % of the I/Os
    top_n: int
    top: list[StreamRow]         # the applied test workload, most I/Os first
    other: StreamRow | None      # None when the top N hold every stream
    splits: list[StreamRow]      # read, write, random, sequential
    queue_depth: QueueDepthSummary
    device_size_bytes: int
    lba_min_bytes: int
    lba_max_bytes: int
    steps: list[StepRow]
    lost_events: int = 0         # trace events the capture lost (> 0: counts are low)
    queue_depth_from: str = "completions"
    application: list[StreamRow] = field(default_factory=list)   # the application's request sizes (bios)
    lba_zones_pct: list[float] = field(default_factory=list)     # % of the I/Os in each equal zone of the device
    trace_file: str = ""         # the kept trace beside the file ("": none)

    @property
    def top_ios_pct(self) -> float:
        """How much of the capture the applied test workload covers (% of I/Os)."""
        return sum(r.ios_pct for r in self.top)


# --- checks and maths -------------------------------------------------------------------------

def check(capture: WorkloadCapture, origin: str) -> None:
    """Refuse (one line) a capture with nothing to analyze (the reader has checked its values)."""
    if capture.ios == 0:
        raise SsdptsError(f"{origin}: the capture holds no I/Os; capture while the application does I/O "
                          "(or for longer)")


def _pct(part: int, whole: int) -> float:
    return part * 100.0 / whole if whole else 0.0


def _depths(qd: QueueDepth) -> QueueDepthSummary:
    return QueueDepthSummary(samples=qd.samples, mean=qd.mean, p99=qd.percentile(99),
                             max=max((d for d, c in qd.histogram.items() if c), default=0))


def _row(label: str, members: list[StreamCount], ios: int, total_bytes: int) -> StreamRow:
    got_ios, got_bytes = sum(s.ios for s in members), sum(s.bytes for s in members)
    return StreamRow(label=label, streams=len(members), ios=got_ios, bytes=got_bytes,
                     ios_pct=_pct(got_ios, ios), bytes_pct=_pct(got_bytes, total_bytes))


def streams_to_cover(capture: WorkloadCapture, pct: float = COVER_PCT) -> int:
    """The fewest streams, most I/Os first, whose I/Os reach `pct` % of all I/Os."""
    seen = 0
    for n, s in enumerate(capture.top(len(capture.streams)), 1):
        seen += s.ios
        if seen * 100 >= pct * capture.ios:
            return n
    return len(capture.streams)


def analyze(capture: WorkloadCapture, top_n: int = DEFAULT_TOP, file: str = "") -> WorkloadAnalysis:
    """The RWSW views of a capture (see the module doc); `check` it first."""
    ios = capture.ios
    total_bytes = sum(s.bytes for s in capture.streams)
    top = capture.top(top_n)
    named = {s.stream for s in top}
    rest = [s for s in capture.streams if s.stream not in named]
    labels = [s.stream.label for s in top]
    steps = []
    for n, step in enumerate(capture.steps, 1):
        by_label = {s.stream.label: s.ios for s in step.streams}
        shares = {label: _pct(by_label.get(label, 0), step.ios) for label in labels}
        shares[OTHER] = _pct(sum(s.ios for s in step.streams if s.stream not in named), step.ios)
        steps.append(StepRow(index=n, start_s=step.start_s, duration_s=step.duration_s, ios=step.ios,
                             iops=step.ios / step.duration_s if step.duration_s > 0 else 0.0,
                             read_pct=_pct(sum(s.ios for s in step.streams if s.stream.rw == "read"), step.ios),
                             shares=shares, queue_depth=_depths(step.queue_depth), threads=step.threads))
    splits = [_row(name, [s for s in capture.streams if getattr(s.stream, attr) == name], ios, total_bytes)
              for attr, names in (("rw", ("read", "write")), ("access", ("random", "sequential")))
              for name in names]
    return WorkloadAnalysis(
        schema=SCHEMA, file=file, source=capture.source, ios=ios, bytes=total_bytes,
        stream_count=len(capture.streams), streams_for_80pct=streams_to_cover(capture), top_n=top_n,
        top=[_row(s.stream.label, [s], ios, total_bytes) for s in top],
        other=_row(OTHER, rest, ios, total_bytes) if rest else None,
        splits=splits, queue_depth=_depths(capture.queue_depth), device_size_bytes=capture.device_size_bytes,
        lba_min_bytes=capture.lba_min_bytes, lba_max_bytes=capture.lba_max_bytes, steps=steps,
        lost_events=capture.lost_events, queue_depth_from=capture.queue_depth_from,
        application=_application_rows(capture, top_n),
        lba_zones_pct=[_pct(n, sum(capture.lba_zones)) for n in capture.lba_zones], trace_file=capture.trace_file)


def _application_rows(capture: WorkloadCapture, top_n: int) -> list[StreamRow]:
    """The application's top streams (its request sizes, before the device's splits and merges)."""
    ios = sum(s.ios for s in capture.application_streams)
    total_bytes = sum(s.bytes for s in capture.application_streams)
    return [_row(s.stream.label, [s], ios, total_bytes) for s in capture.application_streams[:top_n]]


def to_json(result: WorkloadAnalysis) -> dict:
    doc = to_data(result)
    doc["top_ios_pct"] = result.top_ios_pct
    return doc


# --- text ---------------------------------------------------------------------------------------

def _size(n: float) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n:.0f} B"


def _table_rows(result: WorkloadAnalysis) -> list[StreamRow]:
    return result.top + ([result.other] if result.other else [])


def _row_name(row: StreamRow) -> str:
    if row.label != OTHER:
        return row.label
    return f"{OTHER} ({row.streams} stream{'s' if row.streams > 1 else ''})"


def source_line(result: WorkloadAnalysis) -> str:
    s = result.source
    when = f", started {s.started_at}" if s.started_at else ""
    return (f"{s.kind} capture of {s.device}{when}: {s.duration_s:g} s in {len(result.steps)} steps "
            f"of {s.step_s:g} s")


def lba_line(result: WorkloadAnalysis) -> str:
    span = result.lba_max_bytes - result.lba_min_bytes
    of = (f" of the {_size(result.device_size_bytes)} device ({_pct(span, result.device_size_bytes):.1f} %)"
          if result.device_size_bytes else "")
    return f"LBA range touched: {_size(result.lba_min_bytes)} .. {_size(result.lba_max_bytes)}{of}"


def format_text(result: WorkloadAnalysis) -> str:
    qd = result.queue_depth
    by = {s.label: s for s in result.splits}
    lines = [f"{result.file}: {source_line(result)}",
             f"{result.ios:,} I/Os, {_size(result.bytes)} in {result.stream_count} IO streams; {lba_line(result)}",
             f"read {by['read'].ios_pct:.1f} % of I/Os ({by['read'].bytes_pct:.1f} % of bytes), "
             f"write {by['write'].ios_pct:.1f} % ({by['write'].bytes_pct:.1f} %); "
             f"random {by['random'].ios_pct:.1f} % ({by['random'].bytes_pct:.1f} %), "
             f"sequential {by['sequential'].ios_pct:.1f} % ({by['sequential'].bytes_pct:.1f} %)",
             f"queue depth: mean {qd.mean:.2f}, p99 {qd.p99}, max {qd.max} "
             + (f"({qd.samples:,} issues)" if result.queue_depth_from != "in-flight samples"
                else f"({qd.samples:,} samples of the kernel's in-flight counter)"),
             *([f"INCOMPLETE: {result.lost_events:,} trace events were lost while capturing: counts are low "
                "and the stream shares may be off; capture again (ssdpts capture reads faster now) or accept it "
                "knowingly"] if result.lost_events else []),
             *([f"LBA zones ({100 / len(result.lba_zones_pct):g} % of the device each), % of the I/Os: "
                + " ".join(f"{p:.1f}" for p in result.lba_zones_pct)] if result.lba_zones_pct else []),
             *([f"kept trace: {result.trace_file} (every I/O, for rwsw replay_trace)"] if result.trace_file else []),
             "",
             f"top {len(result.top)} streams (the applied test workload) hold {result.top_ios_pct:.1f} % of the I/Os; "
             f"{result.streams_for_80pct} hold at least {COVER_PCT:g} %:",
             f"  {'stream':<20} {'I/Os':>12} {'share':>8} {'bytes':>12} {'of bytes':>9}"]
    for row in _table_rows(result):
        lines.append(f"  {_row_name(row):<20} {row.ios:>12,} {row.ios_pct:>6.1f} % {_size(row.bytes):>12} "
                     f"{row.bytes_pct:>7.1f} %")
    if result.application:
        lines += ["", "the application's requests (block_bio_queue, before the device's splits and merges; the "
                      "streams above are the device's requests, which the replay applies):"]
        lines += [f"  {row.label:<20} {row.ios:>12,} {row.ios_pct:>6.1f} % {_size(row.bytes):>12} "
                  f"{row.bytes_pct:>7.1f} %" for row in result.application]
    if result.steps:
        lines += ["", f"  {'step':>4} {'start s':>9} {'I/Os':>10} {'IOPS':>10} {'read %':>7} {'QD mean':>8} "
                      f"{'QD p99':>7} {'threads':>7}  most I/Os"]
        for st in result.steps:
            lead = max(st.shares, key=st.shares.get) if st.ios else "–"
            lines.append(f"  {st.index:>4} {st.start_s:>9.1f} {st.ios:>10,} {st.iops:>10.1f} {st.read_pct:>7.1f} "
                         f"{st.queue_depth.mean:>8.2f} {st.queue_depth.p99:>7} {st.threads or '-':>7}  {lead}")
    return "\n".join(lines)


# --- HTML ---------------------------------------------------------------------------------------

def _time_axis(result: WorkloadAnalysis) -> tuple[str, float]:
    """(axis label, seconds per unit): minutes once the capture is 10 minutes or longer."""
    span = max((s.start_s + s.duration_s for s in result.steps), default=0.0)
    return ("time (min)", 60.0) if span >= 600 else ("time (s)", 1.0)


def write_html(result: WorkloadAnalysis, out_dir: str | Path) -> Path:
    """DIR/workload.html with the charts (plots/*.png, *.svg) and tables (tables/*.csv) beside it."""
    from ..render import plots
    from ..report.core import env
    from ..render.toolkit import Artifacts, Cell

    out = Path(out_dir)
    art = Artifacts(out)
    footer = f"ssdpts analyze workload · {Path(result.file).name}"
    xlabel, unit = _time_axis(result)
    starts = [s.start_s / unit for s in result.steps]
    widths = [s.duration_s / unit for s in result.steps]
    figures = {}
    if result.steps:
        labels = [r.label for r in result.top] + [OTHER]
        series = {label: [s.shares[label] for s in result.steps] for label in labels}
        fig = art.figure((9.0, 4.4))
        plots.stacked_steps(fig, starts, widths, series, xlabel, "share of the step's I/Os (%)",
                            colors={OTHER: "#c7c7c7"})
        figures["map"] = art.save_figure(
            fig, "io-stream-map", f"IO stream map — top {len(result.top)} streams and other, per step", footer,
            caption="Each bar is one time step; its segments are the streams' shares of that step's I/Os.")
        fig = art.figure()
        mid = [s + w / 2 for s, w in zip(starts, widths)]
        plots.series_plot(fig, {"mean": (mid, [s.queue_depth.mean for s in result.steps]),
                                "p99": (mid, [s.queue_depth.p99 for s in result.steps])},
                          xlabel, "requests in flight at issue", ylim0=True)
        figures["qd"] = art.save_figure(fig, "queue-depth", "Queue depth over time — mean and p99 per step",
                                        footer)
        fig = art.figure()
        plots.series_plot(fig, {"IOPS": (mid, [s.iops for s in result.steps])}, xlabel, "I/Os per second",
                          ylim0=True)
        figures["iops"] = art.save_figure(fig, "iops", "I/O rate over time — I/Os per second per step", footer)

    def pct(v: float) -> Cell:
        return Cell(v, f"{v:.1f} %")

    def size(n: int) -> Cell:
        return Cell(n, _size(n))

    tables = {
        "top": art.table(
            "top-streams", ["Stream", "I/Os", "Share of I/Os", "Bytes", "Share of bytes"],
            [[_row_name(r), r.ios, pct(r.ios_pct), size(r.bytes), pct(r.bytes_pct)] for r in _table_rows(result)],
            caption=f"Top {len(result.top)} IO streams (the applied test workload: {result.top_ios_pct:.1f} % "
                    "of the I/Os)",
            csv_headers=["stream", "ios", "ios_pct", "bytes", "bytes_pct"]),
        "splits": art.table(
            "shares", ["Division", "I/Os", "Share of I/Os", "Bytes", "Share of bytes"],
            [[s.label, s.ios, pct(s.ios_pct), size(s.bytes), pct(s.bytes_pct)] for s in result.splits],
            caption="Read/write and random/sequential shares",
            csv_headers=["division", "ios", "ios_pct", "bytes", "bytes_pct"]),
        "steps": art.table(
            "steps", ["Step", "Start (s)", "Duration (s)", "I/Os", "IOPS", "Read %", "QD mean", "QD p99", "QD max"],
            [[s.index, s.start_s, s.duration_s, s.ios, s.iops, pct(s.read_pct), s.queue_depth.mean,
              s.queue_depth.p99, s.queue_depth.max] for s in result.steps],
            caption="Time steps",
            csv_headers=["step", "start_s", "duration_s", "ios", "iops", "read_pct", "qd_mean", "qd_p99", "qd_max"]),
    }
    html = env().get_template("workload.html.j2").render(
        result=result, source=source_line(result), lba=lba_line(result), size=_size(result.bytes),
        figures=figures, tables=tables, version=_version(), generated=time.time())
    path = out / HTML_NAME
    path.write_text(html, encoding="utf-8")
    art.close()
    return path


def _version() -> str:
    from .. import __version__

    return __version__
