"""Exporters over one typed result (`RunResult`): text for `show`, JSON, CSV; the HTML report is `ssdpts.report`."""
