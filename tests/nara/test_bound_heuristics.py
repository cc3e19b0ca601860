"""The Nara bounds that return a solution return their declared heuristic's (``Bound.heuristics``,
the primal one first): the allocation equals what ``dmlopt.heuristic`` gives for that name, and
a bound declaring a heuristic it does not run (or running another) fails here."""

from __future__ import annotations

import pytest

import dmlopt
from dmlopt import registry

PROBLEM = registry.get("nara")
#: the declared bounds fast enough on a small episode (schedule and the exact method run long)
FAST = ("aggregate", "aggregate-lp", "cover")


@pytest.fixture(scope="module")
def instance():
    return dmlopt.generate("nara", {"generator": "uniform", "topology": "alpha",
                                    "n_requests": 24}, seed=4)


@pytest.mark.parametrize("name", FAST)
def test_solution_is_the_declared_primal_heuristics(instance, name):
    declared = PROBLEM.bound(name).heuristics
    assert declared, f"{name} returns a solution but declares no heuristic"
    got = dmlopt.bound(instance, name, time_limit=10)
    want = dmlopt.heuristic(instance, declared[0])
    assert got.solution is not None
    assert got.solution.model_dump() == want.solution.model_dump()
    assert got.objective == want.objective


def test_every_bound_returning_a_solution_declares_one():
    """The bounds with a ``primal`` option (they return an allocation) each declare a
    heuristic; the generic ones (mip, lp) declare none."""
    for name, entry in PROBLEM.bound_entries.items():
        if "primal" in entry.Options.model_fields:
            assert entry.heuristics, name
    assert PROBLEM.bound("lp").heuristics == ()
