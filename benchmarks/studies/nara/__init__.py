"""Studies: nara (benchmarks/studies/nara/NOTES.md); not installed."""
