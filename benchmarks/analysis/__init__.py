"""Diagnostic studies (benchmarks/analysis/<p>_<what>.py), one module each."""
