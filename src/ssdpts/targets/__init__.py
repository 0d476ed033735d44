"""What is tested: block devices, regular files, the simulated SSD. Safety checks and purge live here."""

from .base import Target
from .resolve import open_target

__all__ = ["Target", "open_target"]
