"""Failures during a run: a drive that failed I/O (the test goes on with the healthy drives of a parallel run),
remote targets that dropped out (retried on resume)."""

from __future__ import annotations

from pathlib import Path

from ..engines import engine_for
from ..engines.drivefault import DriveFailed, vanished
from ..engines.interface import Engine
from ..errors import SsdptsError
from ..progress import Progress
from ..pts import registry
from ..pts.context import TestContext
from ..settings import RunSettings
from ..store import Store
from ..targets import Target
from ..targets.multi import TargetSet
from .files import run_files_dir
from .outcome import write_run_report
from .testrun import run_test


def record_failures(store: Store, run_id: str, test: str, engine: Engine) -> None:
    """Targets that dropped out during `test` (remote hosts), so a resume can retry them."""
    failed = dict(engine.failed)
    if failed:
        store.record_step(run_id, test, "failed-targets", "failure", {"targets": failed, "retried": False})


def open_failures(store: Store, run_id: str) -> dict[str, dict]:
    out = {}
    for t in store.tests(run_id):
        step = store.step(run_id, t["name"], "failed-targets")
        if step and not step.get("retried"):
            out[t["name"]] = step
    return out


def retry_failed(store: Store, run_id: str, target: Target, settings: RunSettings, progress: Progress, run: dict) -> None:
    """Resume of a partial run: run each affected test again, on its failed targets only."""
    failures = open_failures(store, run_id)
    members = target.drives()
    for test, step in failures.items():
        labels = set(step["targets"])
        retry = [m for m in members if m.label_id in labels]
        if not retry:
            continue
        sub = retry[0] if len(retry) == 1 else TargetSet.of(retry)
        engine = _engine_on(sub, store, run_id, settings)
        n = 1 + sum(1 for s in store.steps(run_id, test) if s["key"].startswith("retry"))
        scope = f"retry{n}/"
        progress.message(f"{test}: retrying on {', '.join(sorted(labels))}")
        ctx = TestContext(run_id=run_id, test=test, store=store, target=sub, engine=engine,
                          settings=settings.of(test), progress=progress,
                          purge_method=run["options"].purge, scope=scope,
                          decode_summary=registry.decode_stored)
        spec = registry.get(test)
        summary = spec.encode(spec.run(ctx))
        still = dict(engine.failed)
        store.record_step(run_id, test, f"retry{n}", "retry", {"targets": sorted(labels), "summary": summary,
                                                                 "failed": still})
        step["retried"] = True
        store.record_step(run_id, test, "failed-targets", "failure", step)
        if still:
            store.record_step(run_id, test, "failed-targets", "failure", {"targets": still, "retried": False})


def drive_failed(store: Store, run_id: str, name: str, failed: DriveFailed, target: Target, settings: RunSettings,
                  progress: Progress, purge_method: str) -> tuple[Target | None, Engine | None, dict]:
    """Record the failed drives' evidence; with healthy drives left (a parallel run), run the test again on
    them alone (its phases under `healthy/`: the rounds stored until the failure hold every drive) and go
    on with them. (target left or None, its engine, the test's summary)."""
    for f in failed.failures:
        f.test = name
        store.record_drive_failure(run_id, f)
        progress.message(f"{f.line()}; evidence kept in 'ssdpts show {run_id}'")
    gone = {f.drive for f in failed.failures}
    healthy = [m for m in target.drives() if m.label_id not in gone]
    for m in [m for m in healthy if m.kind == "block" and m.host is None]:
        # pulled out while the round ended for another drive's failure: fio saw no error on it, it is gone
        gone = vanished(m.label_id, m.path, failed.failures[0].cell)
        if gone is None:
            continue
        gone.test = name
        store.record_drive_failure(run_id, gone)
        progress.message(f"{gone.line()}; evidence kept in 'ssdpts show {run_id}'")
        healthy.remove(m)
    if len(healthy) == len(target.drives()) or not healthy or target.kind != "set":
        store.set_test(run_id, name, "drive-failed")
        return None, None, {}
    rest = healthy[0] if len(healthy) == 1 else TargetSet.of(healthy)
    engine = _engine_on(rest, store, run_id, settings)
    progress.message(f"{name}: running again on {', '.join(m.label_id for m in healthy)} alone")
    try:
        summary = run_test(store, run_id, name, rest, engine, settings, progress, purge_method, scope="healthy/")
    except DriveFailed as again:
        return drive_failed(store, run_id, name, again, rest, settings, progress, purge_method)
    store.set_test(run_id, name, "drive-failed", summary)
    return rest, engine, summary


def _engine_on(drives: Target, store: Store, run_id: str, settings: RunSettings) -> Engine:
    """An engine for some of the run's drives, with the run's recorded I/O engine (not chosen again for fewer
    drives; a run from before the record: chosen from the profile) and its files kept with the run's."""
    engine = engine_for(drives, settings.defaults.io_request(), recorded=store.run(run_id)["options"].io_engine)
    engine.keep_dir = run_files_dir(Path(store.path).parent, run_id)
    return engine


def end_drive_failed(store: Store, run_id: str, progress: Progress) -> None:
    """A drive failed: the run ends as `drive-failed`, its report written, exit 1 with the failure's line."""
    lines = [f.line() for f in store.drive_failures(run_id)]
    store.set_run_status(run_id, "drive-failed", "; ".join(lines))
    write_run_report(store, run_id, progress)
    raise DriveFailedRun(f"{'; '.join(lines)} (run {run_id}: completed rounds kept; 'ssdpts show {run_id}' has "
                         "the evidence, 'ssdpts check' exits 1)")


class DriveFailedRun(SsdptsError):
    """The run ended because a drive failed: its verdict, already stored; the CLI exits 1."""

    exit_code = 1
