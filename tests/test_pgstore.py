"""PostgreSQL as a shared results store (issue 41 item 1, docs/shared-store.md), against a real PostgreSQL server
(Debian's package) in a throw-away cluster of this file's own (tests/pgserver.py), never a mock.

The lab fixture is the issue's Done-means: three benches (processes, each with its own results directory and
two simulated drives measured one after the other) run into one database, the server is stopped for 30 s while
each still has a drive to measure, and afterwards every round each bench committed is in the database once. The truth
is each bench's own SQLite (committed before any copy) and PostgreSQL's own catalog and rows, read with psql.
Eight benches started at once, a server that is slow (its tables held by another session) and one that stops
answering have tests of their own. Costs about 4 minutes on two idle cores (the runs, the 30 s outage).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import ssdpts
from pgserver import chown_to_postgres, pg_server, server_missing

pytestmark = [pytest.mark.no_end_report, pytest.mark.slow]

HERE = Path(__file__).resolve().parent
TINY = str(HERE / "profiles" / "tiny.toml")
PASSWORD = "s3cret-in-url"
OUTAGE_S = 30


def _skip_reason() -> str | None:
    if reason := server_missing():
        return reason
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install 'ssdpts[postgres]'; make test installs it)"
    return None


if _reason := _skip_reason():
    pytest.skip(f"shared store: {_reason}", allow_module_level=True)


@pytest.fixture(scope="module")
def pg():
    with pg_server(tcp=True) as server:
        server.add_database("lab", "bench", PASSWORD)
        yield server


def _local_rounds(results: Path, run_id: str) -> list[tuple]:
    db = sqlite3.connect(results / "ssdpts.db")
    try:
        return sorted(db.execute("SELECT test, phase, kind, round FROM rounds WHERE run_id=?", (run_id,)).fetchall())
    finally:
        db.close()


def _pg_rounds(pg, database: str, run_id: str) -> list[tuple]:
    out = pg.psql(f"SELECT test, phase, kind, round FROM rounds WHERE run_id='{run_id}'", database)
    return sorted((t, p, k, int(n)) for t, p, k, n in (line.split("|") for line in out.splitlines()))


def _run_ids(results: Path) -> list[str]:
    if not (results / "ssdpts.db").exists():
        return []
    db = sqlite3.connect(results / "ssdpts.db")
    try:
        return [r[0] for r in db.execute("SELECT id FROM runs ORDER BY created")]
    finally:
        db.close()


def _start_bench(url: str, local: Path, targets: list[str], stderr=subprocess.PIPE, **env) -> subprocess.Popen:
    """A bench: `ssdpts run` of the latency test (tiny profile) on simulated drives, one after the other, into the
    store at `url`, its own results in `local`; its copier copies every second."""
    env = {**os.environ, "SSDPTS_LOCAL_RESULTS": str(local), "SSDPTS_COPY_INTERVAL_S": "1", "SSDPTS_REPORT": "0",
           **env}
    return subprocess.Popen([sys.executable, "-m", "ssdpts", "run", *targets, "--sequential", "--profile", TINY,
                             "--tests", "latency", "--results", url, "-q"], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=stderr)


def _local_count(results: Path, sql: str) -> int:
    """A count from a bench's own store as it runs (0 before the store or its tables exist); read-only, so the
    test never makes the file the bench is about to make."""
    db_file = results / "ssdpts.db"
    if not db_file.exists():
        return 0
    try:
        db = sqlite3.connect(f"file:{db_file}?mode=ro", uri=True)
        try:
            return db.execute(sql).fetchone()[0]
        finally:
            db.close()
    except sqlite3.OperationalError:         # its tables are not made yet
        return 0


@pytest.fixture(scope="module")
def lab(pg, tmp_path_factory):
    """Three benches, each measuring two drives one after the other, into one database; the server stopped for
    30 s while every one of them still has a drive to measure.

    A simulated drive's run takes a fraction of a second, so a bench left to itself may be done before the
    slowest one has started. Each bench is therefore held (SIGSTOP, its run process only: its copier goes on)
    once it has stored a round of its first drive, and let go once the server is down."""
    base = tmp_path_factory.mktemp("lab")
    url = pg.url("bench", PASSWORD, "lab")
    benches = []
    for i, targets in enumerate((["sim:client", "sim:sata-tlc"], ["sim:client", "sim:enterprise"],
                                 ["sim:enterprise", "sim:sata-tlc"])):
        local = base / f"bench{i}"
        benches.append((local, _start_bench(url, local, targets, SSDPTS_COPY_WAIT_S="300")))
    held: set[int] = set()
    try:
        deadline = time.time() + 300
        while len(held) < len(benches):
            assert time.time() < deadline, "the benches did not store a round within 300 s"
            for i, (local, p) in enumerate(benches):
                if i not in held and _local_count(local, "SELECT count(*) FROM rounds") >= 1:
                    p.send_signal(signal.SIGSTOP)
                    held.add(i)
                    completed = _local_count(local, "SELECT count(*) FROM runs WHERE status='completed'")
                    assert p.poll() is None and completed < 2, f"bench{i} measured both drives before it was held"
            time.sleep(0.01)
        # the copiers, still running, copy each bench's run and a round of it before the server stops
        while int(pg.psql("SELECT count(DISTINCT run_id) FROM rounds", "lab") or 0) < len(benches):
            assert time.time() < deadline, "the held benches' rounds did not reach the database within 300 s"
            time.sleep(0.2)
        stopped = time.time()
        pg.stop()
        for _, p in benches:
            p.send_signal(signal.SIGCONT)
        time.sleep(OUTAGE_S)
        pg.start()
        started = time.time()
        outputs = [p.communicate(timeout=900) for _, p in benches]
    finally:
        for _, p in benches:
            if p.poll() is None:
                p.send_signal(signal.SIGCONT)
                p.kill()
    return {"url": url, "benches": [(local, p.returncode, out, err) for (local, p), (out, err) in
                                    zip(benches, outputs)], "stopped": stopped, "started": started}


def test_every_round_of_every_bench_is_in_the_database_once(pg, lab):
    runs = 0
    for local, rc, out, err in lab["benches"]:
        assert rc == 0, err
        for run_id in _run_ids(local):
            runs += 1
            here = _local_rounds(local, run_id)
            assert here, f"{run_id}: no rounds on the bench"
            assert _pg_rounds(pg, "lab", run_id) == here        # every one, and (a list, not a set) none twice
            assert pg.psql(f"SELECT status FROM runs WHERE id='{run_id}'", "lab").strip() == "completed"
    assert runs == 6
    assert pg.psql("SELECT count(*) FROM (SELECT 1 FROM rounds GROUP BY run_id, test, phase, kind, round "
                   "HAVING count(*) > 1) twice", "lab").strip() == "0"


def test_the_benches_measured_on_while_the_server_was_down_and_said_so_once(lab):
    during = 0
    for local, rc, out, err in lab["benches"]:
        db = sqlite3.connect(local / "ssdpts.db")
        during += db.execute("SELECT count(*) FROM rounds WHERE ended > ? AND ended < ?",
                             (lab["stopped"], lab["started"])).fetchone()[0]
        db.close()
        said = [line for line in err.splitlines() if "the run goes on" in line]
        assert len(said) == 1, err
        assert "PostgreSQL at postgresql://bench:***@127.0.0.1" in said[0], said
        assert any("is back" in line for line in err.splitlines()), err
    assert during > 0, "no round was committed on any bench while the server was down"


def test_show_json_is_the_same_from_the_bench_and_from_postgresql(lab):
    for local, *_ in lab["benches"]:
        for run_id in _run_ids(local):
            from_bench = ssdpts("show", run_id, "--json", "--results", str(local)).stdout
            assert ssdpts("show", run_id, "--json", "--results", lab["url"]).stdout == from_bench


def _files(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def _without_generation_time(name: str, data: bytes) -> bytes:
    """Outputs minus the moment they were made (the only thing allowed to differ between two stores): the
    HTML footer's date and the date matplotlib writes into an SVG."""
    import re

    if name.endswith(".html"):
        data = re.sub(rb"(Generated by ssdpts \S+ on ).*?( from|\.</footer>)", rb"\1\2", data)
    if name.endswith(".svg"):
        data = re.sub(rb"<dc:date>[^<]*</dc:date>", b"", data)
    return data


def test_every_reading_command_gives_the_same_bytes_from_both_stores(pg, lab, tmp_path):
    local = lab["benches"][0][0]
    run_a, run_b = _run_ids(local)
    # a database holding exactly this bench's runs, filled by `ssdpts push` (list then lists the same runs)
    pg.add_database("bench0", "bench", PASSWORD)
    only = pg.url("bench", PASSWORD, "bench0")
    pushed = ssdpts("push", run_a, run_b, "--to", only, "--results", str(local)).stdout
    assert f"{run_a}: {len(_local_rounds(local, run_a))} round(s) copied, 0 already in" in pushed
    assert PASSWORD not in pushed
    for args in (["list"], ["list", "--json"], ["show", run_a], ["show", run_b, "--json"], ["check", run_a],
                 ["check", run_b, "--json"]):
        from_bench = ssdpts(*args, "--results", str(local), check=False)
        from_pg = ssdpts(*args, "--results", only, check=False)
        assert (from_pg.returncode, from_pg.stdout) == (from_bench.returncode, from_bench.stdout), args
    from_env = ssdpts("list", env={**os.environ, "SSDPTS_RESULTS": only}).stdout     # $SSDPTS_RESULTS names it too
    assert from_env == ssdpts("list", "--results", str(local)).stdout
    for name, args in (("report", ["report", run_a]), ("compare", ["compare", run_a, run_b]),
                       *((f"export-{f}", ["export", run_b, "--format", f])
                         for f in ("json", "csv", "tidy-csv", "text"))):    # html is report's, tidy-json tidy-csv's
        ssdpts(*args, "--out", str(tmp_path / name / "bench"), "--results", str(local))
        ssdpts(*args, "--out", str(tmp_path / name / "pg"), "--results", only)
        bench, from_pg = _files(tmp_path / name / "bench"), _files(tmp_path / name / "pg")
        assert sorted(from_pg) == sorted(bench), name
        for f in bench:
            assert _without_generation_time(f, from_pg[f]) == _without_generation_time(f, bench[f]), (name, f)


def test_a_password_in_the_url_is_stored_and_shown_nowhere(pg, lab):
    for local, rc, out, err in lab["benches"]:
        assert PASSWORD not in out + err
        for p in local.rglob("*"):
            if p.is_file():
                assert PASSWORD.encode() not in p.read_bytes(), p
    dump = pg.as_postgres("pg_dump", "-h", str(pg.socket_dir), "-p", str(pg.port), "lab").stdout
    assert "completed" in dump and PASSWORD not in dump


def test_pushing_again_copies_nothing_and_two_benches_pushing_at_once_store_it_once(pg, lab):
    import psycopg

    local = lab["benches"][1][0]
    run_id = _run_ids(local)[0]
    here = _local_rounds(local, run_id)
    pg.add_database("twice", "bench", PASSWORD)
    url = pg.url("bench", PASSWORD, "twice")
    ssdpts("push", run_id, "--to", url, "--results", str(local))         # the tables, and a first copy
    pg.psql("DELETE FROM cells; DELETE FROM rounds; DELETE FROM steps; DELETE FROM tests; DELETE FROM runs", "twice")
    # both pushes wait on a lock held here, then go at once
    with psycopg.connect(url, autocommit=False) as hold:
        hold.execute("LOCK TABLE runs IN SHARE MODE")
        pushes = [subprocess.Popen([sys.executable, "-m", "ssdpts", "push", run_id, "--to", url, "--results",
                                    str(local)], text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                  for _ in range(2)]
        deadline = time.time() + 60
        while time.time() < deadline and int(pg.psql("SELECT count(*) FROM pg_stat_activity WHERE application_name="
                                                     "'ssdpts' AND wait_event_type='Lock'", "twice")) < 2:
            time.sleep(0.1)
        hold.rollback()
    results = [p.communicate(timeout=120) for p in pushes]
    assert [p.returncode for p in pushes] == [0, 0], results
    copied = sorted(int(out.split(":")[1].split()[0]) for out, _ in results)
    assert copied == [0, len(here)], results                 # one bench copied it all, the other nothing
    assert _pg_rounds(pg, "twice", run_id) == here
    again = ssdpts("push", run_id, "--to", url, "--results", str(local)).stdout
    assert f"0 round(s) copied, {len(here)} already in" in again
    assert _pg_rounds(pg, "twice", run_id) == here


def test_a_full_server_disk_loses_nothing_and_takes_the_run_once_it_has_room(lab, tmp_path):
    """A server of its own whose ssdpts tables lie on a tmpfs filled but for two pages (a tablespace): the push
    fails whole, in one line; with room again the same push stores the run."""
    from ssdpts.store.location import pg_url
    from ssdpts.store.pg import PgDatabase

    local = lab["benches"][2][0]
    run_id = _run_ids(local)[0]
    here = _local_rounds(local, run_id)
    base = Path(tempfile.mkdtemp(prefix="ssdpts-pgfull-"))
    base.chmod(0o755)
    space = base / "tiny"
    space.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "ssdpts-test", str(space)], check=True)
    try:
        chown_to_postgres(space)
        with pg_server(base, tcp=True) as pg:       # stopped before its tablespace goes
            pg.psql(f"CREATE TABLESPACE tiny LOCATION '{space}'")
            pg.psql("CREATE ROLE small LOGIN PASSWORD 'small'")
            pg.psql("GRANT CREATE ON TABLESPACE tiny TO small")
            pg.psql("ALTER ROLE small SET default_tablespace = tiny")
            pg.add_database("fulldisk", "small")
            url = pg.url("small", "small", "fulldisk")
            with PgDatabase(pg_url(url)) as db:      # the (empty) tables fit
                db.set_up()
            assert pg.psql("SELECT count(*) FROM pg_tables WHERE tablename='rounds' AND tablespace='tiny'",
                           "fulldisk").strip() == "1"
            ballast = space / "ballast"
            with open(ballast, "wb") as f:
                try:
                    while True:
                        f.write(b"\0" * 65536)
                        f.flush()
                except OSError:
                    pass
            os.truncate(ballast, max(0, ballast.stat().st_size - 2 * 8192))
            full = ssdpts("push", run_id, "--to", url, "--results", str(local), check=False)
            assert full.returncode == 75, full.stderr
            (line,) = full.stderr.strip().splitlines()
            assert "is full" in line and "No space left on device" in line and "free space on its server" in line
            assert pg.psql("SELECT count(*) FROM runs", "fulldisk").strip() == "0", "a failed copy left a part"
            assert _local_rounds(local, run_id) == here            # nothing lost on the bench
            ballast.unlink()                                      # room again
            ssdpts("push", run_id, "--to", url, "--results", str(local))
            assert _pg_rounds(pg, "fulldisk", run_id) == here
    finally:
        subprocess.run(["umount", "-l", str(space)], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


def test_a_wrong_password_an_unreachable_server_and_a_newer_schema_are_one_line_each(pg, lab, tmp_path):
    local = lab["benches"][1][0]
    run_id = _run_ids(local)[0]
    wrong = pg.url("bench", "not-the-password", "lab")
    cases = {
        "refused the password of user 'bench'": (wrong, 2),
        "cannot reach PostgreSQL at postgresql://bench:***@127.0.0.1:1/lab": (
            f"postgresql://bench:{PASSWORD}@127.0.0.1:1/lab", 75),
    }
    pg.add_database("newer", "bench", PASSWORD)
    newer = pg.url("bench", PASSWORD, "newer")
    ssdpts("push", run_id, "--to", newer, "--results", str(local))
    pg.psql("UPDATE meta SET value='99' WHERE key='schema_version'", "newer")
    cases["was written by a newer ssdpts (schema 99, this one knows 3); upgrade ssdpts"] = (newer, 2)
    for says, (url, code) in cases.items():
        for args in (["list", "--results", url], ["show", run_id, "--results", url],
                     ["push", run_id, "--to", url, "--results", str(local)]):
            p = ssdpts(*args, check=False)
            assert p.returncode == code, (args, p.stderr)
            (line,) = p.stderr.strip().splitlines()
            assert says in line and "Traceback" not in p.stderr, (args, line)
            assert "not-the-password" not in line and PASSWORD not in line
    # a run refuses to start on a store it could never copy to: nothing is created on the bench
    bench = tmp_path / "bench"
    for url in (wrong, newer):
        p = ssdpts("run", "sim:client", "--profile", TINY, "--tests", "latency", "--results", url, "-q",
                   env={**os.environ, "SSDPTS_LOCAL_RESULTS": str(bench)}, check=False)
        assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert _run_ids(bench) == []


def test_the_schema_is_sqlites_and_older_schemas_migrate(pg, tmp_path):
    """The same tables and columns, in the same order, as a SQLite results database of this version; a database
    made by schema 1 (rounds without device idle, runs without their owner) gains the columns, rows kept."""
    from ssdpts.store import Store

    sqlite_db = Store(tmp_path / "ssdpts.db")
    tables = {t: [r[1] for r in sqlite_db.db.execute(f"PRAGMA table_info({t})")]
              for t in ("meta", "runs", "tests", "steps", "rounds", "cells")}
    pg.add_database("schema", "bench", PASSWORD)
    pg.add_database("schema1", "bench", PASSWORD)
    # schema 1 as PostgreSQL would have held it: the runs and rounds tables of that version, one row each
    pg.psql("""
        SET ROLE bench;
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO meta VALUES ('schema_version', '1');
        CREATE TABLE runs (id TEXT PRIMARY KEY, created DOUBLE PRECISION NOT NULL, updated DOUBLE PRECISION NOT NULL,
            status TEXT NOT NULL, target_spec TEXT NOT NULL, target_json TEXT NOT NULL, host_json TEXT NOT NULL,
            profile_name TEXT NOT NULL, profile_json TEXT NOT NULL, tests_json TEXT NOT NULL,
            options_json TEXT NOT NULL, engine TEXT NOT NULL, message TEXT NOT NULL DEFAULT '');
        INSERT INTO runs VALUES ('r1', 1, 2, 'completed', 'sim:client', '{}', '{}', 'quick', '{}', '[]', '{}', 'fio');
        CREATE TABLE rounds (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, run_id TEXT NOT NULL,
            test TEXT NOT NULL, phase TEXT NOT NULL, kind TEXT NOT NULL, round BIGINT NOT NULL,
            started DOUBLE PRECISION NOT NULL, ended DOUBLE PRECISION NOT NULL, gap_before_ms DOUBLE PRECISION,
            engine TEXT NOT NULL, fio_version TEXT NOT NULL DEFAULT '', job_text TEXT NOT NULL,
            command_json TEXT NOT NULL, raw_output_z BYTEA, stderr TEXT NOT NULL DEFAULT '', logs_z BYTEA,
            tracking_json TEXT NOT NULL DEFAULT '{}', steady_json TEXT NOT NULL DEFAULT '{}',
            UNIQUE (run_id, test, phase, kind, round));
        INSERT INTO rounds (run_id, test, phase, kind, round, started, ended, gap_before_ms, engine, job_text,
            command_json) VALUES ('r1', 'iops', '', 'round', 1, 0, 1, 2.5, 'fio', '', '[]');
    """, "schema1")
    from ssdpts.store.location import pg_url
    from ssdpts.store.pg import PgDatabase

    for database in ("schema", "schema1"):
        with PgDatabase(pg_url(pg.url("bench", PASSWORD, database))) as db:
            db.set_up()
        for table, columns in tables.items():
            got = pg.psql(f"SELECT column_name FROM information_schema.columns WHERE table_name='{table}' "
                          "ORDER BY ordinal_position", database).split()
            if database == "schema":
                assert got == columns, table
            else:                     # columns added later come last, as SQLite's ALTER TABLE puts them
                assert sorted(got) == sorted(columns), table
        assert pg.psql("SELECT value FROM meta WHERE key='schema_version'", database).strip() == "3"
    assert pg.psql("SELECT gap_before_ms, device_idle_json, gaps_inside_json FROM rounds", "schema1").strip() == \
        "2.5|{}|[]"
    assert pg.psql("SELECT status, owner_json FROM runs", "schema1").strip() == "completed|{}"


def _cell_counts(pg, database: str, run_id: str) -> list[tuple]:
    out = pg.psql(f"SELECT r.test, r.phase, r.kind, r.round, count(c.idx) FROM rounds r LEFT JOIN cells c ON "
                  f"c.round_id = r.id WHERE r.run_id='{run_id}' GROUP BY r.id, r.test, r.phase, r.kind, r.round",
                  database)
    return sorted((t, p, k, int(n), int(c)) for t, p, k, n, c in (line.split("|") for line in out.splitlines()))


def _local_cell_counts(results: Path, run_id: str) -> list[tuple]:
    db = sqlite3.connect(results / "ssdpts.db")
    try:
        return sorted(db.execute("SELECT r.test, r.phase, r.kind, r.round, count(c.idx) FROM rounds r LEFT JOIN cells "
                                 "c ON c.round_id = r.id WHERE r.run_id=? GROUP BY r.id", (run_id,)).fetchall())
    finally:
        db.close()


def _server_log_errors(pg, since: int) -> list[str]:
    """The ERROR, FATAL and deadlock lines the server logged after byte `since` of its log."""
    with open(pg.socket_dir / "server.log", "rb") as f:
        f.seek(since)
        text = f.read().decode(errors="replace")
    return [line for line in text.splitlines() if any(w in line for w in ("ERROR:", "FATAL:", "PANIC:", "deadlock"))]


def _children_cpu_s() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def test_eight_benches_started_at_once_store_every_round_once(pg, tmp_path):
    """Eight benches (processes, each with its own results directory and simulated drive) started together into
    one new database: they race to make its tables and copy at the same time. Truth: each bench's own SQLite
    (rounds and their cells) against PostgreSQL's rows read with psql, and the server's own log (no error, no
    deadlock, no unique-constraint failure)."""
    pg.add_database("eight", "bench", PASSWORD)
    url = pg.url("bench", PASSWORD, "eight")
    log_from = (pg.socket_dir / "server.log").stat().st_size
    began, cpu_before = time.monotonic(), _children_cpu_s()
    benches = [(tmp_path / f"bench{i}", _start_bench(url, tmp_path / f"bench{i}",
                                                     ["sim:client" if i % 2 else "sim:enterprise"]))
               for i in range(8)]
    try:
        outputs = [p.communicate(timeout=600) for _, p in benches]
    finally:
        for _, p in benches:
            if p.poll() is None:
                p.kill()
    print(f"eight benches: {time.monotonic() - began:.1f} s wall, {_children_cpu_s() - cpu_before:.1f} s CPU of "
          "their processes (the copiers' too: each run waits for its own)")
    run_ids = []
    for (local, p), (out, err) in zip(benches, outputs):
        assert p.returncode == 0 and err == "", err          # not a word: no "away", "slow" or "not copied"
        (run_id,) = _run_ids(local)
        assert out.strip() == run_id
        run_ids.append(run_id)
        here = _local_rounds(local, run_id)
        assert here, f"{run_id}: no rounds on the bench"
        assert _pg_rounds(pg, "eight", run_id) == here                       # every one, none twice
        assert _cell_counts(pg, "eight", run_id) == _local_cell_counts(local, run_id)
        assert pg.psql(f"SELECT status FROM runs WHERE id='{run_id}'", "eight").strip() == "completed"
    assert len(set(run_ids)) == 8
    assert sorted(pg.psql("SELECT id FROM runs", "eight").split()) == sorted(run_ids)     # none missing, no other
    assert int(pg.psql("SELECT count(*) FROM rounds", "eight")) == sum(len(_local_rounds(local, r))
                                                                      for (local, _), r in zip(benches, run_ids))
    assert pg.psql("SELECT value FROM meta", "eight").split() == ["3"]
    assert _server_log_errors(pg, log_from) == []


def test_a_slow_server_neither_stops_nor_slows_the_run(pg, tmp_path):
    """Another session holds every ssdpts table (LOCK TABLE ... ACCESS EXCLUSIVE, as a VACUUM FULL or an ALTER
    TABLE does) from before a run starts until after it ended, well over LOCK_TIMEOUT_MS: the run ends on time
    (its wall time against the same run on the server answering, generous slack for a loaded machine; the old
    copier waited 120 s at the start and 30 s at the end), says the server is slow once and, at its end, that the
    copier goes on in the background; once the lock is released the copier, on its own, puts every round there."""
    import psycopg

    from ssdpts.store.pg import LOCK_TIMEOUT_MS

    pg.add_database("slow", "bench", PASSWORD)
    url = pg.url("bench", PASSWORD, "slow")
    began = time.monotonic()
    answering = _start_bench(url, tmp_path / "answering", ["sim:client"])       # it also makes the tables
    _, err = answering.communicate(timeout=300)
    answering_s = time.monotonic() - began
    assert answering.returncode == 0 and err == "", err
    local, stderr = tmp_path / "slow", tmp_path / "slow.stderr"
    with psycopg.connect(url, autocommit=False) as hold:
        hold.execute("LOCK TABLE meta, runs, tests, steps, rounds, cells IN ACCESS EXCLUSIVE MODE")
        locked = time.monotonic()
        with open(stderr, "w") as err_file:       # the copier outlives the run: its lines go here too
            bench = _start_bench(url, local, ["sim:client"], stderr=err_file)
        try:
            bench.wait(timeout=answering_s + LOCK_TIMEOUT_MS / 1000 + 120)
        except subprocess.TimeoutExpired:
            bench.kill()
            pytest.fail("the run waited on the slow server")
        slow_s = time.monotonic() - locked
        print(f"answering server: {answering_s:.1f} s, slow server: {slow_s:.1f} s")
        assert bench.returncode == 0, stderr.read_text()
        (run_id,) = _run_ids(local)
        lines = stderr.read_text().splitlines()
        assert slow_s < answering_s + LOCK_TIMEOUT_MS / 1000 + 30, (answering_s, slow_s)
        slow = [line for line in lines if "is too slow" in line]
        assert len(slow) == 1 and "the run goes on" in slow[0], lines
        left = [line for line in lines if "are not in" in line]
        assert len(left) == 1 and f"'ssdpts push {run_id} --to URL'" in left[0], lines
        assert len(lines) == 2 and PASSWORD not in "".join(lines), lines
        copier_pid = int(left[0].split("(process ")[1].split(")")[0])
        assert _alive(copier_pid), "the copier did not go on in the background"
        assert time.monotonic() - locked > LOCK_TIMEOUT_MS / 1000      # the lock outlived the copier's bound
        hold.rollback()                                      # the server answers again
    here = _local_rounds(local, run_id)
    deadline = time.time() + 120
    while time.time() < deadline and _alive(copier_pid):
        time.sleep(0.2)
    assert not _alive(copier_pid), "the copier did not finish once the server answered"
    assert _pg_rounds(pg, "slow", run_id) == here
    assert _cell_counts(pg, "slow", run_id) == _local_cell_counts(local, run_id)
    lines = stderr.read_text().splitlines()
    assert len(lines) == 3 and "is back" in lines[2], lines


def _alive(pid: int) -> bool:
    """The process runs (a zombie, ended but not yet reaped by its new parent, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def test_benches_making_the_tables_at_the_same_moment_make_them_once(pg):
    """Eight connections (eight benches' start checks) make the tables of one new database at the same moment (a
    barrier once all are connected): the advisory lock in set_up lets one make them; without it, their CREATE
    TABLE IF NOT EXISTS race on PostgreSQL's catalog (pg_type's unique key) and all but one fail. Truth: the
    server's catalog and its own log."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from ssdpts.store.location import pg_url
    from ssdpts.store.pg import LOCK_TIMEOUT_MS, PgDatabase

    pg.add_database("together", "bench", PASSWORD)
    log_from = (pg.socket_dir / "server.log").stat().st_size
    databases = [PgDatabase(pg_url(pg.url("bench", PASSWORD, "together")), lock_timeout_ms=LOCK_TIMEOUT_MS)
                 for _ in range(8)]
    barrier = threading.Barrier(len(databases))

    def set_up(db):
        barrier.wait()
        db.set_up()
    try:
        with ThreadPoolExecutor(len(databases)) as pool:
            errors = [str(f.exception()) for f in [pool.submit(set_up, db) for db in databases] if f.exception()]
    finally:
        for db in databases:
            db.close()
    assert errors == []
    assert pg.psql("SELECT count(*) FROM pg_tables WHERE schemaname='public'", "together").strip() == "6"
    assert pg.psql("SELECT key, value FROM meta", "together").split() == ["schema_version|3"]
    assert _server_log_errors(pg, log_from) == []


def _server_pids(pg) -> list[int]:
    """The server's postmaster, then its children (backends, checkpointer, ...)."""
    postmaster = int((pg.datadir / "postmaster.pid").read_text().split()[0])
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == postmaster:
            children.append(int(stat.parent.name))
    return [postmaster, *children]


def test_a_server_that_stops_answering_mid_copy_delays_the_runs_end_a_bounded_time(pg, tmp_path):
    """The server is frozen (SIGSTOP on the postmaster and every backend) while a run measures, after its copier
    has connected: the kernel still acknowledges the copier's packets and keepalives, so no timeout of the driver
    or the server ends its copy. The run's command waits for the copier's answer $SSDPTS_COPY_WAIT_S (3 s here) at
    most, says so in one line and ends; thawed, the server takes every round from the copier, on its own."""
    pg.add_database("frozen", "bench", PASSWORD)
    url = pg.url("bench", PASSWORD, "frozen")
    local, stderr = tmp_path / "bench", tmp_path / "bench.stderr"
    with open(stderr, "w") as err_file:       # the copier outlives the run: its lines go here too
        bench = _start_bench(url, local, ["sim:client", "sim:enterprise"], stderr=err_file, SSDPTS_COPY_WAIT_S="3")
    # the run is held (SIGSTOP on its own process, not its copier's) at its first stored round, so that a fast or
    # a starved machine alike freezes the server while the run still measures
    deadline = time.time() + 120
    while _local_count(local, "SELECT count(*) FROM rounds") < 1:
        assert bench.poll() is None and time.time() < deadline, stderr.read_text()
        time.sleep(0.02)
    os.kill(bench.pid, signal.SIGSTOP)
    try:
        while not (pg.psql("SELECT count(*) FROM pg_tables WHERE tablename='rounds'", "frozen").strip() == "1" and
                   int(pg.psql("SELECT count(*) FROM rounds", "frozen")) > 0):     # the copier is connected, copying
            assert bench.poll() is None and time.time() < deadline, stderr.read_text()
            time.sleep(0.2)
        frozen = _server_pids(pg)
        for pid in frozen:
            os.kill(pid, signal.SIGSTOP)
    finally:
        os.kill(bench.pid, signal.SIGCONT)
    try:
        assert bench.poll() is None, "the run ended before the server was frozen"
        frozen_at = time.monotonic()
        try:
            bench.wait(timeout=300)
        except subprocess.TimeoutExpired:
            bench.kill()
            pytest.fail("the run waited on the frozen server")
        lines = stderr.read_text().splitlines()
        assert bench.returncode == 0, lines
        (line,) = lines
        run_ids = _run_ids(local)
        assert "(no answer from the database in 3 s)" in line and f"'ssdpts push {' '.join(run_ids)} --to URL'" \
            in line, line
        copier_pid = int(line.split("(process ")[1].split(")")[0])
        assert _alive(copier_pid)
        print(f"the run ended {time.monotonic() - frozen_at:.1f} s after the server froze")
    finally:
        for pid in reversed(frozen):
            os.kill(pid, signal.SIGCONT)
    deadline = time.time() + 120
    while time.time() < deadline and _alive(copier_pid):
        time.sleep(0.2)
    assert not _alive(copier_pid), "the copier did not finish once the server answered"
    for run_id in run_ids:
        assert _pg_rounds(pg, "frozen", run_id) == _local_rounds(local, run_id)
    assert len(stderr.read_text().splitlines()) == 1
