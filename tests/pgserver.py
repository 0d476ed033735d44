"""A throw-away PostgreSQL server of a test's own (Debian's package): initdb as the `postgres` user into a private
directory, its socket there too (so it never meets another server on this machine), optionally a TCP listener on
127.0.0.1 at a free port with password (SCRAM) log-in; stopped and removed afterwards, also on failure.

Used by tests/apps.py (the pgbench capture) and the shared-store tests (tests/test_pgstore.py)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

PG_USER = "postgres"
# Debian installs the server binaries outside PATH; pg_ctl/initdb may also be linked into /usr/local/bin.
PG_BIN_DIRS = sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)
# PostgreSQL refuses to run as root: its tools run as its own user (Popen's user/group, no runuser in between).
AS_POSTGRES = {"user": PG_USER, "group": PG_USER, "extra_groups": []}


def pg_tool(name: str) -> str | None:
    for d in PG_BIN_DIRS:
        if (d / name).is_file():
            return str(d / name)
    return shutil.which(name)


def server_missing() -> str | None:
    """Why a PostgreSQL server cannot be started here (one line), or None."""
    if os.geteuid() != 0:
        return "needs root (the server runs as the postgres user)"
    if not all(pg_tool(t) for t in ("initdb", "pg_ctl", "psql")):
        return "PostgreSQL is not installed (apt-get install postgresql)"
    try:
        import pwd

        pwd.getpwnam(PG_USER)
    except KeyError:
        return f"no '{PG_USER}' user (it comes with the postgresql package)"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def chown_to_postgres(path: Path) -> None:
    import pwd

    pg = pwd.getpwnam(PG_USER)
    os.chown(path, pg.pw_uid, pg.pw_gid)


@dataclass
class PgServer:
    datadir: Path
    socket_dir: Path
    port: int
    options: str = ""

    def as_postgres(self, tool: str, *args: str, timeout: float = 600, check: bool = True):
        return subprocess.run([pg_tool(tool) or tool, *args], timeout=timeout, capture_output=True, text=True,
                              check=check, cwd=self.socket_dir, **AS_POSTGRES)

    def start(self) -> None:
        self.as_postgres("pg_ctl", "start", "-w", "-D", str(self.datadir), "-o",
                         f"-k {self.socket_dir} -p {self.port} {self.options}", "-l", str(self.socket_dir / "server.log"))

    def stop(self, mode: str = "fast") -> None:
        self.as_postgres("pg_ctl", "stop", "-m", mode, "-w", "-D", str(self.datadir), timeout=120, check=False)

    def psql(self, sql: str, database: str = "postgres") -> str:
        """`sql` run by the server's superuser over its socket; the output unaligned, without headers."""
        return self.as_postgres("psql", "-h", str(self.socket_dir), "-p", str(self.port), "-d", database, "-v",
                                "ON_ERROR_STOP=1", "-AtXq", "-c", sql, timeout=120).stdout

    def url(self, user: str = "bench", password: str | None = None, database: str = "ssdpts") -> str:
        return f"postgresql://{user}{':' + password if password else ''}@127.0.0.1:{self.port}/{database}"

    def add_database(self, name: str, owner: str = "bench", password: str = "") -> None:
        """A log-in role (once) and a database it owns."""
        if not self.psql(f"SELECT 1 FROM pg_roles WHERE rolname='{owner}'"):
            self.psql(f"CREATE ROLE {owner} LOGIN PASSWORD '{password}'")
        self.psql(f"CREATE DATABASE {name} OWNER {owner}")


@contextmanager
def pg_server(base: Path | None = None, port: int | None = None, options: str = "", tcp: bool = False):
    """A private cluster: data in `base`/pgdata (a new directory when None), socket in a directory of its own;
    with `tcp` also 127.0.0.1:`port` (a free one when None), where every user logs in by password (SCRAM)."""
    own_base = base is None
    base = Path(tempfile.mkdtemp(prefix="ssdpts-pg-")) if base is None else base
    if own_base:
        base.chmod(0o755)
    datadir = base / "pgdata"
    datadir.mkdir()
    chown_to_postgres(datadir)
    socket_dir = Path(tempfile.mkdtemp(prefix="ssdpts-pgsock-"))
    chown_to_postgres(socket_dir)
    port = port or free_port()
    listen = "-c listen_addresses=127.0.0.1" if tcp else "-c listen_addresses=''"
    server = PgServer(datadir, socket_dir, port, f"{listen} {options}")
    started = False
    try:
        server.as_postgres("initdb", "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C",
                           "-D", str(datadir))
        server.start()
        started = True
        yield server
    finally:
        if started:
            server.stop()
        shutil.rmtree(socket_dir, ignore_errors=True)
        if own_base:
            shutil.rmtree(base, ignore_errors=True)
