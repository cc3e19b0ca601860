"""Tests of the nara problem (paper 001).

``MUTATION``: problem -> the tests that must kill the mutants of its evaluator (``make
mutation``, tests/mutation/run.py; the evaluator itself comes from the registry);
``FAST``: its modules in ``make test-fast`` (tests/conftest.py: the evaluator's tests and one
small case);
``SUBPROBLEM``: problem -> its formulations that model a sub-problem."""

MUTATION = {"nara": "tests/nara/test_evaluator.py tests/nara/test_nara.py"}
#: formulations that model a sub-problem (tests/core/test_contract.py): "request" is the MILP of
#: request 0 alone on the empty DC, so it accepts at most that one request
SUBPROBLEM = {"nara": ("request",)}

FAST = ("test_evaluator.py", "test_nara.py")
