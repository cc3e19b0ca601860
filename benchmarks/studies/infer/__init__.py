"""Studies: infer (benchmarks/studies/infer/NOTES.md); not installed."""
