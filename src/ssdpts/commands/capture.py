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
from datetime import datetime, timezone
from pathlib import Path

import click

from .. import interrupts
from ..capture.imports import Imported, read_blktrace, read_iolog
from ..capture.model import CaptureSource, WorkloadCapture
from ..capture.reduce import Reducer
from ..capture.tracefs import REORDER_S, TraceSession, block_device
from ..errors import SsdptsError
from ..inputs import output_file
from ..units import format_duration, parse_duration

DEFAULT_DURATION, DEFAULT_STEP = "10m", "1m"
MAX_STEPS = 10_000
POLL_S = 0.2
PRINT_EVERY_S = 60.0        # a progress line at most this often without a terminal
INTERRUPTED = 130


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


def capture_live(device_path: str, total: float, step_s: float, quiet: bool,
                 command: str) -> tuple[WorkloadCapture, bool]:
    """Capture `device_path` for `total` seconds; (the capture, whether it was interrupted)."""
    device = block_device(device_path)
    started_at = _now_iso()
    progress = _ProgressLine(quiet)
    interrupted = False
    with TraceSession(device) as session:
        reducer = Reducer(session.start, step_s)
        try:
            while (elapsed := time.monotonic() - session.start) < total:
                for ev in session.events(before=time.monotonic() - REORDER_S):
                    reducer.feed(ev)
                progress.show(f"capturing {device_path}: {format_duration(elapsed)} of {format_duration(total)}, "
                              f"{format_duration(total - elapsed)} left, {reducer.ios:,} I/Os", elapsed)
                time.sleep(min(POLL_S, max(total - elapsed, 0.0)))
        except KeyboardInterrupt:
            interrupts.acknowledge()
            interrupted = True
        ended = min(time.monotonic(), session.start + total)
        session.stop()
        for ev in session.events(before=ended):      # what is still held, up to the end of the capture
            reducer.feed(ev)
        progress.done()
        lost = session.lost
    elapsed = ended - session.start
    notes = [reducer.note()]
    if interrupted:
        notes.append(f"stopped early ({interrupts.reason()}) after {format_duration(elapsed)} of "
                     f"{format_duration(total)}: the file holds what was captured until then")
    if lost:
        notes.append(f"{lost:,} trace events were lost (the tracefs buffer overflowed): counts are low and "
                     "queue depths too high (missed completions stay in flight)")
    source = CaptureSource(kind="tracefs", device=device_path, started_at=started_at, duration_s=round(elapsed, 3),
                           step_s=step_s, command=command, note="; ".join(notes))
    return reducer.capture(source, device.size_bytes), interrupted


def capture_imported(imported: Imported, kind: str, step_s: float, command: str) -> WorkloadCapture:
    start = imported.events[0].t
    end = imported.events[-1].t
    reducer = Reducer(start, step_s if imported.timed else max(end - start, 1.0), imported.with_queue_depth)
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


@click.command()
@click.argument("device", required=False)
@click.option("--duration", default=None, help=f"How long to capture, e.g. 10m, 1h [default: {DEFAULT_DURATION}].")
@click.option("--step", default=None, help=f"Length of a time step of the workload, e.g. 1m [default: {DEFAULT_STEP}].")
@click.option("--out", required=True, metavar="FILE", help="The workload file to write, e.g. app.workload.json.")
@click.option("--force", is_flag=True, help="Replace --out if it exists.")
@click.option("--from-blktrace", "blktrace_dir", default=None, metavar="DIR",
              help="Import blktrace files (or blkparse's text output) taken elsewhere instead of capturing.")
@click.option("--from-iolog", "iolog", default=None, metavar="FILE",
              help="Import fio's iolog (fio --write_iolog=FILE, version 2 or 3) instead of capturing.")
@click.option("--quiet", "-q", is_flag=True, help="No progress line.")
def capture(device, duration, step, out, force, blktrace_dir, iolog, quiet):
    """Record DEVICE's block-layer I/O and reduce it to a workload file: IO streams (size, read/write,
    random/sequential) with counts and bytes, queue depths, per time step and overall.

    Read-only: nothing is written to DEVICE, so a mounted production device is fine. Needs root (tracefs).
    Ctrl-C stops early: what was captured is written (the file's note says so) and the exit code is 130.

    \b
    Examples:
      ssdpts capture /dev/nvme0n1 --duration 10m --step 1m --out app.workload.json
      ssdpts capture --from-iolog job.iolog --out job.workload.json
      ssdpts capture --from-blktrace ./traces --step 10s --out app.workload.json
    """
    sources = [s for s in (device, blktrace_dir, iolog) if s is not None]
    if len(sources) != 1:
        raise SsdptsError("give one source: a DEVICE to capture, --from-blktrace DIR or --from-iolog FILE "
                          f"({'none' if not sources else ', '.join(sources)} given)")
    path = check_out(out, force)
    total, step_s = durations(duration, step, live=device is not None)
    # how it was taken, from the options as parsed (defaults filled in)
    source_args = [device] if device else ["--from-blktrace", blktrace_dir] if blktrace_dir else ["--from-iolog", iolog]
    command = shlex.join(["ssdpts", "capture", *source_args,
                          *(["--duration", duration or DEFAULT_DURATION] if device else []),
                          "--step", step or DEFAULT_STEP, "--out", out])
    if device is not None:
        result, interrupted = capture_live(device, total, step_s, quiet, command)
    elif blktrace_dir is not None:
        result, interrupted = capture_imported(read_blktrace(blktrace_dir), "blktrace", step_s, command), False
    else:
        result, interrupted = capture_imported(read_iolog(iolog), "fio-iolog", step_s, command), False
    write_atomically(path, result)
    top = ", ".join(f"{s.stream.label} {100 * s.ios / result.ios:.1f} %" for s in result.top(4)) if result.ios else ""
    click.echo(f"{path}: {result.ios:,} I/Os in {len(result.streams)} IO streams"
               f"{' (' + top + ')' if top else ''}, mean queue depth {result.queue_depth.mean:.2f}", err=True)
    if interrupted:
        click.echo("ssdpts: interrupted; what was captured is in the file", err=True)
        sys.exit(INTERRUPTED)
