"""Studies: tabgp (benchmarks/studies/tabgp/NOTES.md); not installed."""
