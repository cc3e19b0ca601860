"""Benchmark harness: suites, runner, results store, report."""
