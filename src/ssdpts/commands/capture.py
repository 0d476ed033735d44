"""`ssdpts capture`: a device's block-layer I/O (or a blktrace/fio iolog taken elsewhere) reduced to a workload
file (docs/rwsw-capture.md). Read-only on the device, so it needs none of the write tests' target refusals.

Ctrl-C (or SIGTERM/SIGHUP) stops a live capture early: what was captured is still written, its source note
says so, and the command exits 130.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import click

from .. import interrupts
from ..capture.imports import Imported, read_blktrace, read_iolog
from ..capture.model import CaptureSource, WorkloadCapture
from ..capture.reduce import Reducer
from ..capture.rawtrace import CaptureSession, Dispatcher, in_flight
from ..capture.tracefs import REORDER_S, block_device, require_root
from ..errors import SsdptsError
from ..inputs import output_file
from ..units import format_duration, parse_duration
from ..workload.trace import TraceWriter, trace_path

DEFAULT_DURATION, DEFAULT_STEP = "10m", "1m"
MAX_STEPS = 10_000
POLL_S = 0.2
PRINT_EVERY_S = 60.0        # a progress line at most this often without a terminal
INTERRUPTED = 130
LOSSY = 1                   # events were lost and --allow-loss was not given: the file is written, but incomplete
WORKLOAD_SUFFIX = ".workload.json"


def check_out(out: str, force: bool) -> Path:
    """--out, refused before anything is captured: an existing file without --force, a directory, a device."""
    p = Path(out)
    if p.is_dir():
        raise SsdptsError(f"--out {p} is a directory; give a file name such as {p}/app.workload.json")
    if p.exists() and p.is_file() and not force:
        raise SsdptsError(f"--out {p} already exists; give another name or add --force to replace it")
    return output_file(p, "--out")


def write_atomically(path: Path, capture: WorkloadCapture) -> None:
    """A temporary file beside `path`, then a rename: a reader sees the old file or the whole new one."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(capture.to_json(), f, indent=1)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def durations(duration: str | None, step: str | None, live: bool) -> tuple[float, float]:
    if duration is not None and not live:
        raise SsdptsError("--duration is for a live capture; an imported capture spans its own timestamps")
    total = parse_duration(duration or DEFAULT_DURATION, "--duration")
    step_s = parse_duration(step or DEFAULT_STEP, "--step")
    if step_s < 1:
        raise SsdptsError(f"--step {step} is shorter than a second; give e.g. --step 10s")
    if live and total < 1:
        raise SsdptsError(f"--duration {duration} is shorter than a second; give e.g. --duration 10m")
    if live and step_s > total:
        raise SsdptsError(f"--step {step} is longer than --duration {duration or DEFAULT_DURATION}; "
                          "give a step that fits, e.g. a tenth of the duration")
    if live and total / step_s > MAX_STEPS:
        raise SsdptsError(f"--duration/--step gives {total / step_s:,.0f} steps (at most {MAX_STEPS:,}); "
                          "give a longer --step")
    return total, step_s


def _now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class _ProgressLine:
    """'capturing /dev/sdb: 1m10s of 10m00s, 8m50s left, 12,345 I/Os' on stderr: redrawn on a terminal,
    a line a minute otherwise."""

    def __init__(self, quiet: bool):
        self.quiet, self.tty, self.printed = quiet, sys.stderr.isatty(), -PRINT_EVERY_S

    def show(self, text: str, elapsed: float) -> None:
        if self.quiet:
            return
        if self.tty:
            sys.stderr.write(f"\r\033[K{text}")
            sys.stderr.flush()
        elif elapsed - self.printed >= PRINT_EVERY_S:
            self.printed = elapsed
            print(text, file=sys.stderr, flush=True)

    def done(self) -> None:
        if self.tty and not self.quiet:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


@dataclass
class LiveCapture:
    """What a live capture of one or more devices gave: a workload per device, the combined one (several
    devices), and what the kernel could not keep."""

    per_device: list[WorkloadCapture]
    combined: WorkloadCapture | None
    interrupted: bool
    lost: int                    # trace events lost (all devices together: they share one tracefs instance)
    events: int                  # trace events read

    @property
    def lost_pct(self) -> float:
        return 100.0 * self.lost / (self.lost + self.events) if self.lost else 0.0


def capture_live(device_paths: list[str], total: float, step_s: float, quiet: bool, command: str,
                 traces: list[Path] | None = None) -> LiveCapture:
    """Capture the devices for `total` seconds into one reducer each (and a combined one for several);
    `traces`: each device's every read and write kept in that file too (--keep-trace)."""
    require_root("capture")
    devices = [block_device(p, bios=True) for p in device_paths]
    writers = [TraceWriter(t) for t in traces] if traces else [None] * len(devices)
    done = False
    try:
        live = _capture_live(device_paths, devices, total, step_s, quiet, command, writers)
        done = True
        return live
    finally:
        for w in writers:
            if w is not None:
                w.close(keep=done)


def _capture_live(device_paths: list[str], devices: list, total: float, step_s: float, quiet: bool, command: str,
                  writers: list) -> LiveCapture:
    started_at = _now_iso()
    progress = _ProgressLine(quiet)
    interrupted = False
    shown = ", ".join(device_paths)
    with CaptureSession(devices) as session:
        # a loaded host's last poll can read the clock past the end: what comes after it is not the capture's
        end = session.start + total
        reducers = [Reducer(session.start, step_s, device_size=d.size_bytes, trace=w, end=end)
                    for d, w in zip(devices, writers)]
        combined = Reducer(session.start, step_s, device_size=sum(d.size_bytes for d in devices), end=end) \
            if len(devices) > 1 else None
        dispatch = Dispatcher(devices, reducers, combined)
        every = reducers + ([combined] if combined is not None else [])
        read = 0
        try:
            while (elapsed := time.monotonic() - session.start) < total:
                # a Ctrl-C while a batch is being counted would drop the rest of it (30,000 I/Os of a 1 s
                # burst lost 18,000 so): signals wait until the batch is counted
                with interrupts.deferred():
                    events = session.events(before=time.monotonic() - REORDER_S)
                    read += len(events)
                    dispatch.feed(events)
                    now = time.monotonic()
                    depths = [in_flight(d) for d in devices]
                    for reducer, depth in zip(reducers, depths):
                        reducer.sample_in_flight(now, depth)
                    if combined is not None:
                        combined.sample_in_flight(now, sum(depths))
                progress.show(f"capturing {shown}: {format_duration(elapsed)} of {format_duration(total)}, "
                              f"{format_duration(total - elapsed)} left, {sum(r.ios for r in reducers):,} I/Os", elapsed)
                time.sleep(min(POLL_S, max(total - elapsed, 0.0)))
        except KeyboardInterrupt:
            interrupts.acknowledge()
            interrupted = True
        ended = min(time.monotonic(), session.start + total)
        session.stop()
        events = [e for e in session.events(before=None) if e[0] < ended * 1e9]   # up to the capture's end
        read += len(events)
        dispatch.feed(events)
        progress.done()
        lost = session.lost
    elapsed = ended - session.start
    notes = []
    if interrupted:
        notes.append(f"stopped early ({interrupts.reason()}) after {format_duration(elapsed)} of "
                     f"{format_duration(total)}: the file holds what was captured until then")
    if lost:
        notes.append(f"{lost:,} of {lost + read:,} trace events were lost (the tracefs buffer overflowed): "
                     "counts are low; queue depths are the kernel's in-flight counter, sampled every "
                     f"{POLL_S:g} s while busy, not each issue's")
    for r in every:
        r.lost_events = lost

    def record(reducer: Reducer, what: str, size: int) -> WorkloadCapture:
        source = CaptureSource(kind="tracefs", device=what, started_at=started_at, duration_s=round(elapsed, 3),
                               step_s=step_s, command=command, note="; ".join([reducer.note(), *notes]))
        return reducer.capture(source, size)

    per_device = [record(r, d.path, d.size_bytes) for r, d in zip(reducers, devices)]
    for w, writer in zip(per_device, writers):
        w.trace_file = writer.path.name if writer is not None else ""
    whole = None
    if combined is not None:
        whole = record(combined, " + ".join(device_paths) + " (combined: the devices end to end, in this order)",
                       sum(d.size_bytes for d in devices))
    return LiveCapture(per_device, whole, interrupted, lost, read)


def capture_imported(imported: Imported, kind: str, step_s: float, command: str) -> WorkloadCapture:
    start = imported.events[0].t
    end = imported.events[-1].t
    reducer = Reducer(start, step_s if imported.timed else max(end - start, 1.0), imported.with_queue_depth, end=end)
    for ev in imported.events:
        reducer.feed(ev)
    notes = [imported.note, reducer.note()]
    if not imported.with_queue_depth:
        notes.append("no completions in the source: queue depths are not known (empty histograms)")
    if not imported.timed:
        notes.append("no timestamps in the source: one step, duration unknown (0)")
    duration = end - start if imported.timed else 0.0
    source = CaptureSource(kind=kind, device=imported.device, started_at="", duration_s=round(duration, 6),
                           step_s=step_s if imported.timed else 0.0,
                           command=command,
                           note="; ".join(notes))
    return reducer.capture(source)


def device_out(out: Path, device: str) -> Path:
    """The per-device file beside the combined one: app.workload.json, /dev/sdb -> app.sdb.workload.json."""
    name = Path(device).name
    if out.name.endswith(WORKLOAD_SUFFIX):
        return out.with_name(out.name[:-len(WORKLOAD_SUFFIX)] + f".{name}{WORKLOAD_SUFFIX}")
    return out.with_name(f"{out.stem}.{name}{out.suffix}")


def summary(path: Path, result: WorkloadCapture, lost_pct: float) -> str:
    """The line printed for a written file; a lossy capture says so in it."""
    top = ", ".join(f"{s.stream.label} {100 * s.ios / result.ios:.1f} %" for s in result.top(4)) if result.ios else ""
    line = (f"{path}: {result.ios:,} I/Os in {len(result.streams)} IO streams{' (' + top + ')' if top else ''}, "
            f"mean queue depth {result.queue_depth.mean:.2f}")
    if result.lossy:
        line += (f"; INCOMPLETE: {result.lost_events:,} trace events lost ({lost_pct:.1f} %), counts are low, "
                 "queue depths from in-flight samples")
    return line


@click.command()
@click.argument("devices", nargs=-1)
@click.option("--duration", default=None, help=f"How long to capture, e.g. 10m, 1h [default: {DEFAULT_DURATION}].")
@click.option("--step", default=None, help=f"Length of a time step of the workload, e.g. 1m [default: {DEFAULT_STEP}].")
@click.option("--out", required=True, metavar="FILE", help="The workload file to write, e.g. app.workload.json "
              "(several devices: the combined workload; each device's beside it, e.g. app.sdb.workload.json).")
@click.option("--force", is_flag=True, help="Replace --out if it exists.")
@click.option("--allow-loss", is_flag=True, help="Exit 0 even when trace events were lost (the file says so).")
@click.option("--keep-trace", is_flag=True, help="Also keep every read and write (time, direction, offset, size, "
              "issuing pid) beside the workload file, e.g. app.trace.gz, for an exact replay (rwsw replay_trace).")
@click.option("--from-blktrace", "blktrace_dir", default=None, metavar="DIR",
              help="Import blktrace files (or blkparse's text output) taken elsewhere instead of capturing.")
@click.option("--from-iolog", "iolog", default=None, metavar="FILE",
              help="Import fio's iolog (fio --write_iolog=FILE, version 2 or 3) instead of capturing.")
@click.option("--quiet", "-q", is_flag=True, help="No progress line.")
def capture(devices, duration, step, out, force, allow_loss, keep_trace, blktrace_dir, iolog, quiet):
    """Record the block-layer I/O of DEVICES and reduce it to a workload file: IO streams (size, read/write,
    random/sequential) with counts and bytes, queue depths, per time step and overall. Several devices (a
    database's data and log drives) give one file each and a combined one.

    Read-only: nothing is written to DEVICES, so a mounted production device is fine. Needs root (tracefs).
    Ctrl-C stops early: what was captured is written (the file's note says so) and the exit code is 130.
    Trace events lost (a device too fast for the reader): the files are written and say so, the last line
    says so, and the exit code is 1 unless --allow-loss.

    \b
    Examples:
      ssdpts capture /dev/nvme0n1 --duration 10m --step 1m --out app.workload.json
      ssdpts capture /dev/nvme0n1 /dev/nvme1n1 --duration 10m --out db.workload.json
      ssdpts capture --from-iolog job.iolog --out job.workload.json
      ssdpts capture --from-blktrace ./traces --step 10s --out app.workload.json
    """
    sources = [*devices, *(s for s in (blktrace_dir, iolog) if s is not None)]
    if not sources or (len(sources) > len(devices) and len(sources) > 1):
        raise SsdptsError("give one source: DEVICES to capture, or one of --from-blktrace DIR and --from-iolog FILE "
                          f"({'none' if not sources else ', '.join(sources)} given)")
    if len(set(devices)) != len(devices):
        raise SsdptsError(f"a device is named twice ({', '.join(devices)}); give each device once")
    if devices:
        require_root("capture")
    path = check_out(out, force)
    outs = [check_out(str(device_out(path, d)), force) for d in devices] if len(devices) > 1 else []
    if keep_trace and not devices:
        raise SsdptsError("--keep-trace keeps a live capture's I/Os; an imported trace is its own record: "
                          "drop --keep-trace, or capture DEVICES")
    traces = [check_out(str(trace_path(o)), force) for o in (outs or [path])] if keep_trace else None
    total, step_s = durations(duration, step, live=bool(devices))
    # how it was taken, from the options as parsed (defaults filled in)
    source_args = list(devices) or (["--from-blktrace", blktrace_dir] if blktrace_dir else ["--from-iolog", iolog])
    command = shlex.join(["ssdpts", "capture", *source_args,
                          *(["--duration", duration or DEFAULT_DURATION] if devices else []),
                          *(["--keep-trace"] if keep_trace else []),
                          "--step", step or DEFAULT_STEP, "--out", out])
    lost_pct, interrupted = 0.0, False
    if devices:
        live = capture_live(list(devices), total, step_s, quiet, command, traces)
        written = list(zip(outs, live.per_device)) + [(path, live.combined or live.per_device[0])]
        interrupted, lost_pct = live.interrupted, live.lost_pct
    elif blktrace_dir is not None:
        written = [(path, capture_imported(read_blktrace(blktrace_dir), "blktrace", step_s, command))]
    else:
        written = [(path, capture_imported(read_iolog(iolog), "fio-iolog", step_s, command))]
    for file, result in written:
        write_atomically(file, result)
    for file, result in written:
        click.echo(summary(file, result, lost_pct), err=True)
    if interrupted:
        click.echo("ssdpts: interrupted; what was captured is in the file", err=True)
        sys.exit(INTERRUPTED)
    if written[-1][1].lossy and not allow_loss:
        click.echo(f"ssdpts: error: {written[-1][1].lost_events:,} trace events were lost ({lost_pct:.1f} %): the "
                   "workload file is incomplete; capture a shorter busy period or a quieter machine, or add "
                   "--allow-loss to accept it", err=True)
        sys.exit(LOSSY)
