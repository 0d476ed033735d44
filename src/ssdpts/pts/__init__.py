"""The tests: one package per test (PTS tests, reviewer studies, endurance), each declaring `TEST = TestSpec(...)`.

`registry` finds them; `common` holds what they share (purge, preconditioning, the steady-state
round loop, window summaries); `results` the typed records their summaries are built from.
"""
