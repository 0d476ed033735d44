"""Reports from the results database (no re-running): the toolkit every test's renderers use
(`context`, `plots`, `toolkit`, `drives`), the HTML report (`core.write_report`), comparisons
(`compare.write_compare`) and vendor claims (`claimed`).
"""
