"""The render kit every test's renderers use: section and compare contexts (`context`), charts (`plots`),
tables, figures and number formats (`toolkit`), drive labels of a parallel run (`drives`) and cell matching
across runs and spec sheets (`matching`).

It sits below the tests (`pts/*/render.py` import it) and imports none of them, nor the output stage above
them (`report/`, `export/`, `conformance`): what a context needs of a test's declaration is the
`context.SpecView` protocol.
"""
