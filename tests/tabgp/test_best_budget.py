"""``best`` gives its ILS a work budget linear in the instance (ours).

``_old_best`` is ``best_of`` as it was before the budget (every construction, then ``ils`` with
``iterations`` rounds), kept verbatim (renamed): with an unbounded budget ``best`` must give
its result exactly; with a zero budget no round is made; a budget smaller than a round cuts
that round inside its search; and the budget counts only the work of this run (the same seed
gives the same solution after other searches ran).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dmlopt
from dmlopt.heuristics import tabgp as T
from dmlopt.heuristics.tabgp import construct, evolve


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
    monkeypatch.setattr(T, "BEST_MIN_WORK", math.inf)
    for inst in _instances():
        got = T.best_of(inst, seed=seed, iterations=15)
        assert got.assignment == _old_best(inst, seed=seed, iterations=15).assignment


def test_budget_is_linear_in_the_instance(monkeypatch):
    inst = _instances()[1]
    assert T.best_budget(inst) == T.BEST_MIN_WORK + T.BEST_ENTRY_WORK * 4 * 60 * 5
    monkeypatch.setattr(T, "BEST_MIN_WORK", 0.0)
    bigger = dmlopt.generate("tabgp", {"generator": "drift", "n": 120, "m": 480, "tau": 4,
                                       "l": 5}, seed=1)
    assert T.best_budget(bigger) == pytest.approx(2 * T.best_budget(inst))


def _rounds_work(monkeypatch, inst, budget, iterations=15, seed=2):
    """(local searches made through this module, the work counter before and after each, the
    solution) of ``best`` with an ILS budget of ``budget``."""
    calls, marks = [], []
    search = T.local_search

    def counted(*a, **k):
        calls.append(1)
        marks.append(T.ls_work())
        out = search(*a, **k)
        marks.append(T.ls_work())
        return out

    monkeypatch.setattr(T, "best_budget", lambda instance: budget)
    # the constructions search through their module, the ILS through the package and evolve
    for module in (T, construct, evolve):
        monkeypatch.setattr(module, "local_search", counted)
    got = T.best_of(inst, seed=seed, iterations=iterations)
    for module in (T, construct, evolve):
        monkeypatch.setattr(module, "local_search", search)
    return len(calls), marks, got


def test_zero_budget_makes_no_round_and_is_repeatable(monkeypatch):
    """A budget ignored would make all the rounds (15 here), one checked only after the first
    round one; a budget read from the process-wide counter instead of its difference would
    change with the searches run before."""
    inst = _instances()[1]
    n_inf, _, _ = _rounds_work(monkeypatch, inst, math.inf)
    n_zero, _, got = _rounds_work(monkeypatch, inst, 0.0)
    assert n_inf - n_zero == 15
    assert got.assignment == _old_best(inst, seed=2, iterations=0).assignment
    T.dense_refine(inst)                          # other work in between
    assert _rounds_work(monkeypatch, inst, 0.0)[2].assignment == got.assignment


def test_a_budget_smaller_than_a_round_cuts_it_inside_its_search(monkeypatch):
    """The first round's search with no budget does W work; with a budget of W / 2 the round
    is cut inside its search: it does at least W / 2 (the budget is not read as "no round")
    and less than W (a budget checked only between rounds would let it finish), and no
    second round follows."""
    inst = _instances()[1]
    n_one, marks, _ = _rounds_work(monkeypatch, inst, math.inf, iterations=1)
    full = marks[-1] - marks[-2]
    n_cut, marks, got = _rounds_work(monkeypatch, inst, full / 2, iterations=15)
    assert n_cut == n_one
    cut = marks[-1] - marks[-2]
    assert full / 2 <= cut < full
    assert dmlopt.evaluate(inst, got).feasible


def test_default_best_never_worse_than_dense_refine():
    for inst in _instances():
        best = dmlopt.evaluate(inst, T.best_of(inst, seed=0)).objective
        assert best <= dmlopt.evaluate(inst, T.dense_refine(inst)).objective + 1e-9


def test_stop_at_returns_a_feasible_improvement_and_no_limit_changes_nothing():
    """``stop_at`` in the past: the search returns its start untouched (a check placed after
    the first step's search would change it); no limit: the same result as without."""
    from dmlopt.heuristics.tabgp.ls import local_search

    inst = _instances()[0]
    graphs = T._graphs(inst)[1]
    start = np.asarray(T.random_partition(inst, seed=1).assignment)
    args = (graphs, start, inst.l, inst.k, inst.alpha)
    assert np.array_equal(local_search(*args, temporal=True, stop_at=T.ls_work()), start)
    free = local_search(*args, temporal=True)
    assert np.array_equal(local_search(*args, temporal=True, stop_at=math.inf), free)
    assert not np.array_equal(free, start)
