"""A run's life: start (checks, then the run record), resume, and execute: the tests in order, stopped and
resumed at any point (completed tests are skipped, a test continues from its last stored round), its end
(completed, partial, drive-failed, interrupted, failed)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from .. import interrupts
from ..conformance import check
from ..doctor import Bench, gate
from ..engines import engine_for
from ..engines.drivefault import DriveFailed
from ..engines.fio_versions import check_options
from ..engines.interface import Engine
from ..engines.tracecoverage import check_traceable
from ..errors import SsdptsError
from ..hostinfo import platform_record
from ..owner import RunOwner
from ..profiles import load_profile, profile_tests
from ..progress import PlanBounds, Progress
from ..pts import registry, resume as resumes
from ..pts.cells import choose_seed
from ..pts.plan import planned_workloads
from ..runoptions import RunOptions
from ..runresult.model import load_run
from ..runstatus import keep_unrecorded, mark_running_tests, record_stop, settled
from ..settings import RunSettings
from ..store import Store
from ..store.medium import ResultsMediumError, SpaceReserve, os_medium_error
from ..targets import Target
from ..targets.purge import METHODS, check_method as check_purge_method
from ..targets.resolve import prepare_file, reopen_specs
from ..targets.safety import check_room
from ..targets.sim import simulated
from ..targets.writecache import applied as write_cache_applied
from .checks import (check_capabilities, check_safe, check_settings, checked_label, checked_notes, open_targets,
                     plans_for, same_drives, same_io_engine, write_cache_check, writes)
from .failures import DriveFailedRun, drive_failed, end_drive_failed, open_failures, record_failures, retry_failed
from .files import discard_if_empty, log_path, refuse_if_live, reserve_path, run_files_dir
from .lock import exclusive
from .log import setup_log
from .outcome import stall_note, verdict_line, write_run_report
from .testrun import run_test

if TYPE_CHECKING:      # built by the command that was asked to serve them (commands/common.py)
    from ..livemetrics import LiveMetrics

log = logging.getLogger("ssdpts")


def start(target_spec: str | list[str], *, results_dir: Path, profile_name: str | dict, tests: list[str] | None,
          size: int | None, destroy_data: bool, purge_method: str, quiet: bool, seed: int | None = None,
          set_write_cache: bool = False, ignore_doctor: frozenset[str] = frozenset(), notes: tuple[str, ...] = (),
          trace_stimulus: bool = False, label: str | None = None, live: LiveMetrics | None = None) -> str:
    # a name or path, else a profile a command merged from its options (profiles.with_test_keys)
    profile = load_profile(profile_name) if isinstance(profile_name, str) else profile_name
    tests = tests or profile_tests(profile)
    specs = [registry.get(t) for t in registry.checked_names(tests, "the tests")]
    settings = registry.settings_for(profile, tests)      # typed once, here, and handed down
    seed_record = choose_seed(settings.defaults.seed, seed)
    settings = settings.with_seed(seed_record.value)
    if purge_method not in METHODS:
        raise SsdptsError(f"unknown --purge {purge_method!r}; allowed: {', '.join(METHODS)}")
    specs_ = [target_spec] if isinstance(target_spec, str) else list(target_spec)
    target = open_targets(specs_, size)
    check_purge_method(target, purge_method)
    check_settings(settings, target)
    plans = plans_for(target, settings, tests, purge_method)
    check_safe(target, destroy_data or not writes(plans, specs), results_dir)
    cells = planned_workloads(plans)   # built once for both checks
    check_room(target, cells)
    # checks fio before anything is written and chooses its I/O engine once (refused where the bench lacks it)
    engine = engine_for(target, settings.defaults.io_request())
    check_capabilities(specs, target, engine)
    check_options(engine.version, cells)
    if trace_stimulus:
        check_traceable(target)
    target_spec = " ".join(specs_)
    bench = gate(Bench(target=target, write_cache_required=settings.defaults.write_cache,
                       set_write_cache=set_write_cache), ignore_doctor, target_spec)   # ssdpts doctor, refuses on fail
    cache = write_cache_check(settings.defaults, target)
    store = Store.in_dir(results_dir)
    run_id = store.create_run(
        target_spec=target_spec, target=target.to_dict(),
        host=platform_record(target, engine.version).with_checks([f.to_dict() for f in bench]),
        profile_name=settings.name, profile=settings.profile, tests=tests,
        options=RunOptions(destroy_data=destroy_data, purge=purge_method, size=size, results_dir=str(results_dir),
                           write_cache=cache, seed=seed_record, set_write_cache=set_write_cache,
                           notes=list(checked_notes(notes)), trace_stimulus=trace_stimulus, io_engine=engine.io,
                           label=checked_label(label)),
        engine=engine.name)
    execute(store, run_id, target, engine, settings, results_dir, quiet, live=live)
    return run_id


def resume(run_id: str, *, results_dir: Path, quiet: bool, live: LiveMetrics | None = None) -> str:
    store = Store.in_dir(results_dir)
    run = settled(store, run_id)
    refuse_if_live(run, f"'ssdpts resume {run['id']}' if it stopped")
    if run["status"] == "completed":
        raise SsdptsError(f"run {run['id']} is already complete; 'ssdpts show {run['id']}' shows its results")
    # a partial run keeps its completed tests; execute() retries the failed targets
    opts = run["options"]
    target = open_targets(reopen_specs(run["target"]), opts.size)
    if target.kind in ("block", "file", "set") and target.size_bytes != run["target"].size_bytes:
        raise SsdptsError(f"{target.path} is now {target.size_bytes} bytes, was {run['target'].size_bytes}; "
                          "this is not the same target, start a new run")
    same_drives(run["target"], target)
    check_purge_method(target, opts.purge)
    settings = registry.settings_for(run["profile"], run["tests"])    # decoded once from the stored run
    plans = plans_for(target, settings, run["tests"], opts.purge)
    check_safe(target, target.kind == "file" or opts.destroy_data
               or not writes(plans, [registry.get(t) for t in run["tests"]]), results_dir)
    engine = engine_for(target, settings.defaults.io_request())
    same_io_engine(run, engine.io)    # the bench may have changed since the run began
    engine.io = opts.io_engine or engine.io     # its rounds go on as the run recorded (runs before it: as chosen now)
    check_capabilities([registry.get(t) for t in run["tests"]], target, engine)
    check_options(engine.version, planned_workloads(plans))
    if opts.trace_stimulus:
        check_traceable(target)
    resumes.resuming(store, run["id"], target)      # the device's counters before any I/O of ours
    store.set_run_status(run["id"], "running", owner=RunOwner.current())
    execute(store, run["id"], target, engine, settings, results_dir, quiet, retry=True, live=live)
    return run["id"]


def _stopped_by_medium(store: Store, run_id: str, error: ResultsMediumError, reserve: SpaceReserve) -> None:
    """The results medium failed a write: the run is interrupted (resumable) and the command ends in one line."""
    reserve.release()          # the room to record why
    reason = f"{error.problem}; {error.fix}, then 'ssdpts resume {run_id}'"
    recorded = record_stop(store, run_id, "interrupted", reason)
    if not recorded:           # read-only: the next command that settles the run records this reason there
        keep_unrecorded(store, run_id, reason)
    raise SsdptsError(f"run {run_id} interrupted: {reason}" + ("" if recorded else
                      " (the status could not be written there either: 'ssdpts list' shows the run interrupted "
                      "once this process has ended)"), exit_code=error.exit_code) from None


def execute(store: Store, run_id: str, target: Target, engine: Engine, settings: RunSettings, results_dir: Path,
            quiet: bool, retry: bool = False, live: LiveMetrics | None = None) -> None:
    run = store.run(run_id)
    progress = Progress(quiet=quiet, simulated=simulated(target), live=live)
    engine.keep_dir = run_files_dir(Path(results_dir), run_id)
    if run["options"].trace_stimulus:      # refused up front on engines without it (check_traceable)
        engine.trace_stimulus = True
    handler, discarded = None, False
    reserve = SpaceReserve(reserve_path(results_dir, run_id))
    try:
        handler = setup_log(Path(results_dir), run_id)
        reserve.hold()
        for member in target.drives():
            if member.kind == "file" and member.host is None:
                prepare_file(member)
        target.attach_state(Path(results_dir), run_id, store.checkpoint(run_id))   # stateful targets only
        dropped = store.rollback_to_checkpoint(run_id)      # nothing unless a checkpoint was committed
        if dropped:
            progress.message(f"resume: {dropped} round(s) committed after the simulated drive's last "
                             "checkpoint are run again on the checkpointed state")
        cache_required = settings.defaults.write_cache
        with exclusive(target), write_cache_applied(store, run_id, target, cache_required,
                                                    run["options"].set_write_cache):
            progress.run_started(run_id, target.label, run["profile_name"], run["tests"], str(store.path))
            note = run["options"].write_cache.note if run["options"].write_cache is not None else ""
            if note:
                progress.message(f"note: {note}")
            purge_method = run["options"].purge
            progress.planned(run["tests"], [PlanBounds.of(p) for p in plans_for(target, settings, run["tests"],
                                                                                 purge_method)])
            for index, name in enumerate(run["tests"], start=1):
                if store.test_status(run_id, name) == "completed":
                    progress.message(f"test {index}/{len(run['tests'])} {name}: already complete, skipped")
                    continue
                spec = registry.get(name)
                store.set_test(run_id, name, "running")
                progress.test_started(name, spec.title, index, len(run["tests"]), resumes.work_done(store, run_id, name))
                try:
                    summary = run_test(store, run_id, name, target, engine, settings, progress, purge_method)
                except DriveFailed as e:
                    # the failed drives' evidence is the test's result; the others (a parallel run) go on
                    target, engine, summary = drive_failed(store, run_id, name, e, target, settings, progress,
                                                            purge_method)
                    if target is None:
                        break
                    continue
                record_failures(store, run_id, name, engine)
                store.set_test(run_id, name, "completed", summary)
                progress.message(verdict_line(store, run_id, name))
            if retry and target is not None:
                retry_failed(store, run_id, target, settings, progress, run)
        if store.drive_failures(run_id):
            end_drive_failed(store, run_id, progress)
        failed = engine.failed
        if failed or open_failures(store, run_id):
            what = "; ".join(f"{k} ({v})" for k, v in failed.items()) or "see 'ssdpts show'"
            store.set_run_status(run_id, "partial", f"targets failed: {what}; 'ssdpts resume {run_id}' retries them")
            progress.run_ended("partial")
            write_run_report(store, run_id, progress)
            progress.message(f"run {run_id} finished with failed targets: {what}; retry with 'ssdpts resume {run_id}'")
            return
        store.set_run_status(run_id, "completed")
        progress.run_ended("completed")
        write_run_report(store, run_id, progress)
        verdict = check(load_run(store, run_id), store)
        progress.message(f"{verdict.lines()[0]}" + ("" if verdict.conformant else f"; 'ssdpts check {run_id}' "
                                                     "lists them"))
        progress.message(f"run {run_id} complete{stall_note(verdict, Path(results_dir), run_id)}: "
                         f"'ssdpts show {run_id}' for the results")
    except KeyboardInterrupt:
        interrupts.acknowledge()
        lost = progress.stop_cost()
        try:
            resumes.record_stop(store, run_id, engine, target, lost)
        except SsdptsError as e:      # the results medium: the resume then reads the last stored round's end
            log.error("run %s: stop not recorded: %s", run_id, e)
        record_stop(store, run_id, "interrupted", interrupts.reason())
        progress.run_ended("interrupted")
        # no checkpoint here: the drive may be inside an uncommitted round; resume restores the committed one
        progress.close()
        cost = f" (the stop lost {lost}: the resume runs it again)" if lost else ""
        raise SsdptsError(f"run {run_id} interrupted{cost}; continue it with 'ssdpts resume {run_id}'", exit_code=130)
    except DriveFailedRun:
        raise
    except ResultsMediumError as e:
        _stopped_by_medium(store, run_id, e, reserve)
    except SsdptsError as e:
        discarded = discard_if_empty(store, run_id, retry)
        if discarded:
            raise SsdptsError(f"{e} (no run was kept: it had stored nothing)", exit_code=e.exit_code) from None
        store.set_run_status(run_id, "failed", str(e))
        progress.run_ended("failed")
        mark_running_tests(store, run_id, "failed")
        raise SsdptsError(f"{e} (run {run_id} stopped; fix the cause and 'ssdpts resume {run_id}')",
                          exit_code=e.exit_code) from None
    except Exception as e:
        medium = os_medium_error(Path(results_dir), e)    # a log or checkpoint write under the results
        if medium is not None:
            _stopped_by_medium(store, run_id, medium, reserve)
        log.exception("run %s failed", run_id)
        discarded = discard_if_empty(store, run_id, retry)
        if not discarded:
            record_stop(store, run_id, "failed", f"{type(e).__name__}: {e}")
            progress.run_ended("failed")
        raise
    finally:
        reserve.release()
        progress.close()
        if handler is not None:
            log.removeHandler(handler)
            handler.close()
        if discarded:
            log_path(results_dir, run_id).unlink(missing_ok=True)
