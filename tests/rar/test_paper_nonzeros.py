"""The RAR paper ILP's size estimate counts its nonzeros (issue 51: a 4-node, 4,000-slot
instance within the row limits built for minutes): eqs. (32)-(33) are rows |T| long, so the
model grows as |T|^2 while its rows grow as |T|."""

from __future__ import annotations

import pickle

import pytest

import dmlopt
from dmlopt import exact
from dmlopt.models import rar


def _nonzeros(model) -> int:
    """Nonzeros of a built Pyomo model, counted from its constraints (fixed variables too)."""
    import pyomo.environ as pyo
    from pyomo.core.expr.visitor import identify_variables

    return sum(len(list(identify_variables(c.body, include_fixed=True)))
               for c in model.component_data_objects(pyo.Constraint, active=True))


@pytest.mark.parametrize("spec", [
    {"generator": "random", "slots": 30},
    {"generator": "random", "slots": 60, "flexible": True, "requests": 3},
    {"generator": "cpn6", "requests": 2, "slots": 12},
])
def test_the_nonzero_estimate_bounds_the_built_model_closely(spec):
    inst = dmlopt.generate("rar", spec, seed=1)
    size = rar.estimate_size(inst, "paper")
    model = rar.build(inst, "paper")
    counted = _nonzeros(model)
    assert isinstance(size, exact.ModelSize) and len(size) == 2
    again = pickle.loads(pickle.dumps(size))
    assert tuple(again) == tuple(size) and again.nonzeros == size.nonzeros
    assert counted <= size.nonzeros <= 1.1 * counted


def test_the_nonzeros_grow_as_the_square_of_the_slots():
    """Doubling |T| doubles the rows but about quadruples the nonzeros (eqs. 32-33)."""
    small, big = (rar.estimate_size(dmlopt.generate("rar", {"generator": "random",
                                                            "slots": t}, seed=0), "paper")
                  for t in (1000, 2000))
    assert 1.9 < big[1] / small[1] < 2.1
    assert 3.9 < big.nonzeros / small.nonzeros < 4.1
