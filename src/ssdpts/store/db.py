from __future__ import annotations

import json
import os
import sqlite3
import time
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from ..deviations import Deviation
from ..errors import SsdptsError
from ..hostinfo import HostRecord
from ..targets.record import TargetRecord
from ..owner import RunOwner
from ..realtime.timing import STORE_LOCK_WAIT_S
from ..runoptions import RunOptions
from . import medium
from .medium import ResultsReadOnlyError

if TYPE_CHECKING:
    from ..engines.drivefault import DriveFailure
    from ..engines.results import CellResult, DeviceIdle, DirStats, RoundOutput
    from ..health.record import HealthSnapshot

SCHEMA_VERSION = 3   # 2: device idle per transition (block layer) on rounds; 3: the process that runs a run

# drive-failed: a drive failed I/O (its evidence: Store.drive_failures); the run's verdict, not an error
RUN_STATUSES = ("running", "completed", "partial", "interrupted", "failed", "drive-failed")

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    status TEXT NOT NULL,              -- RUN_STATUSES
    target_spec TEXT NOT NULL,
    target_json TEXT NOT NULL,
    host_json TEXT NOT NULL,
    profile_name TEXT NOT NULL,
    profile_json TEXT NOT NULL,
    tests_json TEXT NOT NULL,
    options_json TEXT NOT NULL,
    engine TEXT NOT NULL,
    message TEXT NOT NULL DEFAULT '',
    owner_json TEXT NOT NULL DEFAULT '{}'   -- RunOwner: pid, host, boot id, start time of the running process
);
CREATE TABLE IF NOT EXISTS tests (
    run_id TEXT NOT NULL REFERENCES runs(id),
    name TEXT NOT NULL,
    status TEXT NOT NULL,              -- pending | running | completed | failed | drive-failed
    started REAL, ended REAL,
    summary_json TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (run_id, name)
);
CREATE TABLE IF NOT EXISTS steps (     -- non-fio steps: purge, notes
    run_id TEXT NOT NULL, test TEXT NOT NULL, key TEXT NOT NULL,
    kind TEXT NOT NULL, at REAL NOT NULL, data_json TEXT NOT NULL,
    PRIMARY KEY (run_id, test, key)
);
CREATE TABLE IF NOT EXISTS rounds (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL, test TEXT NOT NULL, phase TEXT NOT NULL, kind TEXT NOT NULL,
    round INTEGER NOT NULL,
    started REAL NOT NULL, ended REAL NOT NULL,
    gap_before_ms REAL, gaps_inside_json TEXT NOT NULL DEFAULT '[]',
    engine TEXT NOT NULL, fio_version TEXT NOT NULL DEFAULT '',
    job_text TEXT NOT NULL, command_json TEXT NOT NULL,
    raw_output_z BLOB, stderr TEXT NOT NULL DEFAULT '',
    logs_z BLOB,                       -- zlib(JSON {file name: text}) of fio log files, if any
    tracking_json TEXT NOT NULL DEFAULT '{}',
    steady_json TEXT NOT NULL DEFAULT '{}',
    device_idle_before_ms REAL,        -- block-layer idle before this round's first I/O (NULL: not measured)
    device_idle_json TEXT NOT NULL DEFAULT '{}',   -- {"before": DeviceIdle, "inside": [DeviceIdle], "note": why not}
    UNIQUE (run_id, test, phase, kind, round)
);
CREATE TABLE IF NOT EXISTS cells (
    round_id INTEGER NOT NULL REFERENCES rounds(id),
    idx INTEGER NOT NULL,
    name TEXT NOT NULL,
    workload_json TEXT NOT NULL,
    iops REAL NOT NULL, read_iops REAL NOT NULL, write_iops REAL NOT NULL,
    read_bw REAL NOT NULL, write_bw REAL NOT NULL,           -- bytes/s
    lat_mean_ns REAL NOT NULL, lat_max_ns REAL NOT NULL,
    usr_cpu REAL NOT NULL, sys_cpu REAL NOT NULL,
    result_z BLOB NOT NULL,                                  -- zlib(JSON CellResult incl. histogram bins)
    PRIMARY KEY (round_id, idx)
);
CREATE INDEX IF NOT EXISTS rounds_by_test ON rounds(run_id, test, phase, kind, round);
"""

# columns added after schema 1: (table, column, definition); old databases get them on open, NULL/empty
# in old rows (shown as "not measured")
ADDED_COLUMNS = [
    ("rounds", "gaps_inside_json", "TEXT NOT NULL DEFAULT '[]'"),   # schema 1 databases written before it
    ("rounds", "device_idle_before_ms", "REAL"),
    ("rounds", "device_idle_json", "TEXT NOT NULL DEFAULT '{}'"),
    ("runs", "owner_json", "TEXT NOT NULL DEFAULT '{}'"),
]


def _step_data(kind: str, data_json: str) -> dict | HealthSnapshot:
    """A step's stored data, a health snapshot as its typed record (the one place it is decoded)."""
    from ..health.record import KINDS as HEALTH_KINDS, HealthSnapshot   # here: listing runs reads no health

    data = json.loads(data_json)
    return HealthSnapshot.from_dict(data) if kind in HEALTH_KINDS else data


OUR_TABLES = {"meta", "runs", "tests", "steps", "rounds", "cells"}


def default_results_dir() -> Path:
    return Path(os.environ.get("SSDPTS_RESULTS", "results"))


def _z(obj) -> bytes:
    return zlib.compress(json.dumps(obj, separators=(",", ":")).encode(), 6)


def _unz(blob: bytes):
    return json.loads(zlib.decompress(blob))


def cell_from_dict(d: dict) -> CellResult:
    # the result records are imported here: listing runs reads no cell
    from ..engines.coverage import from_data as coverage_from_data
    from ..engines.hostcpu import HostCpu
    from ..engines.results import CellResult, DirStats
    from ..engines.stimulus import Stimulus

    def ds(x: dict) -> DirStats:
        x = dict(x)
        if x.get("bins") is not None:
            x["bins"] = {int(k): v for k, v in x["bins"].items()}
        return DirStats(**x)

    return CellResult(name=d["name"], read=ds(d["read"]), write=ds(d["write"]), runtime_ms=d["runtime_ms"],
                      usr_cpu=d["usr_cpu"], sys_cpu=d["sys_cpu"], latency_source=d.get("latency_source", "lat"),
                      intervals=d.get("intervals", []),
                      parts={k: cell_from_dict(v) for k, v in (d.get("parts") or {}).items()},
                      jobs={k: cell_from_dict(v) for k, v in (d.get("jobs") or {}).items()},
                      host_cpu=HostCpu(**d["host_cpu"]) if d.get("host_cpu") else None,
                      stimulus=Stimulus.from_dict(d["stimulus"]) if d.get("stimulus") else None,
                      coverage=coverage_from_data(d.get("coverage")))


@dataclass
class RoundRecord:
    id: int
    test: str
    phase: str
    kind: str
    round: int
    started: float
    ended: float
    gap_before_ms: float | None
    engine: str
    job_text: str
    command: list[str]
    tracking: dict
    steady: dict
    gaps_inside_ms: list = field(default_factory=list)
    cells: list[CellResult] = field(default_factory=list)
    workloads: list[dict] = field(default_factory=list)
    # block-layer device idle at this round's transitions (None: not measured, see device_idle_note)
    device_idle_before: DeviceIdle | None = None
    device_idle_inside: list[DeviceIdle] = field(default_factory=list)
    device_idle_note: str = ""

    def cell(self, name: str) -> CellResult:
        for c in self.cells:
            if c.name == name:
                return c
        raise KeyError(name)


@dataclass(frozen=True)
class RunFilter:
    """Which runs `Store.runs` returns (`ssdpts list --status/--model/--serial/--profile/--since`); None: any."""

    status: str | None = None
    model: str | None = None       # part of the drive model, any case (a set of drives: any member's)
    serial: str | None = None      # the drive's serial, exactly (a set of drives: any member's)
    profile: str | None = None     # the profile's name, exactly
    since: float | None = None     # created at or after (Unix seconds)

    def sql(self) -> tuple[list[str], list]:
        conditions: list[str] = []
        args: list = []
        if self.status is not None:
            conditions.append("status = ?")
            args.append(self.status)
        if self.model is not None:   # instr, not LIKE: '%' and '_' typed are characters
            conditions.append("instr(lower(coalesce(json_extract(target_json, '$.info.model'), '')), lower(?)) > 0")
            args.append(self.model)
        if self.serial is not None:
            conditions.append("(json_extract(target_json, '$.info.serial') = ? OR EXISTS (SELECT 1 FROM json_each("
                              "target_json, '$.info.members') m WHERE json_extract(m.value, '$.info.serial') = ?))")
            args += [self.serial, self.serial]
        if self.profile is not None:
            conditions.append("profile_name = ?")
            args.append(self.profile)
        if self.since is not None:
            conditions.append("created >= ?")
            args.append(self.since)
        return conditions, args


def _idle_json(out: RoundOutput) -> dict:
    return {"before": out.device_idle_before.to_dict() if out.device_idle_before else None,
            "inside": [d.to_dict() for d in out.device_idle_inside], "note": out.device_idle_note}


class _Connection:
    """The SQLite connection, with every failure of the medium or a lock as one line (store/medium.py)."""

    def __init__(self, raw: sqlite3.Connection, store: "Store"):
        self.raw, self.store = raw, store

    def execute(self, sql: str, args=()) -> sqlite3.Cursor:
        try:
            return self.raw.execute(sql, args)
        except sqlite3.Error as e:
            raise self.store.explained(e) from None

    def executescript(self, script: str) -> None:
        try:
            self.raw.executescript(script)
        except sqlite3.Error as e:
            raise self.store.explained(e) from None

    @property
    def in_transaction(self) -> bool:
        return self.raw.in_transaction

    def close(self) -> None:
        self.raw.close()


class Store:
    keeps_files = True     # its runs' files (logs, reports, checkpoints) lie beside it; not a PostgreSQL store's

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if self.path.is_dir():
            raise SsdptsError(f"{self.path} is a directory, not a results database; pass --results DIR instead")
        # runs settled in this process that the medium could not record (read-only): run id -> (status, message)
        self.shown: dict[str, tuple[str, str]] = {}
        self.read_only_because = medium.why_read_only(self.path)
        if not self.read_only_because:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = _Connection(self._connect(), self)
            self.db.raw.row_factory = sqlite3.Row
            self._check_foreign()
            if not self.read_only_because:
                self._set_up()
            row = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        except (medium.ResultsMediumError, medium.ResultsLockedError, ResultsReadOnlyError):
            raise
        except sqlite3.DatabaseError as e:
            raise SsdptsError(f"{self.path} is not a readable ssdpts results database ({e}); "
                              "point --results at another directory or move the file away") from None
        if row is not None and int(row[0]) > SCHEMA_VERSION:
            raise SsdptsError(f"{self.path} was written by a newer ssdpts (schema {row[0]}); upgrade ssdpts")
        self._migrate()

    def _connect(self) -> sqlite3.Connection:
        """Read-write; or read-only (`mode=ro`) when this process cannot write the file (read-only media, file
        or directory not writable): list, show, report, check and export only read."""
        if not self.read_only_because:
            return sqlite3.connect(self.path, timeout=STORE_LOCK_WAIT_S, isolation_level=None)
        from urllib.request import pathname2url     # only here: it brings in http and e-mail parsing

        url = "file:" + pathname2url(str(self.path.resolve()))
        raw = sqlite3.connect(url + "?mode=ro", uri=True, timeout=STORE_LOCK_WAIT_S, isolation_level=None)
        try:
            raw.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
            return raw
        except sqlite3.OperationalError as e:
            if e.sqlite_errorcode & 0xFF != sqlite3.SQLITE_CANTOPEN:
                raise
            raw.close()
        # mode=ro reads a WAL database only through its -shm, which a read-only directory cannot get. Without
        # a -wal (the database was closed cleanly) everything is in the main file and `immutable=1` (no
        # locks, no -shm) reads all of it; a -wal left behind holds committed rounds immutable would not see.
        wal = self.path.with_name(self.path.name + "-wal")
        if wal.exists() and wal.stat().st_size > 0:
            raise SsdptsError(f"{self.path} can only be read here ({self.read_only_because}) and its last changes "
                              f"are in {wal.name}, which SQLite cannot read without creating {self.path.name}-shm; "
                              "copy the results directory to writable storage and pass --results DIR")
        return sqlite3.connect(url + "?mode=ro&immutable=1", uri=True, isolation_level=None)

    def _set_up(self) -> None:
        """WAL, durable commits, the tables; the write lock only when a table is missing (a reader of a
        current database takes none, so another program's write lock does not stop it)."""
        if self.db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")   # a committed round survives power loss
        self.db.execute("PRAGMA foreign_keys=ON")
        tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not OUR_TABLES <= tables:
            self.db.executescript("BEGIN IMMEDIATE;\n" + SCHEMA + "\nCOMMIT;")   # all tables or none

    @property
    def read_only(self) -> bool:
        return bool(self.read_only_because)

    def explained(self, error: sqlite3.Error) -> Exception:
        """A failed statement as the user's problem and fix, when it is one (else the error itself)."""
        code = getattr(error, "sqlite_errorcode", 0) & 0xFF
        if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
            return medium.locked(self.path, STORE_LOCK_WAIT_S)
        if self.read_only and code == sqlite3.SQLITE_READONLY:
            return ResultsReadOnlyError(f"{self.path} can only be read here ({self.read_only_because}) and this "
                                        "command writes to it; copy the results directory to writable storage and "
                                        "pass --results DIR")
        return medium.medium_error(self.path.parent, error) or error

    def _schema_version(self) -> int | None:
        if not self.db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone():
            return None
        row = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        return int(row[0]) if row else None

    def _migrate(self) -> None:
        """Bring an older database up to SCHEMA_VERSION by adding the columns it lacks (data kept).
        Writes nothing when it is current (a read-only copy stays readable)."""
        missing = [(t, c, d) for t, c, d in ADDED_COLUMNS
                   if c not in {r[1] for r in self.db.execute(f"PRAGMA table_info({t})")}]
        if not missing and self._schema_version() == SCHEMA_VERSION:
            return
        with self.tx():
            for table, column, definition in missing:
                self.db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {definition}")
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))

    def _check_foreign(self) -> None:
        """An existing SQLite file that is not ours is refused, never written into."""
        tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if tables and not tables <= OUR_TABLES:
            raise SsdptsError(f"{self.path} is an SQLite database of another program (tables: "
                              f"{', '.join(sorted(tables)[:5])}); point --results at another directory")

    @classmethod
    def in_dir(cls, results_dir: str | Path) -> "Store":
        return cls(Path(results_dir) / "ssdpts.db")

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def tx(self):
        """One write transaction: all of it or nothing (SQLite itself rolls back after a full disk or an I/O
        error, so only a transaction still open is rolled back)."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
            self.db.execute("COMMIT")
        except BaseException:
            if self.db.in_transaction:
                self.db.raw.execute("ROLLBACK")
            raise

    # runs -----------------------------------------------------------------------------------
    def create_run(self, *, target_spec: str, target: dict, host: HostRecord | dict, profile_name: str,
                   profile: dict, tests: list[str], options: RunOptions | dict, engine: str,
                   owner: RunOwner | None = None) -> str:
        """The run row and its pending tests, in one transaction (all or nothing); `owner` is the process
        that runs it (this one unless given). `host` and `options` as records, or as their JSON."""
        owner = owner or RunOwner.current()
        host = host if isinstance(host, HostRecord) else HostRecord.from_json(host)
        options = options if isinstance(options, RunOptions) else RunOptions.from_json(options)
        import secrets      # here: only a new run needs it (reading runs starts faster without it)

        run_id = time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)
        now = time.time()
        with self.tx():
            self.db.execute(
                "INSERT INTO runs (id, created, updated, status, target_spec, target_json, host_json, profile_name,"
                " profile_json, tests_json, options_json, engine, message, owner_json)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (run_id, now, now, "running", target_spec, json.dumps(target), json.dumps(host.to_json()),
                 profile_name, json.dumps(profile), json.dumps(tests), json.dumps(options.to_json()), engine, "", json.dumps(owner.to_dict())))
            for t in tests:
                self.db.execute("INSERT INTO tests (run_id, name, status) VALUES (?,?,?)", (run_id, t, "pending"))
        return run_id

    def run_id(self, given: str) -> str:
        """The full id of the one run whose id is or contains `given` (a prefix, or the hex suffix)."""
        if self.db.execute("SELECT 1 FROM runs WHERE id=?", (given,)).fetchone():
            return given
        # instr, not LIKE: '%' or '_' in what the user typed are characters, not wildcards
        matches = [r[0] for r in self.db.execute("SELECT id FROM runs WHERE instr(id, ?) > 0 ORDER BY created",
                                                 (given,)).fetchall()] if given else []
        if len(matches) == 1:
            return matches[0]
        if matches:
            shown = ", ".join(matches[:8]) + (f" and {len(matches) - 8} more" if len(matches) > 8 else "")
            raise SsdptsError(f"run id {given!r} is ambiguous: it matches {len(matches)} runs ({shown}); "
                              "give more of the id")
        raise SsdptsError(f"no run {given!r} in {self.path}; 'ssdpts list' shows the runs")

    def run(self, run_id: str) -> dict:
        row = self.db.execute("SELECT * FROM runs WHERE id=?", (self.run_id(run_id),)).fetchone()
        d = dict(row)
        if d["id"] in self.shown:
            d["status"], d["message"] = self.shown[d["id"]]
        for k in ("target", "host", "profile", "tests", "options"):
            d[k] = json.loads(d.pop(f"{k}_json"))
        d["host"], d["options"] = HostRecord.from_json(d["host"]), RunOptions.from_json(d["options"])
        d["target"] = TargetRecord.from_json(d["target"])
        d["owner"] = RunOwner.from_dict(json.loads(d.pop("owner_json") or "{}"))
        return d

    def runs(self, where: RunFilter | None = None) -> list[dict]:
        """The runs, oldest first; `where` keeps those that match every condition it sets."""
        where = where or RunFilter()
        status = where.status if self.shown else None   # then the status shown is known here, not in SQL
        conditions, args = (replace(where, status=None) if status else where).sql()
        rows = self.db.execute("SELECT id FROM runs" + (" WHERE " + " AND ".join(conditions) if conditions else "")
                               + " ORDER BY created", args).fetchall()
        runs = [self.run(r[0]) for r in rows]
        return [r for r in runs if r["status"] == status] if status else runs

    def show_status(self, run_id: str, status: str, message: str) -> None:
        """For the rest of this process, show the run with a status its medium could not record (read-only)."""
        self.shown[run_id] = (status, message)

    def set_run_status(self, run_id: str, status: str, message: str = "", owner: RunOwner | None = None) -> None:
        """A new status; `owner` (the process taking the run over, on resume) is recorded with it."""
        with self.tx():
            self.db.execute("UPDATE runs SET status=?, message=?, updated=? WHERE id=?",
                            (status, message, time.time(), run_id))
            if owner is not None:
                self.db.execute("UPDATE runs SET owner_json=? WHERE id=?", (json.dumps(owner.to_dict()), run_id))

    def delete_run(self, run_id: str) -> None:
        """Every row of the run in every table, in one transaction."""
        with self.tx():
            self.db.execute("DELETE FROM cells WHERE round_id IN (SELECT id FROM rounds WHERE run_id=?)", (run_id,))
            for table in ("rounds", "steps", "tests"):
                self.db.execute(f"DELETE FROM {table} WHERE run_id=?", (run_id,))
            self.db.execute("DELETE FROM runs WHERE id=?", (run_id,))

    def has_results(self, run_id: str) -> bool:
        """Whether the run stored anything beyond its creation (a step or a round)."""
        return any(self.db.execute(f"SELECT 1 FROM {table} WHERE run_id=? LIMIT 1", (run_id,)).fetchone()
                   for table in ("steps", "rounds"))

    # tests ----------------------------------------------------------------------------------
    def tests(self, run_id: str) -> list[dict]:
        rows = self.db.execute("SELECT * FROM tests WHERE run_id=? ORDER BY rowid", (run_id,)).fetchall()
        out = []
        for r in rows:
            d = dict(r)
            d["summary"] = json.loads(d.pop("summary_json"))
            out.append(d)
        return out

    def test_status(self, run_id: str, name: str) -> str:
        row = self.db.execute("SELECT status FROM tests WHERE run_id=? AND name=?", (run_id, name)).fetchone()
        return row[0] if row else "pending"

    def set_test(self, run_id: str, name: str, status: str, summary: dict | None = None) -> None:
        now = time.time()
        with self.tx():
            self.db.execute("INSERT OR IGNORE INTO tests (run_id, name, status) VALUES (?,?,?)", (run_id, name, status))
            if status == "running":
                self.db.execute("UPDATE tests SET status=?, started=COALESCE(started, ?) WHERE run_id=? AND name=?",
                                (status, now, run_id, name))
            else:
                self.db.execute("UPDATE tests SET status=?, ended=?, summary_json=? WHERE run_id=? AND name=?",
                                (status, now, json.dumps(summary or {}), run_id, name))
            self.db.execute("UPDATE runs SET updated=? WHERE id=?", (now, run_id))

    # steps ----------------------------------------------------------------------------------
    def step(self, run_id: str, test: str, key: str) -> dict | HealthSnapshot | None:
        row = self.db.execute("SELECT kind, data_json FROM steps WHERE run_id=? AND test=? AND key=?",
                              (run_id, test, key)).fetchone()
        return _step_data(row["kind"], row["data_json"]) if row else None

    def steps(self, run_id: str, test: str | None = None) -> list[dict]:
        """Each step as {run_id, test, key, kind, at, data_json, data}; `data` decoded (`_step_data`)."""
        q = "SELECT * FROM steps WHERE run_id=?" + (" AND test=?" if test else "") + " ORDER BY at"
        rows = self.db.execute(q, (run_id, test) if test else (run_id,)).fetchall()
        return [dict(r, data=_step_data(r["kind"], r["data_json"])) for r in rows]

    def record_step(self, run_id: str, test: str, key: str, kind: str, data: dict | HealthSnapshot,
                    checkpoint: dict | None = None) -> None:
        from ..health.record import HealthSnapshot

        if isinstance(data, HealthSnapshot):
            data = data.to_dict()
        with self.tx():
            self.db.execute("INSERT OR REPLACE INTO steps VALUES (?,?,?,?,?,?)",
                            (run_id, test, key, kind, time.time(), json.dumps(data)))
            if checkpoint is not None:
                self._record_checkpoint(run_id, checkpoint)

    # target checkpoints (the simulated drive's state file that matches the committed rounds) -------------
    def _record_checkpoint(self, run_id: str, checkpoint: dict) -> None:
        """Inside a transaction: the state the committed data describes (up to its last round), and its
        history (for comparisons)."""
        now = time.time()
        last = self.db.execute("SELECT MAX(id) FROM rounds WHERE run_id=?", (run_id,)).fetchone()[0]
        checkpoint = {**checkpoint, "round_id": last or 0}
        n = self.db.execute("SELECT COUNT(*) FROM steps WHERE run_id=? AND kind='checkpoint-history'",
                            (run_id,)).fetchone()[0]
        self.db.execute("INSERT OR REPLACE INTO steps VALUES (?,?,?,?,?,?)",
                        (run_id, "", f"checkpoint:{n + 1:06d}", "checkpoint-history", now, json.dumps(checkpoint)))
        self.db.execute("INSERT OR REPLACE INTO steps VALUES (?,?,?,?,?,?)",
                        (run_id, "", "checkpoint", "checkpoint", now, json.dumps(checkpoint)))

    def record_checkpoint(self, run_id: str, checkpoint: dict) -> None:
        with self.tx():
            self._record_checkpoint(run_id, checkpoint)

    def rollback_to_checkpoint(self, run_id: str) -> int:
        """Delete the rounds committed after the run's last checkpoint (their drive state was not kept), so
        the stored rounds describe exactly the checkpointed state; a resume runs them again. Returns how many."""
        cp = self.checkpoint(run_id)
        if cp is None or "round_id" not in cp:
            return 0
        with self.tx():
            ids = [r[0] for r in self.db.execute("SELECT id FROM rounds WHERE run_id=? AND id>?",
                                                 (run_id, cp["round_id"])).fetchall()]
            for rid in ids:
                self.db.execute("DELETE FROM cells WHERE round_id=?", (rid,))
                self.db.execute("DELETE FROM rounds WHERE id=?", (rid,))
            if ids:
                n = self.db.execute("SELECT COUNT(*) FROM steps WHERE run_id=? AND kind='rollback'",
                                    (run_id,)).fetchone()[0]
                self.db.execute("INSERT OR REPLACE INTO steps VALUES (?,?,?,?,?,?)",
                                (run_id, "", f"rollback:{n + 1:03d}", "rollback", time.time(),
                                 json.dumps({"rounds_removed": len(ids), "checkpoint": cp["file"],
                                             "reason": "committed after the simulated drive's last checkpoint"})))
        return len(ids)

    def checkpoint(self, run_id: str) -> dict | None:
        """The latest committed checkpoint of the run's target state, or None."""
        return self.step(run_id, "", "checkpoint")

    def checkpoints(self, run_id: str) -> list[dict]:
        rows = self.db.execute("SELECT data_json FROM steps WHERE run_id=? AND kind='checkpoint-history' "
                               "ORDER BY key", (run_id,)).fetchall()
        return [json.loads(r[0]) for r in rows]

    # deviations from the profile's spec -------------------------------------------------------------
    def record_deviation(self, run_id: str, test: str, deviation: Deviation) -> None:
        """Add a deviation to a test's list (test "" = run-wide); recording the same one twice keeps one."""
        with self.tx():
            row = self.db.execute("SELECT data_json FROM steps WHERE run_id=? AND test=? AND key='deviations'",
                                  (run_id, test)).fetchone()
            items = json.loads(row[0])["items"] if row else []
            if deviation.to_dict() not in items:
                items.append(deviation.to_dict())
            self.db.execute("INSERT OR REPLACE INTO steps VALUES (?,?,?,?,?,?)",
                            (run_id, test, "deviations", "deviations", time.time(), json.dumps({"items": items})))

    def deviations(self, run_id: str, test: str | None = None) -> dict[str, list[Deviation]]:
        """test -> its deviations ("" = run-wide); one test's only when `test` is given."""
        q = "SELECT test, data_json FROM steps WHERE run_id=? AND key='deviations'"
        args: list = [run_id]
        if test is not None:
            q += " AND test=?"
            args.append(test)
        return {r[0]: [Deviation.from_dict(d) for d in json.loads(r[1])["items"]]
                for r in self.db.execute(q, args).fetchall()}

    # drive failures (engines/drivefault.py) ------------------------------------------------------
    def record_drive_failure(self, run_id: str, failure: DriveFailure) -> None:
        """The evidence of a drive that failed I/O in `failure.test` (one record per test and drive)."""
        self.record_step(run_id, failure.test, f"drive-failed:{failure.drive}", "drive-failure", failure.to_dict())

    def drive_failures(self, run_id: str) -> list[DriveFailure]:
        """Every failed drive's evidence, in the order they failed."""
        from ..engines.drivefault import DriveFailure     # here: its module reads fio's output (engines.fiojson)

        rows = self.db.execute("SELECT data_json FROM steps WHERE run_id=? AND kind='drive-failure' ORDER BY at",
                               (run_id,)).fetchall()
        return [DriveFailure.from_dict(json.loads(r[0])) for r in rows]

    # rounds ---------------------------------------------------------------------------------
    def save_round(self, run_id: str, test: str, phase: str, kind: str, round_no: int, out: RoundOutput,
                   workloads: Iterable[dict], tracking: dict | None = None, steady: dict | None = None,
                   checkpoint: dict | None = None) -> int:
        """Store one round and its cells (and the target checkpoint taken after it) in a single transaction."""
        with self.tx():
            old = self.db.execute("SELECT id FROM rounds WHERE run_id=? AND test=? AND phase=? AND kind=? AND round=?",
                                  (run_id, test, phase, kind, round_no)).fetchone()
            if old is not None:   # a re-run of the same round replaces it, cells included
                self.db.execute("DELETE FROM cells WHERE round_id=?", (old[0],))
                self.db.execute("DELETE FROM rounds WHERE id=?", (old[0],))
            cur = self.db.execute(
                "INSERT INTO rounds (run_id, test, phase, kind, round, started, ended, gap_before_ms,"
                " gaps_inside_json, engine, fio_version, job_text, command_json, raw_output_z, stderr, logs_z,"
                " tracking_json, steady_json, device_idle_before_ms, device_idle_json)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (run_id, test, phase, kind, round_no, out.started_at, out.ended_at, out.gap_before_ms,
                 json.dumps(out.gaps_inside_ms), out.engine, out.fio_version, out.job_text,
                 json.dumps(out.command), zlib.compress(out.raw_output.encode(), 6), out.stderr[-20000:],
                 _z(out.logs) if out.logs else None, json.dumps(tracking or {}), json.dumps(steady or {}),
                 out.device_idle_before.ms if out.device_idle_before else None, json.dumps(_idle_json(out))))
            rid = cur.lastrowid
            for i, (cell, wl) in enumerate(zip(out.cells, workloads)):
                self.db.execute(
                    "INSERT INTO cells VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (rid, i, cell.name, json.dumps(wl), cell.iops, cell.read.iops, cell.write.iops,
                     cell.read.bw_bytes, cell.write.bw_bytes, cell.lat_mean_ns, cell.lat_max_ns,
                     cell.usr_cpu, cell.sys_cpu, _z(cell.to_dict())))
            if checkpoint is not None:   # after the round: the checkpoint covers it
                self._record_checkpoint(run_id, checkpoint)
            self.db.execute("UPDATE runs SET updated=? WHERE id=?", (time.time(), run_id))
        return rid

    def phases(self, run_id: str, test: str) -> list[str]:
        rows = self.db.execute("SELECT DISTINCT phase FROM rounds WHERE run_id=? AND test=? ORDER BY phase",
                               (run_id, test)).fetchall()
        return [r[0] for r in rows]

    def round_workloads(self, round_id: int) -> list[dict]:
        rows = self.db.execute("SELECT workload_json FROM cells WHERE round_id=? ORDER BY idx", (round_id,)).fetchall()
        return [json.loads(r[0]) for r in rows]

    def first_round_workloads(self, run_id: str, test: str) -> list[dict]:
        """The cells of a test's first measurement round (every phase), as stored."""
        rows = self.db.execute(
            "SELECT c.workload_json FROM cells c JOIN rounds r ON r.id=c.round_id WHERE r.run_id=? AND r.test=? "
            "AND r.kind='round' AND r.round=(SELECT MIN(round) FROM rounds WHERE run_id=? AND test=? AND kind='round') "
            "ORDER BY r.phase, c.idx", (run_id, test, run_id, test)).fetchall()
        return [json.loads(r[0]) for r in rows]

    def rounds(self, run_id: str, test: str, phase: str | None = None, kind: str = "round",
               with_cells: bool = True) -> list[RoundRecord]:
        from ..engines.results import DeviceIdle     # here: listing runs reads no round

        q = "SELECT * FROM rounds WHERE run_id=? AND test=? AND kind=?"
        args: list = [run_id, test, kind]
        if phase is not None:
            q += " AND phase=?"
            args.append(phase)
        rows = self.db.execute(q + " ORDER BY phase, round", args).fetchall()
        out = []
        for r in rows:
            rec = RoundRecord(id=r["id"], test=r["test"], phase=r["phase"], kind=r["kind"], round=r["round"],
                              started=r["started"], ended=r["ended"], gap_before_ms=r["gap_before_ms"],
                              engine=r["engine"], job_text=r["job_text"], command=json.loads(r["command_json"]),
                              tracking=json.loads(r["tracking_json"]), steady=json.loads(r["steady_json"]),
                              gaps_inside_ms=json.loads(r["gaps_inside_json"] or "[]"))
            idle = json.loads(r["device_idle_json"] or "{}")
            rec.device_idle_before = DeviceIdle(**idle["before"]) if idle.get("before") else None
            rec.device_idle_inside = [DeviceIdle(**d) for d in idle.get("inside", [])]
            rec.device_idle_note = idle.get("note", "" if idle else "not measured (stored before ssdpts measured it)")
            if with_cells:
                for c in self.db.execute("SELECT * FROM cells WHERE round_id=? ORDER BY idx", (r["id"],)):
                    rec.cells.append(cell_from_dict(_unz(c["result_z"])))
                    rec.workloads.append(json.loads(c["workload_json"]))
            out.append(rec)
        return out

    def raw_output(self, round_id: int) -> str:
        row = self.db.execute("SELECT raw_output_z FROM rounds WHERE id=?", (round_id,)).fetchone()
        return zlib.decompress(row[0]).decode() if row and row[0] else ""

    def logs(self, round_id: int) -> dict[str, str]:
        row = self.db.execute("SELECT logs_z FROM rounds WHERE id=?", (round_id,)).fetchone()
        return _unz(row[0]) if row and row[0] else {}

    def gaps(self, run_id: str) -> list[float]:
        rows = self.db.execute("SELECT gap_before_ms FROM rounds WHERE run_id=? AND gap_before_ms IS NOT NULL",
                               (run_id,)).fetchall()
        return [r[0] for r in rows]
