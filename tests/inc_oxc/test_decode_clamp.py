"""INC/OXC decoding: an f a MILP solver overstates by its tolerance is lowered to what the
placement and circuits allow (models/inc_oxc/formulations.py, ``_finish``).

HiGHS on the `paper` MILP of the `dcn` instance below reported f 5e-6 above what its circuits
carry (a PS-side load of 3750.02 against 3750), and ``dmlopt.solve`` ended in an
ObjectiveMismatchError. The reference optimum is the brute force over every placement and
circuit matrix of tests/inc_oxc/test_lns.py, written without the package's scoring code.
"""

from __future__ import annotations

import numpy as np
import pytest

import dmlopt
from dmlopt.models.inc_oxc.evaluation import best_f, circuits_from_ports
from dmlopt.models.inc_oxc.formulations import _finish
from tests.inc_oxc.test_lns import _brute_force

SPEC = {"generator": "dcn", "racks": 3, "jobs": 2, "ports": 3, "workers": [1, 3],
        "pdp_fraction": 1.0, "ps_per_switch": 0, "data": [92, 552], "inc": True, "alpha": 0.5}


def test_highs_paper_optimum_is_the_brute_force_optimum():
    """A decoder that keeps the solver's f raises ObjectiveMismatchError here (HiGHS 1.16)."""
    inst = dmlopt.generate("inc_oxc", SPEC, seed=7504)
    f_star, _ = _brute_force(inst)
    res = dmlopt.solve(inst, formulation="paper", solver="highs", time_limit=60)
    assert res.status == "optimal" and res.feasible
    assert res.objective == pytest.approx(f_star, rel=1e-6)
    assert res.objective <= f_star * (1 + 1e-9)


@pytest.mark.parametrize("scale", [1.01, 1.0 + 5e-6, 0.5])
def test_finish_never_gives_more_than_the_circuits_carry(scale):
    """An f above the placement's closed form is lowered to it (the evaluation is then
    feasible at exactly that f); an f below it is kept (a decoder clamping to the closed form
    in every case would raise it)."""
    inst = dmlopt.generate("inc_oxc", SPEC, seed=7504)
    res = dmlopt.solve(inst, formulation="strong", time_limit=60)
    sol = res.solution
    wrack = np.array([k for row in sol.workers for k in row], np.int64)
    ps = list(sol.ps)
    server = np.array([kind == "server" for _, kind in ps], float)
    c, _ = circuits_from_ports(inst, list(sol.oxc))
    most = best_f(inst, wrack, np.array([k for k, _ in ps], np.int64), server, c)
    out = _finish(inst, [list(r) for r in sol.workers], ps, c, scale * most)
    ev = dmlopt.evaluate(inst, out)
    assert ev.feasible
    assert ev.objective == pytest.approx(min(scale, 1.0) * most, rel=1e-12)
