"""A run: open the target safely, record the platform, run each test, keep everything in the store.

Resumable at any point: completed tests are skipped, a test continues from its last stored round.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
from contextlib import contextmanager
from pathlib import Path

from . import pts
from .engines import engine_for
from .errors import SsdptsError
from .hostinfo import host_info
from .profiles import load_profile, test_settings
from .progress import Progress
from .pts.common import TestContext
from .store import Store
from .targets import Target, open_target
from .targets.purge import METHODS
from .targets.resolve import prepare_file
from .targets.safety import check_block_device, check_file

log = logging.getLogger("ssdpts")


def _setup_log(results_dir: Path, run_id: str) -> logging.Handler:
    (results_dir / "logs").mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(results_dir / "logs" / f"{run_id}.log")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    return handler


@contextmanager
def exclusive(target: Target):
    """Hold the target exclusively for the run: nobody can mount it, and no second ssdpts can test it."""
    if target.kind == "block":
        try:
            fd = os.open(target.path, os.O_RDONLY | os.O_EXCL)
        except OSError as e:
            if e.errno == errno.EBUSY:
                raise SsdptsError(f"refusing {target.path}: it is in use (mounted, a RAID/LVM member, or another "
                                  "ssdpts run); stop that use first") from None
            raise
    elif target.kind == "file":
        fd = os.open(target.path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise SsdptsError(f"refusing {target.path}: another ssdpts run is using this file") from None
    else:
        fd = None
    try:
        yield
    finally:
        if fd is not None:
            os.close(fd)


def check_safe(target: Target, destroy_data: bool) -> None:
    if target.kind == "block":
        check_block_device(target.path, destroy_data)
    elif target.kind == "file":
        check_file(target.path, destroy_data)


def start(target_spec: str, *, results_dir: Path, profile_name: str, tests: list[str] | None, size: int | None,
          destroy_data: bool, purge_method: str, quiet: bool) -> str:
    profile = load_profile(profile_name)
    tests = tests or list(profile.get("profile", {}).get("tests") or pts.DEFAULT_TESTS)
    for t in tests:
        pts.get(t)
    if purge_method not in METHODS:
        raise SsdptsError(f"unknown --purge {purge_method!r}; allowed: {', '.join(METHODS)}")
    target = open_target(target_spec, size=size)
    check_safe(target, destroy_data)
    engine = engine_for(target)              # checks fio before anything is written
    store = Store.in_dir(results_dir)
    run_id = store.create_run(
        target_spec=target_spec, target=target.to_dict(), host=host_info(engine.version),
        profile_name=profile["profile"]["name"], profile=profile, tests=tests,
        options={"destroy_data": destroy_data, "purge": purge_method, "size": size, "results_dir": str(results_dir)},
        engine=engine.name)
    execute(store, run_id, target, engine, results_dir, quiet)
    return run_id


def resume(run_id: str, *, results_dir: Path, quiet: bool) -> str:
    store = Store.in_dir(results_dir)
    run = store.run(run_id)
    if run["status"] == "completed":
        raise SsdptsError(f"run {run['id']} is already complete; 'ssdpts show {run['id']}' shows its results")
    opts = run["options"]
    target = open_target(run["target_spec"], size=opts.get("size"))
    if target.kind in ("block", "file") and target.size_bytes != run["target"]["size_bytes"]:
        raise SsdptsError(f"{target.path} is now {target.size_bytes} bytes, was {run['target']['size_bytes']}; "
                          "this is not the same target, start a new run")
    check_safe(target, True if target.kind == "file" else bool(opts.get("destroy_data")))
    engine = engine_for(target)
    store.set_run_status(run["id"], "running")
    execute(store, run["id"], target, engine, results_dir, quiet)
    return run["id"]


def _health(store: Store, run_id: str, test: str, when: str, target: Target) -> None:
    """SMART / NVMe / simulator health snapshot around every test (kept once per test and moment)."""
    key = f"health:{when}"
    if store.step(run_id, test, key) is not None:
        return
    try:
        from .health import snapshot
    except ImportError:
        return
    try:
        data = snapshot(target)
    except Exception as e:  # health data is informative: never fail a run for it
        data = {"available": False, "reason": f"{type(e).__name__}: {e}"}
    store.record_step(run_id, test, key, "health", data)


def _write_report(store: Store, run_id: str, progress: Progress) -> None:
    try:
        from .report import write_report

        progress.message(f"report: {write_report(store, run_id)}")
    except Exception as e:  # a report problem must never fail a finished run
        log.warning("report not written: %s", e)
        progress.message(f"report not written ({e}); retry with 'ssdpts report {run_id}'")


def execute(store: Store, run_id: str, target: Target, engine, results_dir: Path, quiet: bool) -> None:
    run = store.run(run_id)
    handler = _setup_log(Path(results_dir), run_id)
    progress = Progress(quiet=quiet)
    profile = run["profile"]
    try:
        if target.kind == "file":
            prepare_file(target)
        if target.kind == "sim":
            target.attach_state(Path(results_dir), run_id)
        with exclusive(target):
            progress.message(f"run {run_id}: {target.label}, profile {run['profile_name']}, "
                             f"tests {', '.join(run['tests'])} — results in {store.path}")
            for name in run["tests"]:
                if store.test_status(run_id, name) == "completed":
                    progress.message(f"{name}: already complete, skipped")
                    continue
                module = pts.get(name)
                store.set_test(run_id, name, "running")
                ctx = TestContext(run_id=run_id, test=name, store=store, target=target, engine=engine,
                                  settings=test_settings(profile, name), progress=progress,
                                  purge_method=run["options"].get("purge", "auto"))
                progress.test_started(name, module.TITLE, None)
                _health(store, run_id, name, "before", target)
                summary = module.run(ctx)
                _health(store, run_id, name, "after", target)
                store.set_test(run_id, name, "completed", summary)
                if target.kind == "sim":
                    target.checkpoint(force=True)
        store.set_run_status(run_id, "completed")
        _write_report(store, run_id, progress)
        progress.message(f"run {run_id} complete: 'ssdpts show {run_id}' for the results")
    except KeyboardInterrupt:
        store.set_run_status(run_id, "interrupted", "interrupted by the user")
        progress.close()
        raise SsdptsError(f"run {run_id} interrupted; continue it with 'ssdpts resume {run_id}'", exit_code=130)
    except SsdptsError as e:
        store.set_run_status(run_id, "failed", str(e))
        raise SsdptsError(f"{e} (run {run_id} stopped; fix the cause and 'ssdpts resume {run_id}')",
                          exit_code=e.exit_code) from None
    except Exception as e:
        store.set_run_status(run_id, "failed", f"{type(e).__name__}: {e}")
        log.exception("run %s failed", run_id)
        raise
    finally:
        progress.close()
        log.removeHandler(handler)
        handler.close()
