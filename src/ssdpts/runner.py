"""A run: open the target safely, record the platform, run each test, keep everything in the store.

Resumable at any point: completed tests are skipped, a test continues from its last stored round.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
from contextlib import ExitStack, contextmanager
from pathlib import Path

from . import interrupts, sampling
from .capabilities import missing
from .conformance import check
from .engines import engine_for, io_choice
from .engines.interface import Engine
from .engines.tracecoverage import check_traceable
from .engines.drivefault import DriveFailed, vanished
from .engines.fio_versions import check_options
from .errors import SsdptsError
from .deviations import Deviation
from .doctor import Bench, gate, required_write_cache
from .health import snapshot
from .health.record import RECORD_KIND, HealthSnapshot
from .hostinfo import platform_record
from .inputs import one_line
from .runoptions import RunOptions, WriteCacheCheck
from .settings import RunDefaults
from .owner import RunOwner
from .profiles import load_profile, profile_tests
from .runresult.model import load_run
from .progress import Progress, PlanBounds
from .pts import registry, resume as resumes
from .pts.common import TestContext, choose_seed
from .pts.plan import TestPlan, planned_workloads, plans_write
from .pts.spec import TestSpec
from .settings import run_defaults
from .workload.ioengine import IoChoice
from .runstatus import mark_running_tests, record_stop, settled
from .store import Store
from .store.medium import ResultsMediumError, SpaceReserve, os_medium_error
from .targets import Target, open_target
from .targets.hold import held, locked
from .targets.multi import TargetSet
from .targets.purge import METHODS, check_method as check_purge_method
from .targets.record import TargetRecord
from .targets.resolve import prepare_file, reopen_specs
from .targets.safety import check_room, check_target
from .targets.sim import SimTarget, number_simulated, simulated, state_files
from .targets.writecache import applied as write_cache_applied

log = logging.getLogger("ssdpts")


def run_files_dir(results_dir: Path, run_id: str) -> Path:
    """Beside the run's log: files an engine keeps for the run (a failed or stalled fio's job file, stderr
    and evidence)."""
    return Path(results_dir) / "logs" / run_id


def _log_path(results_dir: Path, run_id: str) -> Path:
    return Path(results_dir) / "logs" / f"{run_id}.log"


def _reserve_path(results_dir: Path, run_id: str) -> Path:
    return Path(results_dir) / "logs" / f"{run_id}.reserve"


class _RunLog(logging.FileHandler):
    """The run's log file. A write its file system refuses (full, read-only) is dropped without Python's
    traceback on the console: the run stops at its next database write, with the reason in one line."""

    def handleError(self, record):
        if not isinstance(sys.exc_info()[1], OSError):
            super().handleError(record)

    def close(self):
        try:
            super().close()
        except OSError:
            pass


def _setup_log(results_dir: Path, run_id: str) -> logging.Handler:
    (results_dir / "logs").mkdir(parents=True, exist_ok=True)
    handler = _RunLog(_log_path(results_dir, run_id))
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    return handler


@contextmanager
def exclusive(target: Target):
    """Hold the target exclusively for the run: nobody can mount it, and no second ssdpts can test it."""
    with ExitStack() as stack:
        for m in target.drives():
            if m.host is None and m.kind == "block":
                stack.enter_context(held(m.path))     # targets.hold: a file-system study lets go of it for mkfs/mount
            elif m.host is None and m.kind == "file":
                stack.enter_context(locked(m.path))
        yield


def checked_notes(notes) -> tuple[str, ...]:
    """The operator's --note texts, stripped; empty ones dropped."""
    return tuple(t for n in notes or () if (t := one_line(n, "--note", "write it on one line, or give several "
                                                                        "--note options")))


def checked_label(label: str | None) -> str | None:
    """The run's --label (its name in comparisons): one line, not empty."""
    if label is None:
        return None
    text = one_line(label, "--label", "write the name on one line")
    if not text:
        raise SsdptsError("--label is empty; give the run a name, e.g. --label partition")
    return text


def check_safe(target: Target, destroy_data: bool, results_dir: Path) -> None:
    """Every refusal of the target (the same answer as 'ssdpts info'), before a run is created."""
    check_target(target, destroy_data, results_dir)


def open_targets(specs: list[str], size: int | None) -> Target:
    """One target, or several tested at once in lock-step (a TargetSet)."""
    targets = [open_target(s, size=size) for s in specs]
    if len(targets) == 1:
        return targets[0]
    sims = [t for t in targets if isinstance(t, SimTarget)]
    if sims and len(sims) != len(targets):
        raise SsdptsError("a simulated drive cannot be tested in parallel with real ones; test simulated drives "
                          "together (sim:client sim:enterprise) and real drives in another run")
    number_simulated(sims)
    paths = [t.label_id for t in targets]
    if len(set(paths)) != len(paths):
        raise SsdptsError(f"a target is named twice ({', '.join(paths)}); name each device once")
    return TargetSet.of(targets)


def _same_drives(stored: TargetRecord, target: Target) -> None:
    """Device names change across reboots: a resume must write to the very drive(s) the run started on."""
    for old, new in zip(stored.drives(), target.drives()):
        for key in ("serial", "model", "backing_file"):
            a, b = old.info.get(key), new.info.get(key)
            if a and b and a != b:
                raise SsdptsError(f"{new.path} is not the drive this run started on ({key} was {a!r}, is {b!r}); "
                                  "start a new run on it, or find the original drive")


def _write_cache_check(profile: dict, target: Target) -> WriteCacheCheck:
    """PTS-E wants the volatile write cache disabled (WCD), PTS-C enabled (WCE): whether the drive matches the
    profile when the run starts (targets/writecache.py sets it with --set-write-cache, else records a deviation)."""
    want = profile.get("defaults", {}).get("write_cache", RunDefaults.write_cache)
    members = target.drives()
    have = {m.label_id: m.info.get("write_cache") for m in members}
    states = {"write back": "enabled", "write through": "disabled"}
    mismatched = [k for k, v in have.items() if want in ("enabled", "disabled") and v in states and states[v] != want]
    note = ""
    if mismatched:
        note = (f"the profile asks for the write cache {want}, but it is {states[have[mismatched[0]]]} on "
                f"{', '.join(mismatched)}: results are labelled with the drive's real setting "
                f"(--set-write-cache lets ssdpts set it for the run and restore it; otherwise this is a "
                f"recorded deviation)")
    return WriteCacheCheck(want, have, not mismatched, note)


def _same_io_engine(run: dict, io: IoChoice) -> None:
    """A resumed run goes on with the I/O engine its stored rounds used."""
    before = run["options"].io_engine
    if before is not None and before.ioengine != io.ioengine:
        raise SsdptsError(f"run {run['id']} ran with ioengine {before.ioengine}, this bench now gives {io.ioengine} "
                          f"({io.reason}); restore what it lacks, or start a new run")


def check_settings(specs: list[TestSpec], profile: dict, target: Target) -> None:
    """Every test's settings build from the profile, and their block sizes suit the target's logical block
    (one line naming the test and key, before anything is created)."""
    for spec in specs:
        spec.settings_of(profile).check(spec.name, target.logical_block_size)


def _writes(plans: list[TestPlan], specs: list) -> bool:
    """Whether the run writes to the target (then it needs --destroy-data)."""
    return plans_write(plans, sum(1 for s in specs if s.plan is None))


def plans_for(target: Target, profile: dict, names: list[str], purge_method: str = "auto") -> list[TestPlan]:
    """The plans of the tests `names` that declare one, from the loaded `profile` (settings checked apart:
    check_settings)."""
    plans = []
    for name in registry.checked_names(names, "the tests"):
        spec = registry.get(name)
        if spec.plan is not None:
            ctx = TestContext(run_id="plan", test=name, store=None, target=target, engine=None,
                              settings=spec.settings_of(profile), progress=None, purge_method=purge_method)
            plans.append(spec.plan(ctx))
    return plans


def check_room_for(target: Target, profile: dict, names: list[str], purge_method: str = "auto") -> None:
    """Refuse a target too small for the cells these tests will run, as their plans list them."""
    check_room(target, planned_workloads(plans_for(target, profile, names, purge_method)))


def check_capabilities(specs: list[TestSpec], target: Target, engine: Engine) -> None:
    """Refuse up front a test whose needs the engine and target do not offer (one line naming both)."""
    offered = frozenset(engine.capabilities) & frozenset(target.capabilities)
    for spec in specs:
        lacking = missing(spec.needs, offered)
        if lacking:
            raise SsdptsError(f"test {spec.name} needs {', '.join(c.value for c in lacking)}, which {engine.name} on "
                              f"{target.label_id} does not offer; run it on a local target, or drop it from --tests")


def start(target_spec: str | list[str], *, results_dir: Path, profile_name: str, tests: list[str] | None,
          size: int | None, destroy_data: bool, purge_method: str, quiet: bool, seed: int | None = None,
          set_write_cache: bool = False, ignore_doctor: frozenset[str] = frozenset(), notes: tuple[str, ...] = (),
          trace_stimulus: bool = False, label: str | None = None) -> str:
    profile = load_profile(profile_name)
    seed_record = choose_seed(profile, seed)
    tests = tests or profile_tests(profile)
    specs = [registry.get(t) for t in registry.checked_names(tests, "the tests")]
    if purge_method not in METHODS:
        raise SsdptsError(f"unknown --purge {purge_method!r}; allowed: {', '.join(METHODS)}")
    specs_ = [target_spec] if isinstance(target_spec, str) else list(target_spec)
    target = open_targets(specs_, size)
    check_purge_method(target, purge_method)
    check_settings(specs, profile, target)
    plans = plans_for(target, profile, tests, purge_method)
    check_safe(target, destroy_data or not _writes(plans, specs), results_dir)
    cells = planned_workloads(plans)   # built once for both checks
    check_room(target, cells)
    io_request = run_defaults(profile).io_request()
    engine = engine_for(target, io_request)  # checks fio before anything is written
    io = io_choice(engine, target, io_request)    # refuses an engine the bench cannot use
    check_capabilities(specs, target, engine)
    check_options(engine.version, cells)
    if trace_stimulus:
        check_traceable(target)
    target_spec = " ".join(specs_)
    bench = gate(Bench(target=target, write_cache_required=required_write_cache(profile),
                       set_write_cache=set_write_cache), ignore_doctor, target_spec)   # ssdpts doctor, refuses on fail
    cache = _write_cache_check(profile, target)
    store = Store.in_dir(results_dir)
    run_id = store.create_run(
        target_spec=target_spec, target=target.to_dict(),
        host=platform_record(target, engine.version).with_checks([f.to_dict() for f in bench]),
        profile_name=profile["profile"]["name"], profile=profile, tests=tests,
        options=RunOptions(destroy_data=destroy_data, purge=purge_method, size=size, results_dir=str(results_dir),
                           write_cache=cache, seed=seed_record, set_write_cache=set_write_cache,
                           notes=list(checked_notes(notes)), trace_stimulus=trace_stimulus, io_engine=io,
                           label=checked_label(label)),
        engine=engine.name)
    execute(store, run_id, target, engine, results_dir, quiet)
    return run_id


def refuse_if_live(run: dict, doing: str) -> None:
    """A run that its process may still be running is left alone."""
    owner: RunOwner = run["owner"]
    if run["status"] != "running" or not owner.recorded:
        return
    where = f"process {owner.pid} on this host" if owner.here else f"process {owner.pid} on host {owner.host}"
    raise SsdptsError(f"run {run['id']} is still running ({where}); stop it first (Ctrl-C or kill {owner.pid}), "
                      f"then {doing}")


def run_files(results_dir: Path, run_id: str) -> list[Path]:
    """The files and directories a run keeps under the results directory (its log, report, drive checkpoints)."""
    candidates = [_log_path(results_dir, run_id), run_files_dir(results_dir, run_id), _reserve_path(results_dir, run_id),
                  Path(results_dir) / "reports" / run_id, *state_files(results_dir, run_id)]
    return [p for p in candidates if p.exists() or p.is_symlink()]


def delete(store: Store, results_dir: Path, run_id: str) -> list[Path]:
    """Remove a run: its rows in every table, then its files; the paths removed. A live run is refused."""
    run = settled(store, run_id)
    refuse_if_live(run, f"'ssdpts delete {run['id']}'")
    files = run_files(results_dir, run["id"])
    store.delete_run(run["id"])
    for p in files:
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink(missing_ok=True)
    return files


def resume(run_id: str, *, results_dir: Path, quiet: bool) -> str:
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
    _same_drives(run["target"], target)
    check_purge_method(target, opts.purge)
    plans = plans_for(target, run["profile"], run["tests"], opts.purge)
    check_safe(target, target.kind == "file" or opts.destroy_data
               or not _writes(plans, [registry.get(t) for t in run["tests"]]), results_dir)
    io_request = run_defaults(run["profile"]).io_request()
    engine = engine_for(target, io_request)
    _same_io_engine(run, io_choice(engine, target, io_request))    # the bench may have changed since the run began
    check_capabilities([registry.get(t) for t in run["tests"]], target, engine)
    check_options(engine.version, planned_workloads(plans))
    if opts.trace_stimulus:
        check_traceable(target)
    resumes.resuming(store, run["id"], target)      # the device's counters before any I/O of ours
    store.set_run_status(run["id"], "running", owner=RunOwner.current())
    execute(store, run["id"], target, engine, results_dir, quiet, retry=True)
    return run["id"]


def _health(store: Store, run_id: str, test: str, when: str, target: Target) -> None:
    """SMART / NVMe / simulator health snapshot around every test (kept once per test and moment)."""
    key = f"health:{when}"
    if store.step(run_id, test, key) is not None:
        return
    try:
        data = snapshot(target)
    except Exception as e:  # health data is informative: never fail a run for it
        data = {"available": False, "reason": f"{type(e).__name__}: {e}",
                "failures": [f"health snapshot failed: {type(e).__name__}: {e}"]}
    record = HealthSnapshot.from_dict(data)
    store.record_step(run_id, test, key, RECORD_KIND, record)
    for failure in record.failures:   # recorded as failures with the tool's message, never dropped
        store.record_deviation(run_id, test, Deviation("health-failure", f"{when} the test: {failure}",
                                                       "smartctl(8) RETURN VALUES; NVMe SMART/health log"))


def _stopped_by_medium(store: Store, run_id: str, error: ResultsMediumError, reserve: SpaceReserve) -> None:
    """The results medium failed a write: the run is interrupted (resumable) and the command ends in one line."""
    reserve.release()          # the room to record why
    reason = f"{error.problem}; {error.fix}, then 'ssdpts resume {run_id}'"
    recorded = record_stop(store, run_id, "interrupted", reason)
    raise SsdptsError(f"run {run_id} interrupted: {reason}" + ("" if recorded else
                      " (the status could not be written there either: 'ssdpts list' shows the run interrupted "
                      "once this process has ended)"), exit_code=error.exit_code) from None


def _record_failures(store: Store, run_id: str, test: str, engine: Engine) -> None:
    """Targets that dropped out during `test` (remote hosts), so a resume can retry them."""
    failed = dict(engine.failed)
    if failed:
        store.record_step(run_id, test, "failed-targets", "failure", {"targets": failed, "retried": False})


def _open_failures(store: Store, run_id: str) -> dict[str, dict]:
    out = {}
    for t in store.tests(run_id):
        step = store.step(run_id, t["name"], "failed-targets")
        if step and not step.get("retried"):
            out[t["name"]] = step
    return out


def _retry_failed(store: Store, run_id: str, target: Target, profile: dict, progress: Progress, run: dict) -> None:
    """Resume of a partial run: run each affected test again, on its failed targets only."""
    open_failures = _open_failures(store, run_id)
    members = target.drives()
    for test, step in open_failures.items():
        labels = set(step["targets"])
        retry = [m for m in members if m.label_id in labels]
        if not retry:
            continue
        sub = retry[0] if len(retry) == 1 else TargetSet.of(retry)
        engine = engine_for(sub, run_defaults(profile).io_request())
        engine.keep_dir = run_files_dir(Path(store.path).parent, run_id)
        n = 1 + sum(1 for s in store.steps(run_id, test) if s["key"].startswith("retry"))
        scope = f"retry{n}/"
        progress.message(f"{test}: retrying on {', '.join(sorted(labels))}")
        ctx = TestContext(run_id=run_id, test=test, store=store, target=sub, engine=engine,
                          settings=registry.get(test).settings_of(profile), progress=progress,
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


def _write_report(store: Store, run_id: str, progress: Progress) -> None:
    from .report.html import write_report      # here: plan and info use the runner, and draw nothing

    if os.environ.get("SSDPTS_REPORT") == "0":   # e.g. a slow emulated guest: the report is written elsewhere
        progress.message(f"report skipped (SSDPTS_REPORT=0); write it with 'ssdpts report {run_id}'")
        return
    try:
        progress.message(f"report: {write_report(store, run_id)}")
    except Exception as e:  # a report problem must never fail a finished run
        log.warning("report not written: %s", e)
        progress.message(f"report not written ({e}); retry with 'ssdpts report {run_id}'")


def execute(store: Store, run_id: str, target: Target, engine: Engine, results_dir: Path, quiet: bool,
            retry: bool = False) -> None:
    run = store.run(run_id)
    progress = Progress(quiet=quiet, simulated=simulated(target))
    profile = run["profile"]
    engine.keep_dir = run_files_dir(Path(results_dir), run_id)
    if run["options"].trace_stimulus:      # refused up front on engines without it (check_traceable)
        engine.trace_stimulus = True
    handler, discarded = None, False
    reserve = SpaceReserve(_reserve_path(results_dir, run_id))
    try:
        handler = _setup_log(Path(results_dir), run_id)
        reserve.hold()
        for member in target.drives():
            if member.kind == "file" and member.host is None:
                prepare_file(member)
        target.attach_state(Path(results_dir), run_id, store.checkpoint(run_id))   # stateful targets only
        dropped = store.rollback_to_checkpoint(run_id)      # nothing unless a checkpoint was committed
        if dropped:
            progress.message(f"resume: {dropped} round(s) committed after the simulated drive's last "
                             "checkpoint are run again on the checkpointed state")
        cache_required = (profile.get("defaults") or {}).get("write_cache", RunDefaults.write_cache)
        with exclusive(target), write_cache_applied(store, run_id, target, cache_required,
                                                    run["options"].set_write_cache):
            progress.message(f"run {run_id}: {target.label}, profile {run['profile_name']}, "
                             f"tests {', '.join(run['tests'])} — results in {store.path}")
            note = run["options"].write_cache.note if run["options"].write_cache is not None else ""
            if note:
                progress.message(f"note: {note}")
            purge_method = run["options"].purge
            progress.planned(run["tests"], [PlanBounds.of(p) for p in plans_for(target, profile, run["tests"],
                                                                                 purge_method)])
            for index, name in enumerate(run["tests"], start=1):
                if store.test_status(run_id, name) == "completed":
                    progress.message(f"test {index}/{len(run['tests'])} {name}: already complete, skipped")
                    continue
                spec = registry.get(name)
                store.set_test(run_id, name, "running")
                progress.test_started(name, spec.title, index, len(run["tests"]), resumes.work_done(store, run_id, name))
                try:
                    summary = _run_test(store, run_id, name, target, engine, profile, progress, purge_method)
                except DriveFailed as e:
                    # the failed drives' evidence is the test's result; the others (a parallel run) go on
                    target, engine, summary = _drive_failed(store, run_id, name, e, target, profile, progress,
                                                            purge_method)
                    if target is None:
                        break
                    continue
                _record_failures(store, run_id, name, engine)
                store.set_test(run_id, name, "completed", summary)
                progress.message(_verdict_line(store, run_id, name))
            if retry and target is not None:
                _retry_failed(store, run_id, target, profile, progress, run)
        if store.drive_failures(run_id):
            _end_drive_failed(store, run_id, progress)
        failed = engine.failed
        if failed or _open_failures(store, run_id):
            what = "; ".join(f"{k} ({v})" for k, v in failed.items()) or "see 'ssdpts show'"
            store.set_run_status(run_id, "partial", f"targets failed: {what}; 'ssdpts resume {run_id}' retries them")
            _write_report(store, run_id, progress)
            progress.message(f"run {run_id} finished with failed targets: {what}; retry with 'ssdpts resume {run_id}'")
            return
        store.set_run_status(run_id, "completed")
        _write_report(store, run_id, progress)
        verdict = check(load_run(store, run_id), store)
        progress.message(f"{verdict.lines()[0]}" + ("" if verdict.conformant else f"; 'ssdpts check {run_id}' "
                                                     "lists them"))
        progress.message(f"run {run_id} complete{_stall_note(verdict, Path(results_dir), run_id)}: "
                         f"'ssdpts show {run_id}' for the results")
    except KeyboardInterrupt:
        interrupts.acknowledge()
        lost = progress.stop_cost()
        try:
            resumes.record_stop(store, run_id, engine, target, lost)
        except SsdptsError as e:      # the results medium: the resume then reads the last stored round's end
            log.error("run %s: stop not recorded: %s", run_id, e)
        record_stop(store, run_id, "interrupted", interrupts.reason())
        # no checkpoint here: the drive may be inside an uncommitted round; resume restores the committed one
        progress.close()
        cost = f" (the stop lost {lost}: the resume runs it again)" if lost else ""
        raise SsdptsError(f"run {run_id} interrupted{cost}; continue it with 'ssdpts resume {run_id}'", exit_code=130)
    except DriveFailedRun:
        raise
    except ResultsMediumError as e:
        _stopped_by_medium(store, run_id, e, reserve)
    except SsdptsError as e:
        discarded = _discard_if_empty(store, run_id, retry)
        if discarded:
            raise SsdptsError(f"{e} (no run was kept: it had stored nothing)", exit_code=e.exit_code) from None
        store.set_run_status(run_id, "failed", str(e))
        mark_running_tests(store, run_id, "failed")
        raise SsdptsError(f"{e} (run {run_id} stopped; fix the cause and 'ssdpts resume {run_id}')",
                          exit_code=e.exit_code) from None
    except Exception as e:
        medium = os_medium_error(Path(results_dir), e)    # a log or checkpoint write under the results
        if medium is not None:
            _stopped_by_medium(store, run_id, medium, reserve)
        log.exception("run %s failed", run_id)
        discarded = _discard_if_empty(store, run_id, retry)
        if not discarded:
            record_stop(store, run_id, "failed", f"{type(e).__name__}: {e}")
        raise
    finally:
        reserve.release()
        progress.close()
        if handler is not None:
            log.removeHandler(handler)
            handler.close()
        if discarded:
            _log_path(results_dir, run_id).unlink(missing_ok=True)


def _stall_note(verdict, results_dir: Path, run_id: str) -> str:
    """For the run's last line: rounds whose fio stalled and were run again. The run still completes (exit 0),
    so without this only `check` would show them."""
    stalls = [f for f in verdict.findings if f.deviation.rule == "fio-stall"]
    if not stalls:
        return ""
    evidence = sorted(str(d) for d in run_files_dir(results_dir, run_id).glob("fio-stall-*"))
    return (f", but fio stalled {len(stalls)} time(s) and each stalled round was killed and run again "
            f"(evidence: {', '.join(evidence) or run_files_dir(results_dir, run_id)})")


def _run_test(store: Store, run_id: str, name: str, target: Target, engine: Engine, profile: dict, progress: Progress,
              purge_method: str, scope: str = "") -> dict:
    """One test on `target`, its health snapshots around it; its encoded summary."""
    spec = registry.get(name)
    ctx = TestContext(run_id=run_id, test=name, store=store, target=target, engine=engine,
                      settings=spec.settings_of(profile), progress=progress, purge_method=purge_method,
                      scope=scope, decode_summary=registry.decode_stored)
    _health(store, run_id, name, "before", target)
    with sampling.temperature_trace(target, ctx.settings.temperature_interval) as temperatures:
        summary = spec.encode(spec.run(ctx))
    sampling.record(store, run_id, name, temperatures)
    _health(store, run_id, name, "after", target)
    return summary


def _drive_failed(store: Store, run_id: str, name: str, failed: DriveFailed, target: Target, profile: dict,
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
    engine = engine_for(rest, run_defaults(profile).io_request())
    engine.keep_dir = run_files_dir(Path(store.path).parent, run_id)
    progress.message(f"{name}: running again on {', '.join(m.label_id for m in healthy)} alone")
    try:
        summary = _run_test(store, run_id, name, rest, engine, profile, progress, purge_method, scope="healthy/")
    except DriveFailed as again:
        return _drive_failed(store, run_id, name, again, rest, profile, progress, purge_method)
    store.set_test(run_id, name, "drive-failed", summary)
    return rest, engine, summary


def _end_drive_failed(store: Store, run_id: str, progress: Progress) -> None:
    """A drive failed: the run ends as `drive-failed`, its report written, exit 1 with the failure's line."""
    lines = [f.line() for f in store.drive_failures(run_id)]
    store.set_run_status(run_id, "drive-failed", "; ".join(lines))
    _write_report(store, run_id, progress)
    raise DriveFailedRun(f"{'; '.join(lines)} (run {run_id}: completed rounds kept; 'ssdpts show {run_id}' has "
                         "the evidence, 'ssdpts check' exits 1)")


class DriveFailedRun(SsdptsError):
    """The run ended because a drive failed: its verdict, already stored; the CLI exits 1."""

    exit_code = 1


def _verdict_line(store: Store, run_id: str, test: str) -> str:
    """The console's last word on a completed test (the same rules as 'ssdpts check')."""
    run = load_run(store, run_id)
    return check(run, store).test_line(next(t for t in run.tests if t.name == test))


def _discard_if_empty(store: Store, run_id: str, retry: bool) -> bool:
    """A new run that failed in its set-up, before it stored a step or a round, is removed rather than left
    as a `failed` run with nothing to resume (a resumed run is always kept)."""
    if retry or store.has_results(run_id):
        return False
    store.delete_run(run_id)
    return True

