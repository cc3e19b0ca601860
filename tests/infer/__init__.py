"""Tests of the infer and infer_tap problems (paper 000, Flow Tracking).

``MUTATION``: problem -> the tests that must kill the mutants of its evaluator (``make
mutation``, tests/mutation/run.py; the evaluator itself comes from the registry);
``FAST``: its modules in ``make test-fast`` (tests/conftest.py: the evaluator's tests and one
small case)."""

MUTATION = {
    "infer": "tests/infer/test_evaluator.py tests/infer/test_problem.py tests/infer/test_infer.py",
    "infer_tap": "tests/infer/test_problem.py",
}

FAST = ("test_evaluator.py", "test_problem.py")
