"""Files and numbers a user hands to a command, read once, checked, and refused in one line.

Every input file other than a profile (claims, bandwidth logs, health snapshots, hosts files, simulator
presets) is read through `read_text` / `read_json` / `read_toml`: a missing file, a directory, binary or
non-UTF-8 content, a syntax error or a NaN/infinity becomes an SsdptsError naming the file and the fix.
"""

from __future__ import annotations

import json
import math
import os
import stat
import tomllib
from pathlib import Path
from typing import Any

import click

from .errors import SsdptsError


def refuse_unless_a_file(p: Path, what: str, mode: int) -> None:
    """One line for an input that is not a regular file: a device or a FIFO read never ends (/dev/zero,
    /dev/urandom) or waits for a writer for ever."""
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise SsdptsError(f"{what} {p} is a directory; give the file inside it")
    kinds = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
             (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"))
    kind = next((name for test, name in kinds if test(mode)), "a special file")
    raise SsdptsError(f"{what} {p} is {kind}, not a regular file; save it to a file and give that")


def read_text(path: str | Path, what: str) -> str:
    """The text of a UTF-8 file; `what` names it in the error ("claims file", "bandwidth log", ...). Only a
    regular file is read: anything else is refused before it is opened."""
    p = Path(path)
    try:
        refuse_unless_a_file(p, what, os.stat(p).st_mode)
        # O_NONBLOCK: should the name be a FIFO by now, the open returns at once (and is refused, unread)
        with os.fdopen(os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC), "rb") as f:
            refuse_unless_a_file(p, what, os.fstat(f.fileno()).st_mode)
            data = f.read()
    except FileNotFoundError:
        raise SsdptsError(f"{what} {p} does not exist; check the path") from None
    except IsADirectoryError:
        raise SsdptsError(f"{what} {p} is a directory; give the file inside it") from None
    except PermissionError:
        raise SsdptsError(f"{what} {p} cannot be read (permission denied); run as a user who may read it") from None
    except OSError as e:
        raise SsdptsError(f"{what} {p} cannot be read ({e.strerror}); check the path") from None
    if b"\0" in data:
        raise SsdptsError(f"{what} {p} is a binary file, not text; give the {what} itself")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SsdptsError(f"{what} {p} is not UTF-8 text (byte {e.start}); save it as UTF-8") from None


def _non_finite(doc: Any, where: str = "") -> str | None:
    """The dotted key of the first NaN or infinity in a parsed document, or None."""
    if isinstance(doc, float) and not math.isfinite(doc):
        return where or "(top level)"
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for k, v in items:
        found = _non_finite(v, f"{where}.{k}" if where else str(k))
        if found:
            return found
    return None


def _finite_document(doc: Any, p: Path, what: str) -> Any:
    key = _non_finite(doc)
    if key:
        raise SsdptsError(f"{what} {p}: {key} is not a finite number (NaN or infinity); give a real value")
    return doc


def read_json(path: str | Path, what: str, hint: str = "") -> Any:
    """A JSON document without NaN/Infinity (Python's json accepts them; no tool of ours can use them)."""
    p = Path(path)
    text = read_text(p, what)

    def refuse(name: str):
        raise SsdptsError(f"{what} {p}: {name} is not a finite number; give a real value")

    try:
        return json.loads(text, parse_constant=refuse)
    except json.JSONDecodeError as e:
        raise SsdptsError(f"{what} {p} is not valid JSON ({e}){'; ' + hint if hint else ''}") from None


def read_toml(path: str | Path, what: str) -> dict:
    """A TOML document without nan/inf values (TOML allows them)."""
    p = Path(path)
    try:
        doc = tomllib.loads(read_text(p, what))
    except tomllib.TOMLDecodeError as e:
        raise SsdptsError(f"{what} {p} is not valid TOML ({e})") from None
    return _finite_document(doc, p, what)


def finite(value: float, what: str) -> float:
    if not math.isfinite(value):
        raise SsdptsError(f"{what} must be a finite number, not {value}")
    return value


class FiniteFloat(click.ParamType):
    """A float option that refuses NaN and infinity (Python's float() takes 'nan', 'inf', '1e999'); a positive
    one (a rating, a period) refuses zero and negative numbers too."""

    name = "number"

    def __init__(self, positive: bool = False):
        self.positive = positive

    def convert(self, value, param, ctx):
        if isinstance(value, float) and math.isfinite(value) and (value > 0 or not self.positive):
            return value
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number", param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        if self.positive and number <= 0:
            self.fail(f"{value!r} is not a positive number; give a rating above zero", param, ctx)
        return number


FINITE = FiniteFloat()
POSITIVE = FiniteFloat(positive=True)


def _unwritable(directory: Path) -> str | None:
    """Why files cannot be made in `directory` (which exists), or None."""
    try:
        if os.statvfs(directory).f_flag & os.ST_RDONLY:
            return "is on a read-only file system"
    except OSError as e:
        return f"cannot be read ({e.strerror})"
    return None if os.access(directory, os.W_OK | os.X_OK) else "is not writable by this user"


def output_dir(path: str | Path, what: str) -> Path:
    """A directory a command writes into, checked before any work: an existing directory it may write, or one
    it can make (with its missing parents) below a writable directory. Nothing is created here."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise SsdptsError(f"{what} {p} is a file, not a directory; give a directory (it is made if missing)")
    existing = next(a for a in (p, *p.absolute().parents) if a.exists())
    if not existing.is_dir():
        raise SsdptsError(f"{what} {p}: {existing} is a file, so the directory cannot be made; give another path")
    why = _unwritable(existing)
    if why:
        raise SsdptsError(f"{what} {p}: {existing} {why}; give a directory you may write")
    return p


def output_file(path: str | Path, what: str) -> Path:
    """A file a command writes (replaced if it exists), checked before any work: not a directory or a device,
    in an existing directory it may write."""
    p = Path(path)
    if p.is_dir():
        raise SsdptsError(f"{what} {p} is a directory; give a file name, e.g. {p / 'out.xml'}")
    if p.exists() and not p.is_file():
        raise SsdptsError(f"{what} {p} exists and is not a regular file; give a file name")
    if not p.parent.is_dir():
        raise SsdptsError(f"{what} {p}: directory {p.parent} does not exist; create it or give another path")
    why = _unwritable(p.parent)
    if why:
        raise SsdptsError(f"{what} {p}: directory {p.parent} {why}; give a path you may write")
    return p


def one_line(text: str, option: str, fix: str) -> str:
    """An operator's text for `option`, stripped; a control character (a pasted newline, an escape) is refused."""
    bad = next((c for c in text if ord(c) < 32 or ord(c) == 127), None)
    if bad is not None:
        raise SsdptsError(f"{option} {text!r} holds a control character ({bad!r}); {fix}")
    return text.strip()
