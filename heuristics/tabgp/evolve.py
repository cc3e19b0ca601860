"""Iterated local search rounds and the crossover of the memetic search (ours, not in paper 004).

Both work on tau x n label arrays whose every step holds each cluster at most k times, and
keep that: a perturbation or a crossover only permutes labels among vertices of one step, so
each step's cluster sizes stay those of the array it came from.

*ILS round* (:func:`ils_rounds`): from a local optimum, a copy is perturbed - either one random
step (a random subset of vertices is shuffled among its clusters) or a whole vertex block moved
in every step - and searched again (the local search with the path moves, only the perturbed
steps and their neighbours); the result replaces the current solution when it is not worse.

*Crossover* (:func:`crossover`): the second parent's labels are renamed to agree with the first
parent on as many (step, vertex) entries as possible (an assignment problem on the l x l
overlap counts); the child keeps every entry where the parents agree and, per step, shuffles the
first parent's labels among the vertices where they disagree. What good solutions share is
kept, the rest is re-drawn within the same cluster sizes (a partition crossover in the spirit
of Galinier and Hao's for graph colouring and of the memetic graph partitioners).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from dmlopt.heuristics.tabgp.graph import Graph
from dmlopt.heuristics.tabgp.ls import local_search
from dmlopt.heuristics.tabgp.ls import work as ls_work


def ils_rounds(graphs: list[Graph], cur: np.ndarray, cost: Callable[[np.ndarray], float],
               l: int, k: int, alpha: float, rng: np.random.Generator, iterations: int,
               strength: float, stop_at: float = math.inf, deadline: float = math.inf
               ) -> tuple[np.ndarray, float]:
    """``iterations`` ILS rounds from the local optimum ``cur``; the best assignment seen and
    its cost.

    Parameters
    ----------
    graphs : list of Graph
        One graph per step.
    cur : numpy.ndarray
        The tau x n start, a local optimum of the search with the path moves.
    cost : callable
        The objective of an assignment (cut plus alpha per migration).
    l, k, alpha : int, int, float
        Clusters, capacity, migration cost.
    rng : numpy.random.Generator
        Drives the perturbations.
    iterations : int
        Rounds at most.
    strength : float
        Fraction of the vertices a perturbation shuffles (at least 2).
    stop_at : float
        The rounds stop once :func:`dmlopt.heuristics.tabgp.ls.work` reaches this reading; the
        round that reaches it is cut there and kept, like any round, only when not worse.
    deadline : float
        The rounds stop at this :func:`time.perf_counter` reading (checked before each round).

    Returns
    -------
    tuple of (numpy.ndarray, float)
        The best assignment (``cur`` itself when no round improved it) and its cost.

    References
    ----------
    H. R. Lourenco, O. C. Martin, T. Stuetzle, "Iterated local search", Handbook of
    Metaheuristics, Springer 2003; paper 004, section 3 (the local search it repeats).
    """
    tau, n = cur.shape
    best = cur
    best_cost = cur_cost = cost(cur)
    size = max(2, int(round(strength * n)))
    for _ in range(iterations):
        if ls_work() >= stop_at or time.perf_counter() >= deadline:
            break
        trial = cur.copy()
        verts = rng.choice(n, size=min(size, n), replace=False)
        perm = rng.permutation(verts)
        if tau > 1 and rng.random() < 0.5:
            trial[:, verts] = cur[:, perm]  # a block of vertices changes places in every step
        else:
            t = int(rng.integers(tau))
            trial[t, verts] = cur[t, perm]
        # cur is a local optimum: only the changed steps and their neighbours are searched
        changed = (trial != cur).any(axis=1)
        near = changed.copy()
        near[1:] |= changed[:-1]
        near[:-1] |= changed[1:]
        trial = local_search(graphs, trial, l, k, alpha, temporal=True, clean=~near,
                             stop_at=stop_at)
        value = cost(trial)
        if value <= cur_cost + 1e-9:
            cur, cur_cost = trial, value
            if value < best_cost - 1e-9:
                best, best_cost = trial, value
    return best, best_cost


def match_labels(ref: np.ndarray, other: np.ndarray, l: int) -> np.ndarray:
    """``other`` with its cluster names permuted to agree with ``ref`` on the most (step,
    vertex) entries (one permutation for all steps: the objective does not change).

    Parameters
    ----------
    ref, other : numpy.ndarray
        tau x n label arrays with labels 0..l-1.
    l : int
        Number of clusters.

    Returns
    -------
    numpy.ndarray
        The renamed copy of ``other``.

    References
    ----------
    H. W. Kuhn, "The Hungarian method for the assignment problem", Naval Res. Logist. Q. 2,
    1955 (the renaming as an assignment problem on the overlap counts).
    """
    from scipy.optimize import linear_sum_assignment

    overlap = np.zeros((l, l))
    np.add.at(overlap, (ref.ravel(), other.ravel()), 1.0)
    rows, cols = linear_sum_assignment(-overlap)
    rename = np.empty(l, dtype=np.int64)
    rename[cols] = rows
    return rename[other]


def crossover(first: np.ndarray, second: np.ndarray, l: int, rng: np.random.Generator
              ) -> np.ndarray:
    """A child of two tau x n assignments: the entries the parents share (after
    :func:`match_labels`), the first parent's other labels shuffled per step.

    Parameters
    ----------
    first, second : numpy.ndarray
        The parents (tau x n labels 0..l-1).
    l : int
        Number of clusters.
    rng : numpy.random.Generator
        Drives the shuffles.

    Returns
    -------
    numpy.ndarray
        The child; every step has the first parent's cluster sizes.

    References
    ----------
    P. Galinier and J.-K. Hao, "Hybrid evolutionary algorithms for graph coloring", J. Comb.
    Optim. 3, 1999; U. Benlic and J.-K. Hao, "A multilevel memetic approach for improving graph
    k-partitions", IEEE Trans. Evol. Comput. 15(5), 2011 (keeping what the parents share).
    """
    other = match_labels(first, second, l)
    child = first.copy()
    for t in range(first.shape[0]):
        differ = np.flatnonzero(first[t] != other[t])
        child[t, differ] = first[t, rng.permutation(differ)]
    return child
