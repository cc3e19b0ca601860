"""Studies: tap (benchmarks/studies/tap/NOTES.md); not installed."""
