"""One typed result of a run, read from the store once (`model.RunResult`, with each test's cell coverage and
stimulus): what the conformance verdict and every exporter read. It sits above the tests and below the verdict,
so the verdict and the exporters reach it without importing each other."""
