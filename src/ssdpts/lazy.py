"""Package attributes imported on first use (PEP 562): a package names what it offers, and a command that
never uses a name never imports the module behind it (bench/startup.py)."""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable


def lazy_attributes(package: str, where: dict[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: each name in `where` comes from the submodule named there,
    imported when the name is first read and then kept in the package, so the next read costs nothing."""
    def __getattr__(name: str) -> Any:
        submodule = where.get(name)
        if submodule is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{submodule}"), name)
        setattr(sys.modules[package], name, value)
        return value
    return __getattr__
