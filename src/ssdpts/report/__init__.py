"""Reports from the results database: HTML, plots, tables, comparisons, exports (no re-running).

    write_report(store, run_id, out_dir=None) -> Path        # <results>/reports/<run_id>/report.html
    write_compare(store, [run_a, run_b, ...], out_dir) -> Path
    export(store, run_id, "json" | "csv", out_dir) -> [Path]

Test modules render their own section (`report_section(ctx)`, optional `compare_section(ctx)`); see
`ssdpts.report.context` for what `ctx` offers.
"""

from __future__ import annotations


def write_report(store, run_id, out_dir=None, **kw):
    from .core import write_report as _w

    return _w(store, run_id, out_dir, **kw)


def write_compare(store, run_ids, out_dir, **kw):
    from .compare import write_compare as _w

    return _w(store, run_ids, out_dir, **kw)


def export(store, run_id, fmt, out_dir):
    from .export import export as _e

    return _e(store, run_id, fmt, out_dir)


__all__ = ["write_report", "write_compare", "export"]
