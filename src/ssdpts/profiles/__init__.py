"""Profiles: TOML data files describing how long and how hard each test runs.

Shipped profiles live next to this file; a user profile file works the same way. Each profile may
`extends = "other"` and override any key. Validation errors name the file, the key and what is allowed.
"""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Any

from ..errors import SsdptsError
from ..steady import RULES
from ..units import parse_duration, parse_size
from ..workload import DATA_PATTERNS

HERE = Path(__file__).parent

_POS_INT = ("a positive integer", lambda v: isinstance(v, int) and not isinstance(v, bool) and v > 0)
_PCT = ("a percentage 0..100", lambda v: isinstance(v, (int, float)) and 0 <= v <= 100)
_AR = ("a percentage 1..100", lambda v: isinstance(v, (int, float)) and 0 < v <= 100)
_FRACTION = ("a fraction between 0 and 1, e.g. 0.20", lambda v: isinstance(v, (int, float)) and 0 < v < 1)
_BOOL = ("true or false", lambda v: isinstance(v, bool))
_STR = ("a string", lambda v: isinstance(v, str))


def _dur(v) -> bool:
    try:
        return parse_duration(v) > 0
    except SsdptsError:
        return False


def _size(v) -> bool:
    try:
        return parse_size(v) > 0
    except SsdptsError:
        return False


_DURATION = ("a duration like \"1m\", \"500ms\" or seconds", _dur)
_SIZE = ("a size like \"4k\" or \"1024k\"", _size)
_SIZES = ("a list of sizes like [\"4k\", \"128k\"]", lambda v: isinstance(v, list) and v and all(_size(x) for x in v))
_PCTS = ("a list of read percentages like [100, 65, 0]",
         lambda v: isinstance(v, list) and v and all(isinstance(x, int) and 0 <= x <= 100 for x in v))
_INTS = ("a list of positive integers", lambda v: isinstance(v, list) and v and all(isinstance(x, int) and x > 0 for x in v))
_TRACK = ("a list of [block size, read %] pairs like [[\"4k\", 0]]",
          lambda v: isinstance(v, list) and v and all(isinstance(x, list) and len(x) == 2 and _size(x[0])
                                                      and isinstance(x[1], int) for x in v))
_SEED = ("a non-negative integer below 2^32 (fio randseed)",
         lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**32)
_MULT = ("a positive number (times the active range)", lambda v: isinstance(v, (int, float)) and v > 0)


def _choice(*options):
    return (f"one of {', '.join(map(str, options))}", lambda v: v in options)


def _list_of(what: str, ok):
    return (f"a list of {what}", lambda v: isinstance(v, list) and bool(v) and all(ok(x) for x in v))


_DURATIONS = _list_of('durations like "5s"', _dur)
_SWEEP = {"thread_counts": _INTS, "queue_depths": _INTS, "precondition_time": _DURATION,
          "latency_limit": _DURATION, "read_pct": _PCT, "prewrite_time": _DURATION,
          "operating_prewrite_time": _DURATION, "operating_measure_time": _DURATION}


COMMON_TEST_KEYS = {"threads": _POS_INT, "iodepth": _POS_INT, "cell_runtime": _DURATION, "active_range": _AR,
                    "max_rounds": _POS_INT, "data_pattern": _choice(*DATA_PATTERNS)}

SCHEMA: dict[str, dict[str, tuple[str, Any]]] = {
    "profile": {"name": _STR, "description": _STR, "spec": _STR, "extends": _STR,
                "tests": ("a list of test names", lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v))},
    "defaults": {"threads": _POS_INT, "iodepth": _POS_INT, "active_range": _AR, "data_pattern": _choice(*DATA_PATTERNS),
                 "write_cache": _choice("enabled", "disabled", "unchanged"), "purge": _STR, "seed": _SEED},
    "steady_state": {"rule": _choice(*RULES), "window": _POS_INT, "max_range": _FRACTION, "max_slope": _FRACTION,
                     "max_rounds": _POS_INT, "inclusive": _BOOL},
    "wipc": {"block_size": _SIZE, "multiple": _MULT, "threads": _POS_INT, "iodepth": _POS_INT},
    "tests.iops": {**COMMON_TEST_KEYS, "mixes": _PCTS, "block_sizes": _SIZES, "tracking": _TRACK},
    "tests.throughput": {**COMMON_TEST_KEYS, "block_sizes": _SIZES,
                         "tracking": _list_of("directions, e.g. [\"read\", \"write\"]",
                                              lambda v: v in ("read", "write"))},
    "tests.latency": {**COMMON_TEST_KEYS, "mixes": _PCTS, "block_sizes": _SIZES, "tracking": _TRACK},
    "tests.wsat": {**COMMON_TEST_KEYS, "round_time": _DURATION, "time_limit": _DURATION, "capacity_multiple": _MULT,
                   "workloads": _list_of("WSAT workloads (rnd4k-write, oltp, vod, metadata, cbw)",
                                         lambda v: v in ("rnd4k-write", "oltp", "vod", "metadata", "cbw"))},
    "tests.hir": {**COMMON_TEST_KEYS, "precondition_time": _DURATION, "burst": _DURATION, "wait_states": _DURATIONS, "repetitions": _POS_INT},
    "tests.xsr": {**COMMON_TEST_KEYS, "interval": _DURATION,
                  "group_times": ("three durations, e.g. [\"8h\", \"6h\", \"8h\"]",
                                  lambda v: isinstance(v, list) and len(v) == 3 and all(_dur(x) for x in v))},
    "tests.dirth": {**COMMON_TEST_KEYS, **_SWEEP, "block_size": _SIZE},
    "tests.cbw": {**COMMON_TEST_KEYS, **_SWEEP},
    "tests.endurance": {**COMMON_TEST_KEYS, "duration": _DURATION, "poll": _DURATION, "workload": _STR, "purge_first": _BOOL,
                        "rated_tbw": ("a positive number of TB (10^12 bytes)", lambda v: _MULT[1](v)),
                        "dwpd": ("a positive number of drive writes per day", lambda v: _MULT[1](v)),
                        "warranty_years": ("a positive number of years", lambda v: _MULT[1](v)),
                        "workloads": ("a table of NAME = {rw = \"randwrite\", bs = \"4k\", read_pct = 0}",
                                      lambda v: isinstance(v, dict) and all(
                                          isinstance(w, dict) and w.get("rw") in ("read", "write", "randread", "randwrite",
                                                                                  "randrw", "rw")
                                          and _size(w.get("bs", "4k")) and set(w) <= {"rw", "bs", "read_pct"}
                                          for w in v.values()))},
    # reviewer studies (docs/studies.md)
    "tests.slc-cache": {**COMMON_TEST_KEYS, "block_size": _SIZE, "interval": _DURATION, "time_limit": _DURATION,
                        "capacity_percent": _AR, "min_drop": _FRACTION, "min_points": _POS_INT},
    "tests.bs-sweep": {**COMMON_TEST_KEYS, "block_sizes": _SIZES, "fresh_fill": _BOOL, "used_block_size": _SIZE,
                       "used_multiple": _MULT,
                       "workloads": _list_of("of read, randread, write, randwrite",
                                             lambda v: v in ("read", "randread", "write", "randwrite")),
                       "states": _list_of("of fresh, used", lambda v: v in ("fresh", "used"))},
    "tests.rw-over-time": {**COMMON_TEST_KEYS, "block_sizes": _SIZES, "duration": _DURATION, "interval": _DURATION},
    "tests.op-study": {**COMMON_TEST_KEYS, "block_size": _SIZE, "precondition_multiple": _MULT, "wipc_first": _BOOL,
                       "active_ranges": _list_of("percentages 1..100, e.g. [100, 75, 50, 25]", _AR[1])},
    "tests.variants": {**COMMON_TEST_KEYS, "block_size": _SIZE, "rw": _choice("read", "write", "randread", "randwrite",
                                                                            "randrw", "rw"),
                       "read_pct": _PCT, "precondition": _BOOL, "precondition_multiple": _MULT,
                       "cache_size": ('"auto" or a size like "8g"', lambda v: v == "auto" or _size(v)),
                       "variants": _list_of("of random, compress50, zero, dsync, ws-small, ws-large, buffered",
                                            lambda v: v in ("random", "compress50", "zero", "dsync", "ws-small",
                                                            "ws-large", "buffered"))},
    "tests.fresh-peak": {**COMMON_TEST_KEYS, "block_size": _SIZE,
                         "workloads": _list_of("of randread, randwrite, read, write",
                                               lambda v: v in ("randread", "randwrite", "read", "write"))},
}


def shipped() -> dict[str, Path]:
    return {p.stem: p for p in sorted(HERE.glob("*.toml"))}


def _merge(base: dict, over: dict) -> dict:
    out = copy.deepcopy(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else copy.deepcopy(v)
    return out


def _read(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise SsdptsError(f"profile file {path} not found; shipped profiles: {', '.join(shipped())}") from None
    except tomllib.TOMLDecodeError as e:
        raise SsdptsError(f"profile {path}: not valid TOML ({e})") from None


def _validate(data: dict, path: Path) -> None:
    for section, body in data.items():
        if section == "tests":
            if not isinstance(body, dict):
                raise SsdptsError(f"profile {path}: [tests] must be a table of [tests.NAME] sections")
            items = [(f"tests.{k}", v) for k, v in body.items()]
        else:
            items = [(section, body)]
        for name, table in items:
            schema = SCHEMA.get(name)
            if schema is None:
                if name.startswith("tests."):
                    schema = {**COMMON_TEST_KEYS}  # tests added by other modules validate their own keys
                    if not isinstance(table, dict):
                        raise SsdptsError(f"profile {path}: [{name}] must be a table")
                    continue
                allowed = ", ".join(sorted(k for k in SCHEMA if not k.startswith("tests.")) + ["tests.NAME"])
                raise SsdptsError(f"profile {path}: unknown section [{name}]; allowed: {allowed}")
            if not isinstance(table, dict):
                raise SsdptsError(f"profile {path}: [{name}] must be a table")
            for key, value in table.items():
                if key not in schema:
                    raise SsdptsError(f"profile {path}: unknown key {name}.{key}; allowed: {', '.join(sorted(schema))}")
                what, ok = schema[key]
                if not ok(value):
                    raise SsdptsError(f"profile {path}: {name}.{key} = {value!r} is invalid; expected {what}")


def load_profile(name_or_path: str) -> dict:
    """A validated, fully merged profile dict. `name_or_path` is a shipped name or a .toml path."""
    path = shipped().get(name_or_path)
    if path is None:
        path = Path(name_or_path)
        if not path.exists():
            raise SsdptsError(f"unknown profile {name_or_path!r}; shipped profiles: {', '.join(shipped())}, "
                              "or give a path to a .toml file")
    data = _read(path)
    _validate(data, path)
    own_name = data.get("profile", {}).get("name") or path.stem
    parent = data.get("profile", {}).get("extends")
    if parent:
        if parent == path.stem:
            raise SsdptsError(f"profile {path}: profile.extends names itself")
        if parent not in shipped() and not Path(parent).is_absolute():
            parent = str(path.parent / parent)   # a relative path is relative to this profile file
        data = _merge(load_profile(parent), data)
    data.setdefault("profile", {})["name"] = own_name
    data["profile"]["source"] = str(path)
    return data


def test_settings(profile: dict, test: str) -> dict:
    """A test's settings: [defaults] overlaid by [tests.TEST], with steady-state settings under 'steady'."""
    out = dict(profile.get("defaults", {}))
    out.update(profile.get("tests", {}).get(test, {}))
    out["steady"] = dict(profile.get("steady_state", {}))
    if "max_rounds" in out:
        out["steady"]["max_rounds"] = out["max_rounds"]
    out["wipc"] = dict(profile.get("wipc", {}))
    return out
