"""`ssdpts analyze ...`: offline analyses of saved logs, snapshots and captures, without running anything.

The group lists its commands from their declared summaries and imports them (commands/analyses.py, which
imports the analyses: the slc-cache one brings the test registry's renderers) only when one runs or shows its
own help, so `ssdpts analyze --help` stays as light as the other commands' help (bench/startup.py)."""

from __future__ import annotations

import click

from .common import LazyCommand

ANALYSES = {
    "endurance": LazyCommand("ssdpts.commands.analyses", "endurance",
                             "Projection from two or more saved smartctl / nvme-cli JSON snapshots of one drive."),
    "slc-cache": LazyCommand("ssdpts.commands.analyses", "slc_cache",
                             "Find the SLC-cache steps in a sequential-write bandwidth log and estimate the cache "
                             "size."),
    "workload": LazyCommand("ssdpts.commands.analyses", "workload",
                            "The IO streams of a captured workload (ssdpts capture): stream map, top-N table, "
                            "read/write and random/sequential shares, queue depth over time."),
}


class _Analyses(click.Group):
    def list_commands(self, ctx) -> list[str]:
        return sorted(ANALYSES)

    def get_command(self, ctx, name: str) -> click.Command | None:
        return ANALYSES[name].load() if name in ANALYSES else None

    def format_commands(self, ctx, formatter) -> None:
        """The listing shows each analysis's declared summary: it imports none of them."""
        click.Group(commands={name: click.Command(name, help=a.summary) for name, a in ANALYSES.items()}
                    ).format_commands(ctx, formatter)


@click.group(cls=_Analyses)
def analyze():
    """Offline analyses of saved data (fio logs, SMART snapshots); nothing is run on a device."""
