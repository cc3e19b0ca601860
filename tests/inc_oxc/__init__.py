"""Tests of the inc_oxc problem (paper 002).

``MUTATION``: problem -> the tests that must kill the mutants of its evaluator (``make
mutation``, tests/mutation/run.py; the evaluator itself comes from the registry);
``FAST``: its modules in ``make test-fast`` (tests/conftest.py: the evaluator's tests and one
small case)."""

MUTATION = {"inc_oxc": "tests/inc_oxc/test_evaluator.py tests/inc_oxc/test_inc_oxc.py "
                       "-k 'fig2 or by_hand or evaluator or heuristics_pass'"}

FAST = ("test_evaluator.py", "test_inc_oxc.py")
