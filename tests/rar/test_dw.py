"""RAR MinCU Dantzig-Wolfe bound study (benchmarks/analysis/rar_mincu_dw.py): LP bound <= DW
bound <= the optimum (brute force)."""

from __future__ import annotations

import pyomo.environ as pyo
import pytest

from dmlopt import solvers
from dmlopt.models import rar
from dmlopt.models.rar import formulations as rar_formulations
from tests.helpers.rar import _brute_force


def _script():
    from dmlopt.benchmarks.analysis import rar_mincu_dw

    return rar_mincu_dw


def _lp_bound(inst: rar.Instance) -> float:
    model = rar.build_aggregated(inst)
    pyo.TransformationFactory("core.relax_integer_vars").apply_to(model)
    run = solvers.run(model, "highs", threads=1)  # one thread count: HiGHS's scheduler
    assert run.status == "optimal", run
    return pyo.value(model.obj)


def _dw_bound(inst: rar.Instance) -> float:
    dw = _script()
    master = dw.Master(inst)
    while True:
        master.run()
        dual = master.h.getSolution().row_dual
        added = 0
        for n in range(len(inst.nodes)):
            items, reduced = dw.price(master, n, dual)
            if reduced - dual[master.row[("convex", n)]] < -1e-6:
                added += master.add_column(n, items)
        if not added:
            return master.h.getInfo().objective_function_value * inst.alpha_of()


@pytest.mark.parametrize("seed", [2, 5, 6, 8])
def test_dw_bound_between_lp_and_optimum(seed):
    inst = rar.generate_random(seed=seed, nodes=4, extra_links=1, requests=2, slots=3, cus=3,
                               wavelengths=2, rho=2, scheme="MinCU")
    assert rar_formulations._wavelengths_never_bind(inst)
    optimum = _brute_force(inst)["MinCU"]
    lp, dw = _lp_bound(inst), _dw_bound(inst)
    assert lp - 1e-7 <= dw <= optimum + 1e-7
    # per-node schedule columns close part of the LP gap where there is one (pricing is
    # working); where the LP bound is already the optimum (seed 5) nothing is left to close
    assert (dw > lp + 1e-3) == (lp < optimum - 1e-3)
