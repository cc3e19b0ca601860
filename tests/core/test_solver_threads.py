"""HiGHS keeps one thread scheduler per process: dmlopt must solve any sequence of thread counts.

With highspy 1.16, a run asking for a thread count other than the one the process-wide scheduler
was started with fails at once ("Option 'threads' is set to 1 but the scheduler has already been
initialized ..."). Each check runs in a fresh interpreter, so the sequence starts from a process
whose scheduler is not yet started, whatever the rest of the test session did.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

# formulation="pairs" everywhere: the MIP alone (the default solve of TABGP proves this
# instance by its exact enumeration before HiGHS would run)
PRELUDE = """
import json, dmlopt
from dmlopt import solvers
# optimum 2 by hand: a 4-cycle into two clusters of two, cut at least 2 of its 4 edges
inst = dmlopt.load({"problem": "tabgp", "n": 4, "k": 2, "l": 2, "alpha": 1,
                    "edges": [[[0, 1], [1, 2], [2, 3], [3, 0]]]})
"""


def _run(code: str) -> list:
    script = PRELUDE + textwrap.dedent(code)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("solver", ["highs", "scip"])
def test_thread_counts_default_1_2_1_in_one_process(solver):
    rows = _run(f"""
        rows = []
        for t in (None, 1, 2, 1):
            r = dmlopt.solve(inst, {solver!r}, formulation="pairs", threads=t)
            rows.append([t, r.status, r.objective, r.message])
        print(json.dumps(rows))
    """)
    assert [r[:3] for r in rows] == [[None, "optimal", 2.0], [1, "optimal", 2.0],
                                     [2, "optimal", 2.0], [1, "optimal", 2.0]]


def test_a_scheduler_started_outside_dmlopt_is_reset_and_the_run_retried():
    rows = _run("""
        import highspy
        h = highspy.Highs(); h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", 2); h.addVar(0, 1); h.run()  # starts the scheduler at 2
        solvers.direct._highs_threads = 1  # dmlopt believes its last run used 1 thread
        r = dmlopt.solve(inst, "highs", formulation="pairs", threads=1)
        print(json.dumps([[r.status, r.objective]]))
    """)
    assert rows == [["optimal", 2.0]]


def test_runs_in_their_own_thread_take_any_thread_count():
    """HiGHS runs in a thread of its own (highspy's solve, so that Ctrl-C cancels it), whose
    scheduler is its own: even without the reset, a second run with another count succeeds."""
    rows = _run("""
        solvers.direct.reset_highs_scheduler = lambda: None  # no reset: the thread is what saves it
        dmlopt.solve(inst, "highs", formulation="pairs", threads=1)
        r = dmlopt.solve(inst, "highs", formulation="pairs", threads=2)
        print(json.dumps([[r.status, r.objective]]))
    """)
    assert rows == [["optimal", 2.0]]


def test_a_failed_run_carries_the_solvers_own_message():
    from dmlopt.solvers.backends import _error_message

    log = "Running HiGHS\nERROR:   Option 'threads' is set to 2 but the scheduler ...\nend\n"
    assert _error_message("error", log) == \
        "error: ERROR: Option 'threads' is set to 2 but the scheduler ..."
