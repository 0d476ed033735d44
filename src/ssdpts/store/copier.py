"""The copier: a process of its own beside a run, copying the run's committed rounds from the bench's SQLite to a
PostgreSQL store (`PgDatabase.push`, idempotent) every few seconds, and once more after the run ends.

It is a separate process so that the measurement never waits on the network: a database that is down, slow, full
or refuses the password costs the run nothing. The copier says so once, keeps the rounds where they are (the
bench's SQLite, committed before any copy) and tries again until the database takes them, also after the run's
process has ended (for up to $SSDPTS_COPY_GIVE_UP_S, a day by default); `ssdpts push RUN --to URL` copies
anything left. The URL reaches it in its environment, never on a command line others can read (ps).

It follows the runs whose recorded owner is the process that started it (the run, or resume, or endurance);
that process's end is the end of its standard input, and the copier answers it on its standard output whether
the last copy is in the database or left to the background. The run's process waits for that answer, never for
a database already known away or slow, and $SSDPTS_COPY_WAIT_S at most (a server that stops answering).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from .location import PgUrl, pg_url

URL_ENV = "SSDPTS_COPY_URL"
SAID_ENV = "SSDPTS_COPY_AWAY_SAID"     # the run already said the store is away (at its start): say it once
INTERVAL_ENV, GIVE_UP_ENV, WAIT_ENV = "SSDPTS_COPY_INTERVAL_S", "SSDPTS_COPY_GIVE_UP_S", "SSDPTS_COPY_WAIT_S"
DEFAULT_INTERVAL_S = 5.0
DEFAULT_GIVE_UP_S = 86400.0
# How long a run's command waits, after its measurement, for the copier's answer about the last copy. Reached only
# when the server hangs without answering (stopped, swapping): a database known away or slow is answered at once,
# and a copy waits LOCK_TIMEOUT_MS at most for a table another session holds.
DEFAULT_WAIT_S = 30.0
# The copier's answer about the last copy, one line on its standard output: in the database, or left to the copier
# in the background (and to `push`).
COPIED, LEFT = "copied", "left"


def _say(line: str) -> None:
    print(f"ssdpts: {line}", file=sys.stderr, flush=True)


def _seconds(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


class Copier:
    """The run's side: start the copier process, and at the end let it finish (waiting a bounded time)."""

    def __init__(self, process: subprocess.Popen, url: PgUrl, local_db: Path):
        self.process, self.url, self.local_db = process, url, local_db
        self.started = time.time()

    @classmethod
    def start(cls, local_db: Path, url: PgUrl) -> "Copier":
        """Check the store once (a wrong password, a newer schema or another program's database refuse the run
        before it starts; a store that is away is said and copied to later), then start the copier."""
        from .pg import LOCK_TIMEOUT_MS, PgAwayError, PgDatabase

        env = {**os.environ, URL_ENV: url.url}
        try:
            with PgDatabase(url, lock_timeout_ms=LOCK_TIMEOUT_MS) as db:
                db.set_up()
        except PgAwayError as e:
            _say(f"{e}; the run goes on: its rounds are kept in {local_db} and copied when the database is back")
            env[SAID_ENV] = "1"
        process = subprocess.Popen([sys.executable, "-m", "ssdpts.store.copier", str(local_db), str(os.getpid())],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, start_new_session=True)
        return cls(process, url, local_db)

    def finish(self) -> None:
        """The run's process is done: the copier makes its last copy and answers; wait for the answer a bounded
        time. A database that is away or slow leaves the rest to the copier in the background, said in one line."""
        try:
            self.process.stdin.close()
        except OSError:
            pass
        wait = _seconds(WAIT_ENV, DEFAULT_WAIT_S)
        answer = _line_within(self.process.stdout, wait)
        if answer == "":                  # it ended without an answer: it said why
            return
        if answer == COPIED:              # it has nothing left to do, and ends
            try:
                self.process.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                pass
            return
        runs = " ".join(sorted(self._own_runs())) or "RUN"
        why = "the database is away or slow" if answer == LEFT else f"no answer from the database in {wait:.0f} s"
        _say(f"the last rounds are not in {self.url} yet ({why}); they are kept in {self.local_db}, the copier "
             f"goes on trying in the background (process {self.process.pid}), and 'ssdpts push {runs} --to URL' "
             "copies them")

    def _own_runs(self) -> set[str]:
        """This process's runs, from the bench's store (the copier may be stuck before it saw the last one)."""
        from .db import Store

        if not self.local_db.exists():
            return set()
        try:
            local = Store(self.local_db)
        except Exception:             # no store, or one that cannot be read: the run reports that itself
            return set()
        try:
            return _owned_runs(local, os.getpid(), self.started - 1)
        finally:
            local.close()


def _line_within(pipe, seconds: float) -> str | None:
    """The next line from `pipe`, stripped; None when none came within `seconds`, "" when the pipe ended."""
    import select

    ready, _, _ = select.select([pipe], [], [], max(0.0, seconds))
    if not ready:
        return None
    return pipe.readline().decode(errors="replace").strip()


def _owned_runs(local, owner_pid: int, since: float) -> set[str]:
    """The runs in the bench's store that the process `owner_pid` (on this boot) runs or ran, changed since."""
    from ..owner import RunOwner

    here = RunOwner.current()
    rows = local.db.execute("SELECT id, owner_json FROM runs WHERE updated >= ?", (since,)).fetchall()
    owned = set()
    for run_id, owner_json in rows:
        owner = RunOwner.from_dict(json.loads(owner_json or "{}"))
        if owner.pid == owner_pid and owner.boot_id == here.boot_id:
            owned.add(run_id)
    return owned


def follow(local_db: Path, owner_pid: int, url: PgUrl) -> int:
    """Copy the owner's runs until its standard input ends and a last copy succeeded (0), or give up (1)."""
    from .db import Store
    from .pg import LOCK_TIMEOUT_MS, PgDatabase, PgStoreError

    ended = threading.Event()
    answered = threading.Lock()
    interval, give_up = _seconds(INTERVAL_ENV, DEFAULT_INTERVAL_S), _seconds(GIVE_UP_ENV, DEFAULT_GIVE_UP_S)
    since = time.time() - 1
    followed: set[str] = set()
    local = db = None
    away: str | None = "said at the start" if os.environ.pop(SAID_ENV, "") else None
    ended_at: float | None = None

    def answer(word: str) -> None:
        """Tell the run's command, once, whether its last rounds are in the database (Copier.finish waits)."""
        if answered.acquire(blocking=False):
            try:
                print(word, flush=True)
            except OSError:           # the run's command is gone already
                pass

    def wait_for_end():
        sys.stdin.buffer.read()
        ended.set()
        # Known away or slow: the run's command does not wait for the copy, nor for the one under way (stuck up
        # to LOCK_TIMEOUT_MS on a locked table, or longer on a server that stopped answering).
        if away is not None:
            answer(LEFT)
    threading.Thread(target=wait_for_end, daemon=True).start()

    while True:
        last = ended.is_set()          # read before copying: this copy then holds the run's final state
        if last and ended_at is None:
            ended_at = time.monotonic()
        try:
            if local is None and local_db.exists():
                local = Store(local_db)
            if local is not None:
                followed |= _owned_runs(local, owner_pid, since)
            if followed:
                if db is None:
                    db = PgDatabase(url, lock_timeout_ms=LOCK_TIMEOUT_MS)
                    db.set_up()
                copied = sum(db.push(local, run_id).copied for run_id in sorted(followed))
                if away is not None:
                    _say(f"PostgreSQL at {url} is back: {copied} round(s) kept meanwhile copied")
                    away = None
            if last:
                answer(COPIED)
                return 0
        except PgStoreError as e:
            if db is not None:
                db.close()
                db = None
            if away is None:
                _say(f"{e}; the run goes on: its rounds are kept in {local_db} and copied when the database is back")
            away = str(e)
            if ended.is_set():
                answer(LEFT)
            if last and time.monotonic() - ended_at > give_up:
                _say(f"gave up copying to {url} after {give_up:.0f} s; 'ssdpts push {' '.join(sorted(followed))} "
                     f"--to URL' copies the runs")
                return 1
        except Exception as e:       # the bench's own store failed to read: the run reports that itself
            _say(f"copying to {url} stopped: {e}")
            return 1
        ended.wait(interval) if not last else time.sleep(interval)


def main(argv: list[str]) -> int:
    local_db, owner_pid = Path(argv[0]), int(argv[1])
    url = pg_url(os.environ.pop(URL_ENV))
    return follow(local_db, owner_pid, url)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
