"""The registry of tests: every package under `ssdpts.pts` that declares `TEST = TestSpec(...)`.

Adding a test is one package plus its profile entries; nothing here changes.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from pathlib import Path

from ..errors import SsdptsError
from ..settings import RunSettings, TestSettings, run_settings
from .spec import TestSpec

DEFAULT_TESTS = ("iops", "throughput", "latency")
_HERE = Path(__file__).parent


@lru_cache(maxsize=1)
def tests() -> dict[str, TestSpec]:
    """name -> TestSpec: PTS tests first (in the spec's order), then studies, then endurance."""
    found: list[TestSpec] = []
    for info in pkgutil.iter_modules([str(_HERE)]):
        if not info.ispkg:
            continue
        module = importlib.import_module(f"{__package__}.{info.name}")
        spec = getattr(module, "TEST", None)
        if isinstance(spec, TestSpec):
            found.append(spec)
    order = {"pts": 0, "study": 1, "endurance": 2}
    found.sort(key=lambda s: (order.get(s.kind, 9), s.order, s.name))
    return {s.name: s for s in found}


def get(name: str) -> TestSpec:
    spec = find(name)
    if spec is None:
        raise SsdptsError(f"unknown test {name!r}; available: {', '.join(tests())}")
    return spec


def find(name: str) -> TestSpec | None:
    """The test named `name`, or None. Its package (the name with '_' for '-') is imported first alone: reading a
    stored run then imports only the tests it holds, not all of them (bench/startup.py)."""
    try:
        spec = getattr(importlib.import_module(f"{__package__}.{name.replace('-', '_')}"), "TEST", None)
    except ImportError:
        spec = None
    if isinstance(spec, TestSpec) and spec.name == name:
        return spec
    return tests().get(name)


def decode_stored(name: str, data: dict | None) -> object | None:
    """A stored summary of test `name` as its typed record; None for an unknown test or no summary."""
    spec = find(name)
    return spec.decode(data) if spec is not None else None


def settings_for(profile: dict, names: list[str]) -> RunSettings:
    """The run's typed settings for the tests `names` (a stored test this ssdpts does not know: the keys every
    test has)."""
    records = {}
    for name in names:
        spec = find(name)
        records[name] = spec.settings if spec is not None else TestSettings
    return run_settings(profile, records)


def checked_names(names: list[str], where: str) -> list[str]:
    """`names` if each is a registered test named once; else one line naming the empty, repeated or unknown one."""
    seen: set[str] = set()
    for name in names:
        if not name.strip():
            raise SsdptsError(f"{where} has an empty test name; give names separated by single commas, "
                              "e.g. iops,latency")
        if name in seen:
            raise SsdptsError(f"{where} names test {name!r} twice; name each test once")
        seen.add(name)
        if name not in tests():
            raise SsdptsError(f"{where} names unknown test {name!r}; available: {', '.join(tests())}")
    return names


def from_option(text: str | None, option: str = "--tests") -> list[str] | None:
    """The tests of a comma-separated command-line option (None: not given, the profile's list applies)."""
    if text is None:
        return None
    return checked_names([t.strip() for t in text.split(",")], f"{option} {text!r}")
