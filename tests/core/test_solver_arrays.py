"""dmlopt.solvers.add_arrays and triplet_model: arrays and (row, column, value) entries into a
direct HiGHS model, checked against the optimum of a tiny MILP found by enumeration."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from dmlopt import solvers

# max 3a + 2b + 4c  s.t.  a + b + c <= 2,  2a + c >= 1 (row with no upper bound),
# a, c in {0, 1}, b integer in [0, 3] (b alone is bounded above by the column only)
COST = np.array([3.0, 2.0, 4.0])
ROWS = [[1.0, 1.0, 1.0], [2.0, 0.0, 1.0]]
LOWER, UPPER = [0.0, 0.0, 0.0], [1.0, 3.0, 1.0]
ROW_LOWER, ROW_UPPER = [-np.inf, 1.0], [2.0, np.inf]


def _enumerated(integer_b: bool) -> float:
    """The optimum by enumeration over a grid fine enough for the LP case (halves)."""
    grid_b = np.arange(0, 3.01, 1.0 if integer_b else 0.5)
    best = -np.inf
    for a, b, c in itertools.product((0.0, 1.0), grid_b, (0.0, 1.0)):
        x = np.array([a, b, c])
        lhs = np.array(ROWS) @ x
        if lhs[0] <= 2 + 1e-9 and lhs[1] >= 1 - 1e-9:
            best = max(best, float(COST @ x))
    return best


def _solve(h) -> float:
    import highspy

    h.changeObjectiveSense(highspy.ObjSense.kMaximize)
    solvers.run_highspy(h)
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    return h.getInfo().objective_function_value


def test_add_arrays_matches_enumeration():
    h = solvers.highspy_model()
    h.setOptionValue("output_flag", False)
    solvers.add_arrays(h, LOWER, UPPER, sp.csr_matrix(ROWS), ROW_LOWER, ROW_UPPER,
                       cost=COST, integer=[True, True, True])
    assert _solve(h) == pytest.approx(_enumerated(True))  # 7: a = c = 1


def test_triplet_model_sums_repeated_entries():
    # the coefficient 1 of c in row 0 is given as 0.5 + 0.5: a model keeping only one of the
    # two lets b = 0.5 beside a = c = 1 (value 8) where the enumeration gives 7
    entries = [(0, 0, 1.0), (0, 1, 1.0), (0, 2, 0.5), (1, 0, 2.0), (1, 2, 1.0), (0, 2, 0.5)]
    h = solvers.triplet_model(LOWER, UPPER, [True, False, True], ROW_LOWER, ROW_UPPER, entries,
                              time_limit=5)
    limit = h.getOptionValue("time_limit")  # (status, value) in some highspy versions
    assert (limit[-1] if isinstance(limit, tuple) else limit) == 5
    h.changeColsCost(3, np.arange(3, dtype=np.int32), COST)
    assert _solve(h) == pytest.approx(_enumerated(False))


def test_rows_highs_refuses_are_an_error_not_a_smaller_model():
    """HiGHS adds no row of a batch holding a coefficient of 1e15 or more and says so only in
    its return status: solved anyway, the model would lack those rows (a relaxation taken for
    the model)."""
    from dmlopt.errors import SolverError

    h = solvers.highspy_model()
    with pytest.raises(SolverError, match="refused the model's rows"):
        solvers.add_arrays(h, [0, 0], [1, 1], sp.csr_matrix(np.array([[1.0, 1e18]])),
                           [-np.inf], [1.0], cost=[1.0, 1.0])
    h = solvers.highspy_model()
    solvers.add_arrays(h, [0, 0], [1, 1], sp.csr_matrix(np.array([[1.0, 1e12]])),
                       [-np.inf], [1.0], cost=[1.0, 1.0])
    assert h.getNumRow() == 1
