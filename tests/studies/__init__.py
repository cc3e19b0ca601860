"""Smoke tests of the studies (benchmarks/studies/): each script on tiny input."""
