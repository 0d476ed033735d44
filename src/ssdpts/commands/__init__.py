"""CLI commands that belong to a stage (report, compare, export; endurance), added to the main group by `cli`."""
