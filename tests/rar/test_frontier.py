"""RAR MinCU frontier study (benchmarks/analysis/rar_mincu_frontier.py): its window arithmetic
against enumeration, the start-free relaxation below the brute-force optimum, the clique rows
keeping the aggregated optimum, and CP-SAT (when ortools is installed) equal to it."""

from __future__ import annotations

import itertools

import pyomo.environ as pyo
import pytest

import dmlopt
from dmlopt import solvers
from dmlopt.benchmarks.analysis import rar_mincu_frontier as study
from dmlopt.models import rar
from tests.helpers.rar import TINY, _brute_force


def _solve(m) -> float:
    run = solvers.run(m, "highs", threads=1)  # prepares HiGHS's thread scheduler
    assert run.status == "optimal", run
    return pyo.value(m.obj)


def test_least_overlap_equals_enumeration():
    # catches the most overlap, or an off-by-one at the window ends
    for a, b in itertools.combinations_with_replacement(range(1, 7), 2):
        for d in range(1, b - a + 2):
            for t1, t2 in itertools.combinations_with_replacement(range(1, 7), 2):
                want = min(len(set(range(s, s + d)) & set(range(t1, t2 + 1)))
                           for s in range(a, b - d + 2))
                assert study.least_overlap(a, b, d, t1, t2) == want, (a, b, d, t1, t2)


def test_must_overlap_equals_enumeration():
    # catches a test of one order only (j1 before j2) or a strict/non-strict slip
    wins = [(a, b) for a, b in itertools.combinations_with_replacement(range(1, 6), 2)]
    for (a1, b1), (a2, b2) in itertools.product(wins, repeat=2):
        for d1, d2 in itertools.product(range(1, b1 - a1 + 2), range(1, b2 - a2 + 2)):
            want = all(set(range(s1, s1 + d1)) & set(range(s2, s2 + d2))
                       for s1 in range(a1, b1 - d1 + 2) for s2 in range(a2, b2 - d2 + 2))
            assert study.must_overlap(a1, b1, d1, a2, b2, d2) == want


@pytest.mark.parametrize("spec", TINY + [dict(seed=s, nodes=4, extra_links=1, requests=2,
                                               slots=2, cus=2, wavelengths=2, rho=2)
                                          for s in range(3)])
def test_start_free_relaxation_is_a_lower_bound(spec):
    # catches interval rows that overcount (the most overlap, or the largest mode's area)
    inst = rar.generate_random(scheme="MinCU", **spec)
    assert _solve(study.build_start_free(inst)) <= _brute_force(inst)["MinCU"] + 1e-9


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_clique_rows_keep_the_aggregated_optimum(seed):
    # catches a clique of items that need not overlap (an invalid row cuts the optimum off)
    inst = rar.generate_random(seed=seed, nodes=5, extra_links=2, requests=3, slots=4, cus=3,
                               wavelengths=3, rho=1, scheme="MinCU")
    base = _solve(rar.build_aggregated(inst))
    m = rar.build_aggregated(inst)
    study.add_cliques(m, inst)
    assert _solve(m) == pytest.approx(base, abs=1e-6)


@pytest.mark.parametrize("seed", [0, 1])
def test_cpsat_equals_the_aggregated_optimum(seed):
    # catches a CP-SAT model that forgets the shared window (an own start per node: 12 CUs
    # instead of 16 on seed 0) or scales the objective wrongly
    pytest.importorskip("ortools")
    inst = rar.generate_cpn6(seed=seed, requests=3, scheme="MinCU")
    status, best, bound, _ = study.cpsat(inst, 60.0)
    assert status == "OPTIMAL"
    res = dmlopt.solve(inst, threads=1)
    assert best == pytest.approx(res.objective, abs=1e-9) == pytest.approx(bound, abs=1e-9)


def test_cpsat_refuses_binding_wavelengths():
    pytest.importorskip("ortools")
    inst = rar.generate_random(seed=0, nodes=4, requests=3, wavelengths=1, rho=1)
    with pytest.raises(ValueError, match="wavelengths"):
        study.cpsat(inst, 1.0)
