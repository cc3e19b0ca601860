"""Studies: rar (benchmarks/studies/rar/NOTES.md); not installed."""
