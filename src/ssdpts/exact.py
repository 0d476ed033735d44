"""Exact integers from tool JSON (smartctl, nvme-cli): shared by the health parsers and the identify parsers,
which sit on both sides of the targets/health boundary."""

from __future__ import annotations

import re
from typing import Any


def to_int(v: Any) -> int | None:
    """A counter as an exact int: JSON ints (any size), decimal/hex strings, {hi, lo} pairs, whole floats."""
    if v is None or isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return int(v) if v == v and v not in (float("inf"), float("-inf")) else None
    if isinstance(v, str):
        s = v.strip().replace(",", "").replace("_", "")
        m = re.match(r"^(0x[0-9a-fA-F]+|\d+)", s)
        if not m:
            return None
        return int(m.group(1), 16) if m.group(1).lower().startswith("0x") else int(m.group(1))
    if isinstance(v, dict):
        if "hi" in v and "lo" in v:        # OCP / nvme-cli plugin 128-bit halves
            hi, lo = to_int(v["hi"]), to_int(v["lo"])
            return None if hi is None or lo is None else (hi << 64) | lo
        if "value" in v:
            return to_int(v["value"])
    return None
