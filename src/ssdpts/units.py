"""Parsing and formatting of sizes and durations. Binary units (KiB, MiB) unless said otherwise."""

from __future__ import annotations

import re

from .errors import SsdptsError

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?b?)\s*$", re.I)
_POW = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}


def parse_size(text: str | int, what: str = "size") -> int:
    """'4k' -> 4096, '1.5G' -> 1610612736, 512 -> 512. fio's convention: k = KiB."""
    if isinstance(text, int):
        return text
    m = _SIZE.match(str(text))
    if not m:
        raise SsdptsError(f"bad {what} {text!r}: use a number with an optional k/M/G/T suffix, e.g. 4k or 8G")
    return int(float(m.group(1)) * 1024 ** _POW[m.group(2).lower()])


_DUR = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$", re.I)
_DUR_MULT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}


def parse_duration(text: str | int | float, what: str = "duration") -> float:
    """'500ms' -> 0.5, '1m' -> 60.0, 5 -> 5.0 (seconds)."""
    if isinstance(text, (int, float)):
        return float(text)
    m = _DUR.match(str(text))
    if not m:
        raise SsdptsError(f"bad {what} {text!r}: use a number with ms/s/m/h/d, e.g. 500ms or 1m")
    unit = m.group(2).lower() if m.group(2) else None
    return float(m.group(1)) * _DUR_MULT[unit]


def bs_label(n: int) -> str:
    """Block-size labels the way SNIA tables write them: 512 -> '0.5K', 4096 -> '4K', 1 MiB -> '1024K'."""
    return f"{n / 1024:g}K"





def format_duration(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    if h:
        return f"{h}h{m:02d}m"
    if m:
        return f"{m}m{s:02d}s"
    return f"{s}s"
