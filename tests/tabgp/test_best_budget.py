"""``best`` gives its ILS a work budget relative to its constructions (ours).

``_old_best`` is ``best_of`` as it was before the budget (every construction, then ``ils`` with
``iterations`` rounds), kept verbatim (renamed): with an unbounded budget ``best`` must give
its result exactly; with a zero budget exactly one ILS round is made; and the budget counts
only the work of this run (the same seed gives the same solution after other searches ran).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dmlopt
from dmlopt.heuristics import tabgp as T


def _old_best(instance, *, seed=0, iterations=100):
    best, best_cost = None, np.inf
    for name in T._BEST_OF:
        assign = np.asarray(T._CONSTRUCTIONS[name](instance, seed=seed).assignment)
        cost = T._total(instance, assign)
        if cost < best_cost - 1e-9:
            best, best_cost = assign, cost
    return T.ils(instance, seed=seed, start=T._solution(best), iterations=iterations)


def _instances():
    return [dmlopt.generate("tabgp", {"generator": "drift", "n": n, "m": 4 * n, "tau": tau,
                                      "l": l}, seed=s)
            for n, tau, l, s in ((40, 3, 4, 0), (60, 4, 5, 1))]


@pytest.mark.parametrize("seed", [0, 3])
def test_unbounded_budget_is_the_old_best(seed, monkeypatch):
    monkeypatch.setattr(T, "BEST_BUDGET", math.inf)
    for inst in _instances():
        got = T.best_of(inst, seed=seed, iterations=15)
        assert got.assignment == _old_best(inst, seed=seed, iterations=15).assignment


def test_zero_budget_makes_one_round_and_is_repeatable(monkeypatch):
    """A budget ignored would make all the rounds (15 here), one checked before the first
    round none (the rounds are counted as local searches); a budget read from the process-wide
    counter instead of its difference would change with the searches run before."""
    calls = []
    search = T.local_search
    monkeypatch.setattr(T, "local_search", lambda *a, **k: calls.append(1) or search(*a, **k))
    inst = _instances()[1]
    counts = {}
    for budget in (math.inf, 0.0):
        monkeypatch.setattr(T, "BEST_BUDGET", budget)
        calls.clear()
        got = T.best_of(inst, seed=2, iterations=15)
        counts[budget] = len(calls)
    assert counts[math.inf] - counts[0.0] == 14
    assert got.assignment == _old_best(inst, seed=2, iterations=1).assignment
    T.dense_refine(inst)                          # other work in between
    assert T.best_of(inst, seed=2, iterations=15).assignment == got.assignment


def test_default_best_never_worse_than_dense_refine():
    for inst in _instances():
        best = dmlopt.evaluate(inst, T.best_of(inst, seed=0)).objective
        assert best <= dmlopt.evaluate(inst, T.dense_refine(inst)).objective + 1e-9
