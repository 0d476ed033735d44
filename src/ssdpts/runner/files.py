"""A run's files under the results directory (log, engine files, space reserve, report, drive checkpoints),
and deleting a run."""

from __future__ import annotations

import shutil
from pathlib import Path

from ..errors import SsdptsError
from ..owner import RunOwner
from ..runstatus import settled
from ..store import Store
from ..targets.sim import state_files


def run_files_dir(results_dir: Path, run_id: str) -> Path:
    """Beside the run's log: files an engine keeps for the run (a failed or stalled fio's job file, stderr
    and evidence)."""
    return Path(results_dir) / "logs" / run_id


def log_path(results_dir: Path, run_id: str) -> Path:
    return Path(results_dir) / "logs" / f"{run_id}.log"


def reserve_path(results_dir: Path, run_id: str) -> Path:
    return Path(results_dir) / "logs" / f"{run_id}.reserve"


def run_files(results_dir: Path, run_id: str) -> list[Path]:
    """The files and directories a run keeps under the results directory (its log, report, drive checkpoints)."""
    candidates = [log_path(results_dir, run_id), run_files_dir(results_dir, run_id), reserve_path(results_dir, run_id),
                  Path(results_dir) / "reports" / run_id, *state_files(results_dir, run_id)]
    return [p for p in candidates if p.exists() or p.is_symlink()]


def refuse_if_live(run: dict, doing: str) -> None:
    """A run that its process may still be running is left alone."""
    owner: RunOwner = run["owner"]
    if run["status"] != "running" or not owner.recorded:
        return
    where = f"process {owner.pid} on this host" if owner.here else f"process {owner.pid} on host {owner.host}"
    raise SsdptsError(f"run {run['id']} is still running ({where}); stop it first (Ctrl-C or kill {owner.pid}), "
                      f"then {doing}")


def delete(store: Store, results_dir: Path | None, run_id: str) -> list[Path]:
    """Remove a run: its rows in every table, then its files (none for a store that keeps none: `results_dir`
    None); the paths removed. A live run is refused."""
    run = settled(store, run_id)
    refuse_if_live(run, f"'ssdpts delete {run['id']}'")
    files = run_files(results_dir, run["id"]) if results_dir is not None else []
    store.delete_run(run["id"])
    for p in files:
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink(missing_ok=True)
    return files


def discard_if_empty(store: Store, run_id: str, retry: bool) -> bool:
    """A new run that failed in its set-up, before it stored a step or a round, is removed rather than left
    as a `failed` run with nothing to resume (a resumed run is always kept)."""
    if retry or store.has_results(run_id):
        return False
    store.delete_run(run_id)
    return True
