"""Where `--results` (or $SSDPTS_RESULTS) points: a results directory (SQLite) or a PostgreSQL URL, and the
URL as it may be shown (its password never printed, logged or stored). Imports no driver: every command parses
its --results with it, and only a PostgreSQL store needs psycopg."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from ..errors import SsdptsError

URL_SCHEMES = ("postgresql", "postgres")
# A bench that writes to PostgreSQL keeps its own copy (rounds committed here first, resume, logs, reports) in
# this directory: $SSDPTS_LOCAL_RESULTS, else ./results.
LOCAL_RESULTS_ENV = "SSDPTS_LOCAL_RESULTS"


@dataclass(frozen=True)
class PgUrl:
    """A PostgreSQL store's URL: `url` is handed to the driver only; `shown` is what any message says."""

    url: str
    shown: str

    def __str__(self) -> str:       # an f-string of the record never prints the password
        return self.shown

    __repr__ = __str__


def is_url(value: str | os.PathLike | None) -> bool:
    return isinstance(value, str) and value.split(":", 1)[0].lower() in URL_SCHEMES and "://" in value


def redacted(url: str) -> str:
    """The URL with its password (in the user part or a `password=` parameter) replaced by ***."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        user, host = netloc.rsplit("@", 1)
        if ":" in user:
            netloc = user.split(":", 1)[0] + ":***@" + host
    query = "&".join(("password=***" if q.lower().startswith("password=") else q)
                     for q in parts.query.split("&")) if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def pg_url(value: str) -> PgUrl:
    parts = urlsplit(value)
    if not parts.path.strip("/"):
        raise SsdptsError(f"{redacted(value)} names no database; give postgresql://USER@HOST[:PORT]/DATABASE")
    return PgUrl(value, redacted(value))


def results_location(value: str | None) -> Path | PgUrl:
    """--results, else $SSDPTS_RESULTS, else ./results: a directory, or a PostgreSQL store's URL."""
    given = value if value else os.environ.get("SSDPTS_RESULTS") or "results"
    return pg_url(given) if is_url(given) else Path(given)


def local_results_dir() -> Path:
    """The bench's own results directory beside a PostgreSQL store."""
    return Path(os.environ.get(LOCAL_RESULTS_ENV) or "results")
