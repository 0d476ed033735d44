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
from ..runresult.coverage import CellCoverage
from ..runresult.model import RunResult, TestResult
from ..runresult.stimulus import StimulusSummary
from ..runresult.simulated import simulated_review
from .exporter import out_file

SHOWN_MISMATCHES = 5    # `show` flags this many mismatching cells, then counts the rest


def stimulus_lines(s: StimulusSummary) -> list[str]:
    """One line per test on the stimulus at the device, then a flag per mismatching cell (the first few)."""
    measured = s.measured
    if not measured:
        return [f"  stimulus at the device: {s.why_unmeasured()}"]
    sources = ", ".join(dict.fromkeys(c.stimulus.source for c in measured))
    bad = s.mismatched
    head = (f"  stimulus at the device ({sources}): {len(measured)} of {len(s.cells) + s.unrecorded} cells "
            f"measured, " + (f"{len(bad)} NOT as asked" if bad else "all as asked"))
    flags = [f"    MISMATCH {c.where}: " + "; ".join(m.evidence for m in c.mismatches) for c in bad[:SHOWN_MISMATCHES]]
    if len(bad) > SHOWN_MISMATCHES:
        flags.append(f"    ... and {len(bad) - SHOWN_MISMATCHES} more cells ('show --json' lists them)")
    return [head] + flags


def coverage_lines(cells: list[CellCoverage]) -> list[str]:
    """How much of the range the cells touched, the least covered one, and any that fell short."""
    if not cells:
        return []
    least = min(cells, key=lambda c: c.ratio)
    short = [c for c in cells if c.short]
    expected = f"; expected {least.expected_pct:.1f} %" if least.expected_pct is not None else ""
    out = [f"  coverage ({cells[0].coverage.source}): {len(cells)} cells, {len(short)} short; least covered for its "
           f"I/O {least.where()}: {least.coverage.line()}{expected}"]
    out += [f"  coverage short: {c.where()}: {c.coverage.line()}; expected {c.expected_pct:.1f} %" for c in short[:5]]
    return out


def _device_idle_lines(t: TestResult) -> list[str]:
    resumed = ["  " + line for line in resume_lines(t.steps)]
    idle = ["  " + t.device_idle.text()] if t.device_idle is not None and t.rounds else []
    stimulus = stimulus_lines(t.stimulus) if t.stimulus is not None and t.rounds else []
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
