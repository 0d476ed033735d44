"""What a run says as a test or the run ends: the test's verdict line, the stalls, the report."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from ..conformance import check
from ..progress import Progress
from ..runresult.model import load_run
from ..store import Store
from .files import run_files_dir

log = logging.getLogger("ssdpts")


def verdict_line(store: Store, run_id: str, test: str) -> str:
    """The console's last word on a completed test (the same rules as 'ssdpts check')."""
    run = load_run(store, run_id)
    return check(run, store).test_line(next(t for t in run.tests if t.name == test))


def stall_note(verdict, results_dir: Path, run_id: str) -> str:
    """For the run's last line: rounds whose fio stalled and were run again. The run still completes (exit 0),
    so without this only `check` would show them."""
    stalls = [f for f in verdict.findings if f.deviation.rule == "fio-stall"]
    if not stalls:
        return ""
    evidence = sorted(str(d) for d in run_files_dir(results_dir, run_id).glob("fio-stall-*"))
    return (f", but fio stalled {len(stalls)} time(s) and each stalled round was killed and run again "
            f"(evidence: {', '.join(evidence) or run_files_dir(results_dir, run_id)})")


def write_run_report(store: Store, run_id: str, progress: Progress) -> None:
    if os.environ.get("SSDPTS_REPORT") == "0":   # e.g. a slow emulated guest: the report is written elsewhere
        progress.message(f"report skipped (SSDPTS_REPORT=0); write it with 'ssdpts report {run_id}'")
        return
    # here, and only when a report is written: plan and info use the runner and draw nothing, and importing the
    # renderers (matplotlib, jinja2) took 3 s of a run in the TCG guest that writes its report elsewhere
    from ..report.html import write_report
    try:
        progress.message(f"report: {write_report(store, run_id)}")
    except Exception as e:  # a report problem must never fail a finished run
        log.warning("report not written: %s", e)
        progress.message(f"report not written ({e}); retry with 'ssdpts report {run_id}'")
