"""Tests of the inc_oxc problem (paper 002).

``MUTATION``: problem -> the tests that must kill the mutants of its evaluator (``make
mutation``, tests/mutation/run.py; the evaluator itself comes from the registry);
``FAST``: its modules in ``make test-fast`` (tests/conftest.py: the evaluator's tests and one
small case);
``HEURISTIC_OPTIONS``: problem -> heuristic -> the options tests/core/test_contract.py runs it
with (wcg-ls and wcg-lns search until their time limit, 2 s and 30 s by default: 0.5 s, and
2 s of which 0.5 s local search, the rest large neighbourhood search)."""

MUTATION = {"inc_oxc": "tests/inc_oxc/test_evaluator.py tests/inc_oxc/test_inc_oxc.py "
                       "-k 'fig2 or by_hand or evaluator or heuristics_pass'"}

FAST = ("test_evaluator.py", "test_inc_oxc.py")

HEURISTIC_OPTIONS = {"inc_oxc": {"wcg-ls": {"time_limit": 0.5},
                                 "wcg-lns": {"time_limit": 2.0, "ls_time": 0.5}}}
