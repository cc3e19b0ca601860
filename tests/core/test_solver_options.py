"""Solver options: values checked against the solver's own ranges, and ``optimal`` only from a
proof whatever option set the stopping gap."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmlopt
from dmlopt.errors import InstanceError

#: ranges from the HiGHS option reference (written here, not read from HiGHS)
HIGHS_RANGES = {"time_limit": (0.0, math.inf), "mip_rel_gap": (0.0, math.inf),
                "random_seed": (0, 2147483647), "simplex_strategy": (0, 4)}


@pytest.fixture(scope="module")
def inst():
    return dmlopt.load("tabgp/er12-p03-tau1-s0")


@pytest.mark.parametrize(("solver", "options", "words"), [
    ("highs", {"time_limit": -5}, "below lower bound of 0"),
    ("highs", {"presolve": "maybe"}, 'not one of "off", "choose" or "on"'),
    ("highs", {"simplex_strategy": 99}, "above upper bound of 4"),
    ("scip", {"limits/time": -5.0}, "Must be in range [0,1e+20]"),
    ("scip", {"lp/initalgorithm": "z"}, "Must be in set"),
    ("scip", {"randomization/randomseedshift": -1}, "Must be in range [0,"),
])
def test_out_of_range_values_are_refused_with_the_range(inst, solver, options, words):
    key = next(iter(options))
    with pytest.raises(InstanceError) as err:
        dmlopt.solve(inst, solver, formulation="pairs", solver_options=options)
    assert f"solver_options.{key}" in str(err.value)
    assert words in str(err.value)


@settings(max_examples=40, deadline=None)
@given(key=st.sampled_from(sorted(HIGHS_RANGES)),
       value=st.one_of(st.integers(-10**6, 3 * 10**9), st.floats(-1e6, 1e12)))
def test_highs_option_values_over_their_declared_ranges(key, value):
    from dmlopt import solvers

    lo, hi = HIGHS_RANGES[key]
    integral = isinstance(lo, int)
    if integral and isinstance(value, float):
        with pytest.raises(InstanceError, match="must be of type int"):
            solvers.check_options("highs", {key: value})
        return
    if lo <= value <= hi:
        solvers.check_options("highs", {key: value})  # accepted
    else:
        with pytest.raises(InstanceError, match=f"solver_options.{key}.*refused by HiGHS"):
            solvers.check_options("highs", {key: value})


def test_a_loose_scip_gap_option_is_not_optimal(inst):
    res = dmlopt.solve(inst, "scip", formulation="pairs", solver_options={"limits/gap": 0.5})
    brute = dmlopt.solve(inst, "highs", formulation="pairs")
    assert brute.status == "optimal"
    if abs(res.objective - brute.objective) > 1e-9:  # stopped before the optimum
        assert res.status == "feasible"
        assert res.gap > 1e-4
    assert res.status != "optimal" or res.gap <= 1e-4


@pytest.mark.parametrize("options", [{"mip_rel_gap": 0.9}, {"mip_abs_gap": 1e6}])
def test_a_loose_highs_gap_option_never_gives_a_false_optimal(options):
    inst = dmlopt.generate("tabgp", {"generator": "er", "n": 16, "p": 0.5, "tau": 2}, seed=3)
    res = dmlopt.solve(inst, "highs", formulation="paper", solver_options=options,
                       time_limit=30)
    assert res.bound is not None
    gap = abs(res.objective - res.bound) / max(abs(res.objective), 1e-9)
    assert (res.status == "optimal") == (gap <= 1e-4 or abs(res.objective - res.bound) <= 1e-6)


def test_proven_is_the_recomputed_gap():
    from dmlopt.api import proven

    assert proven(10.0, 10.0) and proven(10.0, 9.9995) and proven(0.0, -5e-7)
    assert not proven(10.0, 9.99) and not proven(0.0, -1e-3) and not proven(10.0, None)


@pytest.mark.parametrize("solver", ["highs", "scip"])
def test_a_huge_time_limit_means_no_limit(solver):
    """Catches SCIP refusing limits/time above 1e20 s with an internal error: a finite time
    limit of 1e308 s is accepted by the checks, so every solver must run with it."""
    pytest.importorskip("pyscipopt" if solver == "scip" else "highspy")
    inst = dmlopt.generate("tap", {"generator": "random", "m": 3, "n": 3}, seed=0)
    ref = dmlopt.solve(inst, "highs", formulation="class")
    res = dmlopt.solve(inst, solver, formulation="rlt", time_limit=1e308, threads=1)
    assert res.status == "optimal" and res.objective == pytest.approx(ref.objective)
