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
from ..pts.registry import tests as registered_tests
from ..settings import SECTIONS, Setting

HERE = Path(__file__).parent


def schema() -> dict[str, dict[str, Setting]]:
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
    try:
        return tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise SsdptsError(f"profile file {path} not found; shipped profiles: {', '.join(shipped())}") from None
    except tomllib.TOMLDecodeError as e:
        raise SsdptsError(f"profile {path}: not valid TOML ({e})") from None


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
    for name in (data.get("profile") or {}).get("tests") or []:
        if name not in tests:
            raise SsdptsError(f"profile {path}: profile.tests names unknown test {name!r}; tests: {', '.join(tests)}")


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
