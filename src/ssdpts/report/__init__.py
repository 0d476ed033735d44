"""Reports from the results database: HTML, plots, tables, comparisons, exports (no re-running)."""
