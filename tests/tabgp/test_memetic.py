"""The memetic search of TABGP (ours): the label matching against every permutation, the
crossover's sizes and shared entries, the population only improving, the time limit, and
options refused with their field."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import dmlopt
from dmlopt.errors import InstanceError
from dmlopt.heuristics import tabgp as H
from dmlopt.heuristics.tabgp.evolve import crossover, match_labels

SMALL = {"population": 3, "generations": 4, "rounds": 5}


def er(n=14, p=0.4, tau=3, l=3, seed=0):
    return dmlopt.generate("tabgp", {"generator": "er", "n": n, "p": p, "tau": tau, "l": l},
                           seed=seed)


def cost(inst, assign) -> float:
    """Cut plus alpha per migration, counted edge by edge (not the package's helpers)."""
    a = np.asarray(assign)
    cut = 0.0
    for t, edges in enumerate(inst.edges):
        weights = inst.weights[t] if inst.weights else [1.0] * len(edges)
        cut += sum(w for (u, v), w in zip(edges, weights, strict=True) if a[t, u] != a[t, v])
    return cut + inst.alpha * float((a[1:] != a[:-1]).sum())


@pytest.mark.parametrize("seed", range(6))
def test_match_labels_agrees_like_the_best_permutation(seed):
    rng = np.random.default_rng(seed)
    l = int(rng.integers(2, 5))
    ref = rng.integers(0, l, size=(3, 9))
    other = rng.integers(0, l, size=(3, 9))
    best = max(int((np.asarray(p)[other] == ref).sum())
               for p in itertools.permutations(range(l)))
    got = match_labels(ref, other, l)
    assert int((got == ref).sum()) == best
    # a renaming: the same partition of the entries at every step
    assert len({(int(a), int(b)) for a, b in zip(got.ravel(), other.ravel(), strict=True)}) \
        == len(set(other.ravel().tolist()))


def test_match_labels_undoes_a_renaming():
    rng = np.random.default_rng(3)
    ref = rng.integers(0, 4, size=(2, 12))
    assert np.array_equal(match_labels(ref, np.array([2, 0, 3, 1])[ref], 4), ref)


@pytest.mark.parametrize("seed", range(5))
def test_crossover_keeps_sizes_and_shared_entries(seed):
    rng = np.random.default_rng(seed)
    l, n = 3, 12
    first = np.stack([rng.permutation(np.arange(n) % l) for _ in range(3)])
    second = first.copy()
    for t in range(3):          # the second parent: a few entries swapped, then renamed
        i, j = rng.choice(n, 2, replace=False)
        second[t, [i, j]] = second[t, [j, i]]
    second = np.array([1, 2, 0])[second]
    child = crossover(first, second, l, rng)
    shared = first == match_labels(first, second, l)
    assert np.array_equal(child[shared], first[shared])
    for t in range(3):
        assert np.array_equal(np.bincount(child[t], minlength=l),
                              np.bincount(first[t], minlength=l))


def test_crossover_of_equal_parents_is_the_parent():
    first = np.array([[0, 1, 2, 0, 1, 2], [2, 1, 0, 0, 1, 2]])
    child = crossover(first, np.array([1, 2, 0])[first], 3, np.random.default_rng(0))
    assert np.array_equal(child, first)


@pytest.mark.parametrize("seed", range(3))
def test_feasible_repeatable_and_never_worse_than_dense_refine(seed):
    inst = er(seed=seed)
    res = dmlopt.heuristic(inst, "memetic", seed=seed, **SMALL)
    assert res.feasible
    assert res.objective == pytest.approx(cost(inst, res.solution.assignment))
    assert res.objective <= dmlopt.heuristic(inst, "dense-refine", seed=seed).objective + 1e-9
    again = dmlopt.heuristic(inst, "memetic", seed=seed, **SMALL)
    assert again.solution.assignment == res.solution.assignment


@pytest.mark.parametrize("seed", range(3))
def test_generations_only_improve_the_population(seed):
    """The same seed makes the same population; children only replace a worse member, so more
    generations never give a worse best member (a child replacing the best one would)."""
    inst = er(n=16, p=0.3, seed=seed + 10)
    values = [H.memetic(inst, seed=seed, population=3, generations=g, rounds=3)
              for g in (0, 3, 8)]
    objs = [cost(inst, v.assignment) for v in values]
    assert objs[0] >= objs[1] >= objs[2]


def test_a_passed_time_limit_starts_no_round_and_no_generation():
    inst = er(seed=4)
    limited = H.memetic(inst, seed=1, population=3, generations=50, rounds=50,
                        time_limit=1e-9)
    bare = H.memetic(inst, seed=1, population=3, generations=0, rounds=0)
    assert limited.assignment == bare.assignment


@pytest.mark.parametrize(("option", "value"), [
    ("population", 1), ("generations", -1), ("rounds", -2), ("strength", 0.0),
    ("strength", 1.5), ("time_limit", 0.0), ("time_limit", float("nan")),
])
def test_bad_options_name_their_field(option, value):
    with pytest.raises(InstanceError, match=option):
        dmlopt.heuristic(er(n=6), "memetic", **{**SMALL, option: value})


def test_ctrl_c_hands_back_the_best_member_so_far(monkeypatch):
    """Ctrl-C during the generations: the best member so far rides along (the command line
    writes it); before any member exists it stays a plain KeyboardInterrupt."""
    from dmlopt.errors import Interrupted

    inst = er(seed=2)
    real, calls = H.crossover, []

    def stop_at_third(*a, **k):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(H, "crossover", stop_at_third)
    with pytest.raises(Interrupted) as caught:
        H.memetic(inst, seed=0, **SMALL)
    got = caught.value.solution.assignment
    assert dmlopt.evaluate(inst, caught.value.solution).feasible
    # no worse than the population alone (the same seed makes the same members)
    assert cost(inst, got) <= cost(inst, H.memetic(inst, seed=0, population=3, generations=0,
                                                  rounds=5).assignment)

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(H, "dense_refine", boom)
    monkeypatch.setitem(H._CONSTRUCTIONS, "dense-refine", boom)
    with pytest.raises(KeyboardInterrupt) as plain:
        H.memetic(inst, seed=0, **SMALL)
    assert not isinstance(plain.value, Interrupted)
