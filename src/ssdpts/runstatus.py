"""A run's recorded status: a run whose process is gone is settled as interrupted, a stop is recorded.

Apart from the runner so that the commands that read runs (list, show, delete) need not import it.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from .errors import SsdptsError
from .owner import RunOwner
from .store import Store



def _log_error(*args) -> None:
    import logging      # here, as tempfile below: reading runs (list, show, check) needs neither

    logging.getLogger("ssdpts").error(*args)


@dataclass(frozen=True)
class UnrecordedStop:
    """Why a run stopped, kept outside its results medium when that medium refused the record (a file system
    turned read-only): the next command that settles the run records it there, instead of a guess."""

    db: str           # the results database (real path) the run is in
    owner: dict       # RunOwner of the process that stopped: the note is about that process's run only
    message: str      # the run's message, as it would have been recorded


def _unrecorded_path(run_id: str) -> Path:
    import tempfile

    return Path(tempfile.gettempdir()) / "ssdpts-unrecorded" / f"{run_id}.json"


def keep_unrecorded(store: Store, run_id: str, message: str) -> None:
    """The stop's reason where it can be written (the temp directory), when the results medium cannot take it."""
    note = UnrecordedStop(db=os.path.realpath(store.path), owner=RunOwner.current().to_dict(), message=message)
    path = _unrecorded_path(run_id)
    try:
        path.parent.mkdir(mode=0o700, exist_ok=True)
        path.write_text(json.dumps(asdict(note)))
    except OSError as e:     # nowhere to keep it: the run then shows as its process being gone
        _log_error("run %s: the stop's reason not kept in %s: %s", run_id, path, e)


def _unrecorded(store: Store, run: dict) -> str | None:
    """The reason the run's own process kept for it (keep_unrecorded), or None."""
    try:
        note = UnrecordedStop(**json.loads(_unrecorded_path(run["id"]).read_text()))
    except (OSError, ValueError, TypeError):
        return None
    if note.db != os.path.realpath(store.path) or RunOwner.from_dict(note.owner) != run["owner"]:
        return None
    return note.message


def settled(store: Store, run_id: str) -> dict:
    """The run, with a `running` run whose process is gone marked `interrupted` (and the reason) first: the
    reason its process kept when the results medium refused it (read-only), else that the process is gone."""
    run = store.run(run_id)
    if run["status"] == "running":
        gone = run["owner"].gone()
        if gone:
            reason = _unrecorded(store, run) or f"interrupted: {gone}"
            if record_stop(store, run["id"], "interrupted", reason):
                _unrecorded_path(run["id"]).unlink(missing_ok=True)
            else:
                store.show_status(run["id"], "interrupted", reason)   # the medium keeps "running"
            run = store.run(run["id"])
    return run


def record_stop(store: Store, run_id: str, status: str, message: str) -> bool:
    """The run's (and its running tests') new status, if the results medium takes it (it may be full,
    read-only or locked: whoever reads the run next sees that its process is gone)."""
    try:
        store.set_run_status(run_id, status, message)
        mark_running_tests(store, run_id, status)
        return True
    except SsdptsError as e:
        _log_error("run %s: status %s not recorded: %s", run_id, status, e)
        return False


def mark_running_tests(store: Store, run_id: str, status: str) -> None:
    """A test cut short says so (resume picks it up again: only 'completed' tests are skipped)."""
    for t in store.tests(run_id):
        if t["status"] == "running":
            store.set_test(run_id, t["name"], status, t["summary"])
