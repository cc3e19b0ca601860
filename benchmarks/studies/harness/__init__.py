"""Studies: harness (benchmarks/studies/harness/NOTES.md); not installed."""
