"""Tests of the tabgp problem (paper 004).

``MUTATION``: problem -> the tests that must kill the mutants of its evaluator (``make
mutation``, tests/mutation/run.py; the evaluator itself comes from the registry);
``FAST``: its modules in ``make test-fast`` (tests/conftest.py: the evaluator's tests and one
small case)."""

MUTATION = {"tabgp": "tests/tabgp/test_evaluator.py tests/tabgp/test_model.py"}

FAST = ("test_evaluator.py", "test_model.py")
