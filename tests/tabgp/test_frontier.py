"""TABGP (paper 004): the "balanced" formulation and the optional CP-SAT model against brute force.

The expected optima come from a dynamic program over all feasible labellings of every step,
scored here with plain Python (no dmlopt scoring helper), so a wrong model cannot agree with
them by sharing code.
"""

from __future__ import annotations

import random

import pytest

import dmlopt
from dmlopt.models import tabgp as M
from tests.helpers.tabgp import brute_force


def random_instance(rng: random.Random, n: int, l: int, k: int, tau: int, weighted: bool,
                    alpha: float) -> tuple[M.Instance, float]:
    edges, weights = [], []
    for _ in range(tau):
        step = [(u, v) for u in range(n) for v in range(u + 1, n) if rng.random() < 0.5]
        edges.append(step)
        weights.append([rng.choice([0.5, 1.0, 2.5]) if weighted else 1.0 for _ in step])
    spec = {"problem": "tabgp", "n": n, "edges": edges, "l": l, "k": k, "alpha": alpha}
    if weighted:
        spec["weights"] = weights
    inst = dmlopt.load(spec)
    return inst, brute_force(n, l, k, alpha, edges, weights)


# n = l k (every cluster full: the lower size bounds are equalities), n < l k with a lower
# size of 2 (8 vertices, 3 labels of at most 3), and one where the lower size is void
CASES = [(6, 3, 2, 2, False, 1.0), (6, 2, 3, 3, True, 1.5), (8, 3, 3, 2, False, 2.0),
         (7, 3, 3, 2, True, 0.5), (6, 3, 2, 3, True, 2.0)]


@pytest.mark.parametrize("form", ["balanced", "triples"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_reaches_brute_force(case, form):
    # catches a lower cluster size that is too large (n - (l-1)k miscomputed, or k used when
    # n < l k: the 8-vertex case has optimal solutions with a cluster of 2), and in "triples"
    # a wrong third-member count (k - 1 for k - 2 lets the LP and MIP keep 4 in a cluster of 3;
    # lo - 1 for lo - 2 cuts off the optimum) or a dropped triangle row
    n, l, k, tau, weighted, alpha = CASES[case]
    inst, expected = random_instance(random.Random(case), n, l, k, tau, weighted, alpha)
    res = dmlopt.solve(inst, "highs", formulation=form, threads=1, time_limit=120)
    assert res.status == "optimal"
    assert res.objective == pytest.approx(expected, abs=1e-6)


def test_balanced_adds_rows_only_when_the_least_size_exceeds_one():
    # catches constraints added when they are void (or missing when they are not)
    rng = random.Random(7)
    full, _ = random_instance(rng, 6, 3, 2, 2, False, 1.0)      # lo = 2
    loose, _ = random_instance(rng, 7, 3, 3, 2, False, 1.0)     # lo = 1
    for inst, extra in ((full, True), (loose, False)):
        pairs = M.estimate_size(inst, "pairs")[1]
        balanced = M.estimate_size(inst, "balanced")[1]
        assert (balanced > pairs) is extra
        built = M.build(inst, "balanced")
        assert hasattr(built, "least") is extra


def test_lp_relaxations_are_nested():
    # balanced adds valid rows to pairs and triples implies balanced's rows, so their LP values
    # rise in that order; on this graph (n = 12 = l k) strictly, by the lifting (catches a
    # balanced model whose rows are void and a triples model without its (T2) rows)
    inst = dmlopt.generate("tabgp", {"generator": "er", "n": 12, "p": 0.5, "tau": 1, "l": 3},
                           seed=0)
    import pyomo.environ as pyo

    from dmlopt import solvers

    values = {}
    for f in ("pairs", "balanced", "triples"):
        m = M.build(inst, f)
        pyo.TransformationFactory("core.relax_integer_vars").apply_to(m)
        values[f] = solvers.run(m, "highs", time_limit=60, threads=1).objective
    assert values["balanced"] > values["pairs"] + 1e-3
    assert values["triples"] > values["balanced"] + 1e-3
