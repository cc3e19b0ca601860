"""Tests of the TAP problem (paper 000).

``MUTATION``: problem -> the tests that must kill the mutants of its evaluator (``make
mutation``, tests/mutation/run.py; the evaluator itself comes from the registry);
``FAST``: its modules in ``make test-fast`` (tests/conftest.py: the evaluator's tests and one
small case)."""

MUTATION = {"tap": "tests/tap/test_evaluator.py tests/tap/test_tap.py"}

FAST = ("test_evaluator.py", "test_tap.py")
