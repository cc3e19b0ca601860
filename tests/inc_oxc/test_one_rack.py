"""One rack: the MILPs build and agree with the bisection solve (a rule whose sums over the
other racks or ports are empty is a constant, and Pyomo refused the True it evaluated to)."""

from __future__ import annotations

import pytest

import dmlopt

SPECS = [
    {"generator": "small", "racks": 1, "jobs": 1, "inc": False, "alpha": 0.0},
    {"generator": "small", "racks": 1, "jobs": 2},
    {"generator": "dcn", "racks": 1, "jobs": 2, "ports": 1, "pdp_fraction": 1.0},
]


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("solver", ["highs", "scip"])
@pytest.mark.parametrize("formulation", ["paper", "strong"])
def test_one_rack_is_solved_by_each_formulation(spec, formulation, solver):
    """Catches c11 (paper), c13one (paper, one port) and ports (strong) returning a constant
    True on one rack (InvalidConstraintError before the model was built; with SCIP, a
    Constraint.Feasible row it cannot read)."""
    inst = dmlopt.generate("inc_oxc", spec, seed=7100)
    res = dmlopt.solve(inst, solver, formulation=formulation, time_limit=60, threads=1)
    ref = dmlopt.solve(inst, time_limit=60, threads=1)  # the bisection over placements-static
    assert res.status == ref.status == "optimal"
    assert res.objective == pytest.approx(ref.objective, rel=1e-4)
    assert dmlopt.bound(inst, "jobs-timeshared").bound >= res.objective * (1 - 1e-6)
