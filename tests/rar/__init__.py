"""Tests of the rar problem (paper 003).

``MUTATION``: problem -> the tests that must kill the mutants of its evaluator (``make
mutation``, tests/mutation/run.py; the evaluator itself comes from the registry)."""

MUTATION = {"rar": "tests/rar/test_evaluator.py tests/rar/test_rar.py"}
