"""The tests: one package per test (PTS tests, reviewer studies, endurance), each declaring `TEST = TestSpec(...)`.

`registry` finds them; `common` holds what they share (purge, preconditioning, the steady-state
round loop, window summaries). The typed records their summaries are built from are `ssdpts.results`, the
kit their renderers draw with `ssdpts.render`: both sit below the tests, and nothing here imports the output
stage (`report/`, `export/`, `conformance`) or `analyze/`.
"""
