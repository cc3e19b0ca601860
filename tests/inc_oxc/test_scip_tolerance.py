"""INC/OXC `paper` MILP: SCIP's tolerance and the decoder (models/inc_oxc module docstring,
"Decoding" and "Solver tolerance").

With SCIP's default feasibility tolerance the big M of eqs. (14)-(15) let f exceed what the
circuits carry (0.06 % on the `dcn` instance below), or left the b variables below a_ij f (the
`large` one); either way ``dmlopt.solve`` refused SCIP's answer. The reference optimum comes from
HiGHS on the `strong` formulation, a different model and solver.
"""

from __future__ import annotations

import pytest

import dmlopt
from dmlopt.models.inc_oxc.formulations import decode, warm_start

pytest.importorskip("pyscipopt")

# two small instances on which SCIP at its default tolerance was refused by the evaluator
CASES = [
    ({"generator": "large", "racks": 3, "jobs": 2, "workers": [1, 1], "inc": False}, 7009),
    ({"generator": "dcn", "racks": 2, "jobs": 1, "ports": 2, "workers": [1, 2],
      "pdp_fraction": 0.5, "ps_per_switch": 0, "data": [100, 100], "inc": True, "alpha": 0.5},
     7016),
]


@pytest.mark.parametrize(("spec", "seed"), CASES)
def test_scip_paper_optimum_is_the_evaluated_optimum(spec, seed):
    inst = dmlopt.generate("inc_oxc", spec, seed=seed)
    ref = dmlopt.solve(inst, "highs", formulation="strong", time_limit=60)
    assert ref.status == "optimal"
    res = dmlopt.solve(inst, "scip", formulation="paper", time_limit=60, threads=1)
    assert res.status == "optimal"
    assert res.objective == pytest.approx(ref.objective, rel=1e-7)
    assert dmlopt.evaluate(inst, res.solution).feasible


def test_decode_gives_every_worker_what_f_needs():
    """b variables left below a_ij f (as a solver's tolerance allows) do not lower the decoded
    solution's objective: the decoder reads the placement, circuits and f only."""
    inst = dmlopt.generate("inc_oxc", CASES[0][0], seed=CASES[0][1])
    sol = dmlopt.heuristic(inst, "wcg").solution
    f = dmlopt.evaluate(inst, sol).objective
    model = dmlopt.build(inst, formulation="paper")
    warm_start(model, inst, sol)
    for comp in (model.bs, model.bc, model.bsi, model.bci):
        for var in comp.values():
            if var.value:
                var.set_value(var.value * 0.999)
    ev = dmlopt.evaluate(inst, decode(model, inst))
    assert ev.feasible
    assert ev.objective == pytest.approx(f, rel=1e-12)
