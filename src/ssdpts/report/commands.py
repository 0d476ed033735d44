"""CLI commands of the report stage, registered on the main group by `register`."""


def register(main) -> None:
    """Add the report-stage commands (report, compare, export) to the `ssdpts` group."""
