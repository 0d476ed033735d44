"""`ssdpts analyze ...`: offline analyses of logs and snapshots, without running anything.

Each module in this package that defines a click command named `command` becomes a subcommand
(`analyze slc-cache`, `analyze endurance`, ...).
"""

from __future__ import annotations

import importlib
import pkgutil

import click


@click.group()
def analyze():
    """Offline analyses of saved data (fio logs, SMART snapshots); nothing is run on a device."""


def _load() -> None:
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        cmd = getattr(module, "command", None)
        if isinstance(cmd, click.Command):
            analyze.add_command(cmd)


_load()
