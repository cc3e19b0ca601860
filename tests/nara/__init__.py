"""Tests of the nara problem (paper 001).

``MUTATION``: problem -> the tests that must kill the mutants of its evaluator (``make
mutation``, tests/mutation/run.py; the evaluator itself comes from the registry)."""

MUTATION = {"nara": "tests/nara/test_evaluator.py tests/nara/test_nara.py"}
