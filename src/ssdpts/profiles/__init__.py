"""Profiles: TOML data files describing how long and how hard each test runs.

Shipped profiles live next to this file; a user profile file works the same way. Each profile may
`extends = "other"` and override any key. Validation errors name the file, the key and what is allowed.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from ..errors import SsdptsError
from ..inputs import read_toml
from ..pts.registry import DEFAULT_TESTS, checked_names, tests as registered_tests
from ..settings import SECTIONS, Key, Setting, explain, rounds_are_steady_states, run_settings

HERE = Path(__file__).parent


def schema() -> dict[str, dict[str, Key | Setting]]:
    """Every section a profile may have and its keys: the fixed sections, and [tests.NAME] per registered test."""
    return {**SECTIONS, **{f"tests.{name}": spec.all_settings for name, spec in registered_tests().items()}}


def shipped() -> dict[str, Path]:
    return {p.stem: p for p in sorted(HERE.glob("*.toml"))}


def _merge(base: dict, over: dict) -> dict:
    out = copy.deepcopy(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else copy.deepcopy(v)
    return out


def _read(path: Path) -> dict:
    """The TOML of a profile file; one line for anything that is not a readable UTF-8 TOML file."""
    if not path.exists():
        raise SsdptsError(f"profile file {path} not found; shipped profiles: {', '.join(shipped())}")
    return read_toml(path, "profile")


def _validate(data: dict, path: Path) -> None:
    """Every section, key and value against the declarations; the first problem is one line naming all three."""
    full = schema()
    tests = sorted(registered_tests())
    for section, body in data.items():
        if section == "tests":
            if not isinstance(body, dict):
                raise SsdptsError(f"profile {path}: [tests] must be a table of [tests.NAME] sections")
            items = [(f"tests.{k}", v) for k, v in body.items()]
        else:
            items = [(section, body)]
        for name, table in items:
            keys = full.get(name)
            if keys is None:
                if name.startswith("tests."):
                    raise SsdptsError(f"profile {path}: unknown test [{name}]; tests: {', '.join(tests)}")
                allowed = ", ".join(sorted(SECTIONS) + ["tests.NAME"])
                raise SsdptsError(f"profile {path}: unknown section [{name}]; allowed: {allowed}")
            if not isinstance(table, dict):
                raise SsdptsError(f"profile {path}: [{name}] must be a table")
            for key, value in table.items():
                if key not in keys:
                    raise SsdptsError(f"profile {path}: unknown key {name}.{key}; allowed: {', '.join(sorted(keys))}")
                if not keys[key].check(value):
                    raise SsdptsError(f"profile {path}: {name}.{key} = {value!r} is invalid; expected {keys[key].what}")
    names = (data.get("profile") or {}).get("tests")
    if names is not None:
        checked_names(names, f"profile {path}: profile.tests")


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:                 # a name too long for the file system names no file
        return False


def _locate(name_or_path: str, relative_to: Path | None = None) -> Path:
    """A shipped profile's file, else the path (relative to the extending profile's folder when given)."""
    path = shipped().get(name_or_path)
    if path is not None:
        return path
    path = Path(name_or_path)
    if relative_to is not None and not path.is_absolute():
        path = relative_to.parent / path
    if not _exists(path):
        raise SsdptsError(f"unknown profile {name_or_path!r}; shipped profiles: {', '.join(shipped())}, "
                          "or give a path to a .toml file")
    return path


def _load(path: Path, chain: tuple[Path, ...]) -> dict:
    """The merged profile at `path`; `chain` holds the files extending it (a file met twice is a cycle)."""
    here = path.resolve()
    if here in chain:
        cycle = " -> ".join(str(p) for p in (*chain[chain.index(here):], here))
        raise SsdptsError(f"profile {path}: profile.extends forms a cycle ({cycle}); one of them must not extend")
    data = _read(path)
    _validate(data, path)
    own_name = data.get("profile", {}).get("name") or path.stem
    parent = data.get("profile", {}).get("extends")
    if parent:
        data = _merge(_without_inherited_rounds(_load(_locate(parent, relative_to=path), (*chain, here)), data), data)
    data.setdefault("profile", {})["name"] = own_name
    data["profile"]["source"] = str(path)
    return data


def _without_inherited_rounds(inherited: dict, own: dict) -> dict:
    """`inherited` less its tests' own max_rounds when the extending file `own` sets [steady_state] max_rounds
    and not that test's: the nearest file's word wins. Otherwise quick's latency limit (25) outranked a child's
    [steady_state] max_rounds = 6 in silence (this project's own test profiles repeated the key per test four
    times to get what they wrote). A key of the same file still wins over its [steady_state] (the test's own is
    the more specific), and a test whose max_rounds means something else (wsat's intervals) keeps it."""
    if "max_rounds" not in (own.get("steady_state") or {}):
        return inherited
    tests = registered_tests()
    for test, keys in (inherited.get("tests") or {}).items():   # a fresh dict from _load: changed in place
        if "max_rounds" in keys and test in tests and rounds_are_steady_states(tests[test].settings) \
                and "max_rounds" not in ((own.get("tests") or {}).get(test) or {}):
            del keys["max_rounds"]
    return inherited


def profile_tests(profile: dict) -> list[str]:
    """The tests a loaded profile runs when --tests names none."""
    return list(profile.get("profile", {}).get("tests") or DEFAULT_TESTS)


def load_profile(name_or_path: str) -> dict:
    """A validated, fully merged profile dict. `name_or_path` is a shipped name or a .toml path. Every test's
    settings are built from it once here, so keys that contradict each other (max_rounds below the window)
    are refused when the profile is read, whatever the command."""
    data = _load(_locate(name_or_path), ())
    run_settings(data, {name: spec.settings for name, spec in registered_tests().items()})
    return data


def with_test_keys(base: dict, test: str, values: dict, *, name: str, extends: str, source: str) -> dict:
    """The loaded profile `base` (named `extends`) with keys of [tests.TEST] set from a command's options
    (None: keep the profile's), merged and validated as a file that extends it would be, without writing one."""
    child = {"profile": {"name": name, "extends": extends, "tests": [test]},
             "tests": {test: {k: v for k, v in values.items() if v is not None}}}
    _validate(child, Path(source))
    data = _merge(base, child)
    data["profile"]["source"] = source
    run_settings(data, {n: spec.settings for n, spec in registered_tests().items()})
    return data


def explained() -> str:
    """Every section and key a profile may hold, as declared (`ssdpts profiles --explain`)."""
    lines = []
    for section, keys in schema().items():
        lines += explain(section, keys) + [""]
    return "\n".join(lines).rstrip()
