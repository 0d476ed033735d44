"""Parsing and formatting of sizes and durations. Binary units (KiB, MiB) unless said otherwise."""

from __future__ import annotations

import math
import re
from fractions import Fraction

from .errors import SsdptsError

MAX_SIZE = 2**62                        # bytes: fio's sizes are 64-bit; no drive or file comes near
SECTOR = 512        # bytes: the smallest block a disk or fio addresses, and the smallest target

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?b?)\s*$", re.I)
_POW = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}


def parse_size(text: str | int, what: str = "size") -> int:
    """'4k' -> 4096, '1.5G' -> 1610612736, 512 -> 512. fio's convention: k = KiB."""
    if isinstance(text, int):
        return text
    m = _SIZE.match(str(text))
    if not m:
        raise SsdptsError(f"bad {what} {text!r}: use a number with an optional k/M/G/T suffix, e.g. 4k or 8G")
    return whole_bytes(m.group(1), 1024 ** _POW[m.group(2).lower()], text, what)


def whole_bytes(number: str, scale: int, text: str | int, what: str) -> int:
    """`number` × `scale` exactly (no float rounding), refused unless it is a whole number of bytes."""
    exact = Fraction(number) * scale
    if not exact <= MAX_SIZE:
        raise SsdptsError(f"{what} {text!r} is too large: at most 2^62 bytes (4 EiB); give a real size")
    if exact.denominator != 1:
        raise SsdptsError(f"bad {what} {text!r}: {float(exact):.15g} bytes is not a whole number of bytes; give whole "
                          "bytes, e.g. 1536 or 1.5k")
    return int(exact)


def target_size(text: str | None, what: str = "--size") -> int | None:
    """A target's size (--size): whole bytes, at least one sector."""
    if text is None:
        return None
    n = parse_size(text, what)
    if n < SECTOR:
        raise SsdptsError(f"{what} {text!r} is {n} bytes, less than one {SECTOR}-byte sector; give the target's "
                          f"size, e.g. {what} 8G")
    return n


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





_CAPACITY = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(?:([kmgtp])(i?)b?)?\s*$", re.I)


def parse_capacity(text: str, what: str = "--capacity") -> int:
    """A drive's capacity the way vendors write it: '3.84T' and '3.84TB' are 3.84 x 10^12 bytes (the marketing
    TB), '3.5TiB' is 3.5 x 2^40; a bare number is bytes. Unlike parse_size (fio's convention), T is decimal here:
    a drive sold as 3.84 TB holds 3.84 x 10^12 bytes, not 3.84 TiB."""
    m = _CAPACITY.match(str(text))
    if not m:
        raise SsdptsError(f"bad {what} {text!r}: use a number with a decimal (G, T = 10^9, 10^12 bytes) or binary "
                          "(GiB, TiB) unit, e.g. 3.84T or 3.5TiB")
    prefix, binary = (m.group(2) or "").lower(), m.group(3)
    if float(m.group(1)) <= 0:
        raise SsdptsError(f"{what} must be greater than zero (got {text!r}); e.g. {what} 3.84T")
    return whole_bytes(m.group(1), (1024 if binary else 1000) ** _POW[prefix], text, what)


MIN_RATE = 1.0          # bytes/s: below it a plan's phase times are not finite numbers (2^62 B / 5e-318 B/s)

# case matters for the unit only: B is bytes, b is bits
_RATE = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*([kKmMgGtT]?)(i?)([Bb])(?:/s|ps)\s*$")


def parse_rate(text: str, what: str = "--write-speed") -> float:
    """Bytes per second: '2GB/s' = 2 x 10^9 (vendors' unit), '1.5GiB/s' = 1.5 x 2^30, '500MB/s'. A lowercase b
    is bits (Gb/s) and is refused rather than guessed."""
    m = _RATE.match(str(text))
    example = f"e.g. {what} 2GB/s (decimal, as vendors quote it) or 1.8GiB/s"
    if not m:
        raise SsdptsError(f"bad {what} {text!r}: use bytes per second with a unit, {example}")
    number, prefix, binary, unit = float(m.group(1)), m.group(2).lower(), m.group(3), m.group(4)
    if unit == "b":
        raise SsdptsError(f"bad {what} {text!r}: a lowercase b is bits per second; give bytes, {example}")
    if number <= 0:
        raise SsdptsError(f"{what} must be greater than zero (got {text!r}); {example}")
    rate = number * (1024 if binary else 1000) ** _POW[prefix]
    if not MIN_RATE <= rate < math.inf:
        raise SsdptsError(f"{what} {text!r} is out of range: give at least 1 B/s, {example}")
    return rate


def format_rate(bytes_per_s: float) -> str:
    """Decimal units, as vendors quote speeds: 2e9 -> '2 GB/s'."""
    for unit, scale in (("GB/s", 1e9), ("MB/s", 1e6), ("kB/s", 1e3)):
        if bytes_per_s >= scale:
            return f"{bytes_per_s / scale:,.4g} {unit}"
    return f"{bytes_per_s:,.4g} B/s"


def format_long_duration(seconds: float) -> str:
    """Durations of minutes to weeks, to the minute above an hour: '7 d 07 h 35 min', '4 h 05 min',
    '20 min 05 s', '20 min', '45 s'."""
    seconds = int(round(seconds))
    if seconds >= 3600:
        minutes = int(round(seconds / 60))
        d, rem = divmod(minutes, 24 * 60)
        h, m = divmod(rem, 60)
        return f"{d} d {h:02d} h {m:02d} min" if d else f"{h} h {m:02d} min"
    m, s = divmod(seconds, 60)
    return (f"{m} min {s:02d} s" if s else f"{m} min") if m else f"{s} s"


def format_duration(seconds: float) -> str:
    """Compact: '45s', '20m00s', '4h05m'; a day or more reads in days: '7 d 07 h 35 min', not '175h35m'."""
    if seconds >= 86400:
        return format_long_duration(seconds)
    seconds = int(round(seconds))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    if h:
        return f"{h}h{m:02d}m"
    if m:
        return f"{m}m{s:02d}s"
    return f"{s}s"


def format_capacity(n: int) -> str:
    """Both unit systems, so a marketing TB is never mistaken for a TiB: '3.84 TB (3.49 TiB)'."""
    for (dec, dscale), (binary, bscale) in ((("TB", 1e12), ("TiB", 2**40)), (("GB", 1e9), ("GiB", 2**30)),
                                            (("MB", 1e6), ("MiB", 2**20))):
        if n >= dscale:
            return f"{n / dscale:,.4g} {dec} ({n / bscale:,.3g} {binary})"
    return f"{n:,} B"


def format_or_dash(value: float | None, fmt: str = ",.0f") -> str:
    """`value` in format `fmt`, or "–" where there is no value (not measured, not available)."""
    return format(value, fmt) if value is not None else "–"
