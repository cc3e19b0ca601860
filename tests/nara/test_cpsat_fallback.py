"""Without OR-Tools: ``acceptance-sets`` falls back to the feasibility MILP ("auto" resolves to
"milp"), the default solve still proves the optimum, and asking for "cpsat" explicitly is a
clear error naming the option, never an ImportError."""

from __future__ import annotations

import sys

import pytest

import dmlopt
from dmlopt.errors import InstanceError
from dmlopt.models.nara import cpsat, exact
from tests.nara.test_exact import episode, optimum


@pytest.fixture
def no_ortools(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``import ortools...`` raise ImportError (as when the package is not installed)."""
    for name in ("ortools", "ortools.sat", "ortools.sat.python", "ortools.sat.python.cp_model"):
        monkeypatch.setitem(sys.modules, name, None)


def test_available_is_false_without_ortools(no_ortools):
    assert cpsat.available() is False
    assert exact.resolve_set_check("auto") == "milp"


def test_explicit_cpsat_without_ortools_is_a_clear_error(no_ortools):
    # an InstanceError naming the field and the rule, not an ImportError
    with pytest.raises(InstanceError, match="set_check.*ortools"):
        exact.resolve_set_check("cpsat")
    with pytest.raises(InstanceError, match="set_check"):
        exact.acceptance_sets(episode(0), time_limit=5, set_check="cpsat")


def test_default_solve_without_ortools(no_ortools, monkeypatch):
    # the default solve takes the MILP set check (a CP-SAT call would raise here) and still
    # proves the optimum of offline-plain
    def boom(*a, **kw):
        raise AssertionError("CP-SAT called without ortools")

    monkeypatch.setattr(cpsat, "allocate_set", boom)
    for seed in (0, 1):
        res = dmlopt.solve(episode(seed), threads=1, time_limit=120)
        assert res.status == "optimal"
        assert res.objective == optimum(seed)


def test_unknown_set_check_is_refused():
    with pytest.raises(InstanceError, match="set_check"):
        exact.resolve_set_check("gurobi")
