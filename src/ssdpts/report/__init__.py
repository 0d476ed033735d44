"""The HTML output stage, above the tests: the report (`html.HtmlReport`, an exporter; `html.write_report` by run id), comparisons
(`compare.write_compare`) and vendor claims (`claimed`). The kit the tests' renderers use (contexts, plots,
tables, drive labels, matching) is `ssdpts.render`, below the tests.
"""
