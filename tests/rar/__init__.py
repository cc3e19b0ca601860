"""Tests of the rar problem (paper 003).

``MUTATION``: problem -> the tests that must kill the mutants of its evaluator (``make
mutation``, tests/mutation/run.py; the evaluator itself comes from the registry);
``FAST``: its modules in ``make test-fast`` (tests/conftest.py: the evaluator's tests and one
small case)."""

MUTATION = {"rar": "tests/rar/test_evaluator.py tests/rar/test_rar.py"}

FAST = ("test_evaluator.py", "test_rar.py")
