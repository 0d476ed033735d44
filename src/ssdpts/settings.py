"""Settings: what a profile key may hold, declared once, and a test's effective settings.

Each test package declares its own keys (`TestSpec.settings`); the keys every test accepts and the
profile's other sections are declared here. `ssdpts.profiles` validates a profile against these
declarations before anything is created or written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .errors import SsdptsError
from .steady import RULES as STEADY_RULES
from .units import parse_duration, parse_size
from .workload.spec import DATA_PATTERNS


@dataclass(frozen=True)
class Setting:
    """One profile key: what it may hold (as the error message says it), and the check."""

    what: str
    ok: Callable[[Any], bool]

    def check(self, value: Any) -> bool:
        try:
            return bool(self.ok(value))
        except (TypeError, ValueError, SsdptsError):
            return False


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def duration_ok(v) -> bool:
    return parse_duration(v) > 0


def size_ok(v) -> bool:
    return parse_size(v) > 0


POS_INT = Setting("a positive integer", lambda v: _is_int(v) and v > 0)
NON_NEG_INT = Setting("an integer >= 0", lambda v: _is_int(v) and v >= 0)
PCT = Setting("a percentage 0..100", lambda v: _is_num(v) and 0 <= v <= 100)
ACTIVE_RANGE = Setting("a percentage 1..100", lambda v: _is_num(v) and 0 < v <= 100)
FRACTION = Setting("a fraction between 0 and 1, e.g. 0.20", lambda v: _is_num(v) and 0 < v < 1)
BOOL = Setting("true or false", lambda v: isinstance(v, bool))
STR = Setting("a string", lambda v: isinstance(v, str))
DURATION = Setting('a duration greater than zero like "1m", "500ms" or seconds', duration_ok)
SIZE = Setting('a size greater than zero like "4k" or "1024k"', size_ok)
SIZES = Setting('a list of sizes like ["4k", "128k"]', lambda v: isinstance(v, list) and bool(v)
                and all(size_ok(x) for x in v))
PCTS = Setting("a list of read percentages like [100, 65, 0]", lambda v: isinstance(v, list) and bool(v)
               and all(_is_int(x) and 0 <= x <= 100 for x in v))
INTS = Setting("a list of positive integers", lambda v: isinstance(v, list) and bool(v)
               and all(_is_int(x) and x > 0 for x in v))
TRACK = Setting('a list of [block size, read %] pairs like [["4k", 0]]', lambda v: isinstance(v, list) and bool(v)
                and all(isinstance(x, list) and len(x) == 2 and size_ok(x[0]) and _is_int(x[1]) for x in v))
MULTIPLE = Setting("a positive number (times the capacity)", lambda v: _is_num(v) and v > 0)
POSITIVE = Setting("a positive number", lambda v: _is_num(v) and v > 0)
WINDOW = Setting("an integer >= 2 (rounds in the measurement window)", lambda v: _is_int(v) and v >= 2)


def choice(*options) -> Setting:
    return Setting(f"one of {', '.join(map(str, options))}", lambda v: v in options)


def list_of(what: str, ok: Callable[[Any], bool]) -> Setting:
    return Setting(f"a list of {what}", lambda v: isinstance(v, list) and bool(v) and all(ok(x) for x in v))


DURATIONS = list_of('durations like "5s"', duration_ok)

# Keys every test accepts ([defaults] and any [tests.NAME]).
COMMON_TEST_KEYS: dict[str, Setting] = {
    "threads": POS_INT, "iodepth": POS_INT, "cell_runtime": DURATION, "active_range": ACTIVE_RANGE,
    "max_rounds": POS_INT, "data_pattern": choice(*DATA_PATTERNS),
}

# The profile's sections other than [tests.NAME].
SECTIONS: dict[str, dict[str, Setting]] = {
    "profile": {"name": STR, "description": STR, "spec": STR, "extends": STR,
                "tests": Setting("a list of test names", lambda v: isinstance(v, list)
                                 and all(isinstance(x, str) for x in v))},
    "defaults": {"threads": POS_INT, "iodepth": POS_INT, "active_range": ACTIVE_RANGE,
                 "data_pattern": choice(*DATA_PATTERNS), "write_cache": choice("enabled", "disabled", "unchanged"),
                 "purge": STR,
                 "seed": Setting("a non-negative integer below 2^32 (fio randseed)",
                                 lambda v: _is_int(v) and 0 <= v < 2**32)},
    "steady_state": {"rule": choice(*STEADY_RULES), "window": WINDOW, "max_range": FRACTION, "max_slope": FRACTION,
                     "max_rounds": POS_INT, "inclusive": BOOL},
    "wipc": {"block_size": SIZE, "multiple": MULTIPLE, "threads": POS_INT, "iodepth": POS_INT},
}


def test_settings(profile: dict, test: str) -> dict:
    """A test's settings: [defaults] overlaid by [tests.TEST], with steady-state settings under 'steady'."""
    out = dict(profile.get("defaults", {}))
    out.update(profile.get("tests", {}).get(test, {}))
    out["steady"] = dict(profile.get("steady_state", {}))
    if "max_rounds" in out:
        out["steady"]["max_rounds"] = out["max_rounds"]
    out["wipc"] = dict(profile.get("wipc", {}))
    return out
