"""`ssdpts show` and `export --format text`: a run's results as text, each test's part written by the test's own
`text` renderer."""

from __future__ import annotations

import time
from pathlib import Path

from ..clock import Clock
from ..conformance import Verdict
from ..findings import recorded_checks
from ..results import SteadyResult
from ..pts.resume import resume_lines
from ..targets.record import PurgeRecord
from ..workload.ioengine import recorded_text
from ..runresult.coverage import coverage_lines
from ..runresult.model import RunResult, TestResult
from ..runresult.simulated import simulated_review
from .exporter import out_file


def _device_idle_lines(t: TestResult) -> list[str]:
    resumed = ["  " + line for line in resume_lines(t.steps)]
    idle = ["  " + t.device_idle.text()] if t.device_idle is not None and t.rounds else []
    stimulus = t.stimulus.lines() if t.stimulus is not None and t.rounds else []
    return idle + resumed + stimulus + coverage_lines(t.coverage)


def _test_lines(t: TestResult, clock: Clock) -> list[str]:
    lines = ["", f"{t.title} [{t.status}]"]
    if t.summary is None:
        done = [r for r in t.rounds if r.kind == "round"]
        lines.append(f"  {len(done)} rounds stored so far" if t.spec else
                     "  stored by a test this ssdpts does not know; 'show --json' has the raw data")
        return lines + _device_idle_lines(t)
    purge = getattr(t.summary, "purge", None)
    if isinstance(purge, PurgeRecord):
        lines.append(f"  purge: {purge.method}{'' if purge.snia_purge else ' (not a SNIA purge)'}")
    steady = getattr(t.summary, "steady", None)
    if isinstance(steady, SteadyResult):
        lines += steady.text_lines()
    lines += _device_idle_lines(t)
    for n in getattr(t.summary, "notes", None) or []:
        lines.append(f"  note: {n}")
    if t.spec.text is not None:
        lines += t.spec.text(t.summary, clock)
    return lines


def render_text(run: RunResult, verdict: Verdict) -> str:
    lines = [f"run {run.id}" + (f" “{run.options.label}”" if run.options.label else "") + f" — {run.status}"
             + (f": {run.message}" if run.message else ""),
             f"  target  {run.target_spec} ({run.target.model or run.target.kind}, "
             f"{run.target.size_bytes / 2**30:.2f} GiB)",
             f"  profile {run.profile_name}   engine {run.engine}   host {run.host.hostname} "
             f"({run.host.fio_version})",
             f"  bench   {recorded_checks(run.host)}",
             f"  io      {recorded_text(run.options.io_engine)}",
             f"  started {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(run.created))}"]
    if run.clock.simulated:
        lines.append(f"  clock   {run.clock.note}")
    if (review := simulated_review(run.target)) is not None:
        lines += review.lines()
    lines += [f"  note    {n}" for n in run.options.notes] + [""]
    lines += verdict.lines()
    for t in run.tests:
        lines += _test_lines(t, run.clock)
    return "\n".join(lines)


class TextSummary:
    """`--format text`: what `ssdpts show` prints, RUN_ID.txt."""

    def write(self, run: RunResult, verdict: Verdict, out_dir: Path) -> list[Path]:
        path = out_file(out_dir, f"{run.id}.txt")
        path.write_text(render_text(run, verdict) + "\n")
        return [path]
