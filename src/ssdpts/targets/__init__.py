"""What is tested: block devices, regular files, the simulated SSD. Safety checks and purge live here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_attributes

if TYPE_CHECKING:
    from .base import Target
    from .resolve import open_target

__all__ = ["Target", "open_target"]


# imported on first use, not with the package: the store decodes a run with `targets.record`, and reading a
# run (list, show, check) resolves no target
__getattr__ = lazy_attributes(__name__, {"Target": "base", "open_target": "resolve"})
