"""A run's recorded status: a run whose process is gone is settled as interrupted, a stop is recorded.

Apart from the runner so that the commands that read runs (list, show, delete) need not import it.
"""

from __future__ import annotations

import logging

from .errors import SsdptsError
from .store import Store

log = logging.getLogger("ssdpts")


def settled(store: Store, run_id: str) -> dict:
    """The run, with a `running` run whose process is gone marked `interrupted` (and the reason) first."""
    run = store.run(run_id)
    if run["status"] == "running":
        gone = run["owner"].gone()
        if gone:
            if not record_stop(store, run["id"], "interrupted", f"interrupted: {gone}"):
                store.show_status(run["id"], "interrupted", f"interrupted: {gone}")   # the medium keeps "running"
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
        log.error("run %s: status %s not recorded: %s", run_id, status, e)
        return False


def mark_running_tests(store: Store, run_id: str, status: str) -> None:
    """A test cut short says so (resume picks it up again: only 'completed' tests are skipped)."""
    for t in store.tests(run_id):
        if t["status"] == "running":
            store.set_test(run_id, t["name"], status, t["summary"])
