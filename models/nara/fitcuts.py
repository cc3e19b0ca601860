"""Cover cuts for the aggregate bound of Nara (paper 001): proofs that a set of requests does
not fit the empty data centre at once.

The ``aggregate`` 0-1 program (:mod:`dmlopt.models.nara.bounds`) only asks the accepted active
requests of every step to fit the data centre *as a whole*. Its optimal selection may ask, at
some step, for a set S of requests that cannot be placed together at all. If that is *proven*,
no allocation accepts every request of S (all of S would hold resources at that step), so the
cover inequality

    sum_{i in S} acc_i <= |S| - 1

holds for every allocation and may be added to the 0-1 program. It is a global row: a cover
found at one step also cuts every other step where its requests are active together.

The proof (:func:`fit_bound`): the episode made of S alone, request q of S arriving at step q
and held until step |S| - 1, so that at the last step all of S is active and every earlier
step holds a subset. If S fits the empty data centre at once, giving every request its place in
that placement is an allocation of this small episode that accepts all |S|; so an upper bound
below |S| on the small episode proves that S does not fit. The bound used is ``schedule``
(per-server schedules by column generation, capped by ``aggregate``: see
:func:`dmlopt.models.nara.bounds.schedule_bound`), which on one step is per-server packing of
CPU, memory and access-link pieces; it converges on 10-15 requests in a fraction of a second.
A minimal cover is found by deletion (drop a request when the rest is still proven not to fit).

:func:`cover_bound` alternates: solve the 0-1 program with the cuts found so far, check the
active sets of its selection step by step, add the covers of the sets proven not to fit, solve
again, until no set of the selection is proven infeasible or the time budget is spent. Every
round's value (HiGHS's dual bound of a relaxation of the episode) is a valid bound; the smallest
is returned.
"""

from __future__ import annotations

import math
import time

import numpy as np

from dmlopt import solvers
from dmlopt.bounds import safe
from dmlopt.contract import BoundValue
from dmlopt.models.nara.constants import SENSE
from dmlopt.models.nara.instance import Instance, Request

#: seconds of one fit proof (the schedule bound of the small episode)
FIT_SECONDS = 5.0

#: seconds of the whole cut loop when no time limit is given (alpha, 128 uniform requests: at
#: 60 s within 1-3 requests of the bound at 120 s; docs/nara.md)
COVER_SECONDS = 60.0

Rows = tuple[list[list[int]], list[list[float]], list[float]]


def fit_episode(instance: Instance, members: list[int]) -> Instance:
    """The episode of :func:`fit_bound`: the requests ``members`` of ``instance`` in their
    order, request q held until the last step (t = |members| - q), on the same topology.

    Parameters
    ----------
    instance : Instance
        A Nara episode.
    members : list of int
        Request indices (distinct).

    Returns
    -------
    Instance
        An episode whose last step holds every request of ``members``.

    References
    ----------
    Ours (module docstring).
    """
    k = len(members)
    reqs = [instance.requests[i] for i in members]
    return Instance(topology=instance.topology, k_paths=instance.k_paths,
                    requests=[Request(c=r.c, m=r.m, b=r.b, t=float(k - q))
                              for q, r in enumerate(reqs)])


def fit_bound(instance: Instance, members: list[int], *, time_limit: float = FIT_SECONDS,
              threads: int = 1) -> int:
    """Upper bound on how many of the requests ``members`` can be held at once.

    Parameters
    ----------
    instance : Instance
        A Nara episode.
    members : list of int
        Request indices.
    time_limit : float
        Seconds of the schedule bound (default :data:`FIT_SECONDS`); a stop gives a weaker
        value, still valid.
    threads : int
        HiGHS threads (default 1).

    Returns
    -------
    int
        The ``schedule`` bound of :func:`fit_episode`: below ``len(members)`` it proves that
        the requests do not fit the empty data centre at once.

    References
    ----------
    Paper 001 (Shabka, Zervas), section 3.1; the bound of
    :func:`dmlopt.models.nara.bounds.schedule_bound`; ours: its use as a fit proof.
    """
    from dmlopt.models.nara.bounds import schedule_bound

    if not members:
        return 0
    sub = fit_episode(instance, members)
    res = schedule_bound(sub, time_limit=time_limit, threads=threads, primal=False)
    return int(res.bound)


def minimal_cover(instance: Instance, members: list[int], *, time_limit: float = FIT_SECONDS,
                  threads: int = 1, deadline: float = math.inf) -> list[int]:
    """Shrink a set proven not to fit to a minimal one (deletion filter).

    Parameters
    ----------
    instance : Instance
        A Nara episode.
    members : list of int
        Request indices with ``fit_bound(members) < len(members)``.
    time_limit : float
        Seconds of each fit proof.
    threads : int
        HiGHS threads.
    deadline : float
        ``time.monotonic()`` value after which no more requests are tried (the set so far is
        returned: still proven not to fit).

    Returns
    -------
    list of int
        A subset still proven not to fit; no single request can be dropped from it (when the
        deadline was not reached). Requests are tried largest bandwidth x CPU last.

    References
    ----------
    J. W. Chinneck, *Feasibility and Infeasibility in Optimization*, Springer, 2008, chapter 6
    (deletion filter); ours: with :func:`fit_bound` as the test.
    """
    reqs = instance.requests
    cur = list(members)
    order = sorted(cur, key=lambda i: (reqs[i].b * (reqs[i].c + reqs[i].m), i))
    for i in order:
        if time.monotonic() > deadline:
            break
        rest = [q for q in cur if q != i]
        if rest and fit_bound(instance, rest, time_limit=time_limit,
                              threads=threads) < len(rest):
            cur = rest
    return cur


def _solve(n: int, rows: Rows, time_limit: float, threads: int
           ) -> tuple[str, float, np.ndarray | None]:
    """Maximise sum acc over ``rows`` (0-1); (status, dual bound, solution or None)."""
    from dmlopt.models.nara.bounds import binary_program

    h = binary_program(n, rows, time_limit=time_limit, threads=threads)
    status = h.modelStatusToString(h.getModelStatus())
    dual = float(h.getInfo().mip_dual_bound)
    sol = h.getSolution()
    x = None
    if status == "Optimal" and sol.value_valid:
        x = np.asarray(sol.col_value) > 0.5
    return status, dual, x


def _chosen_sets(instance: Instance, x: np.ndarray) -> list[list[int]]:
    """The selection's active sets, without those contained in the next step's, largest
    first."""
    active = instance.active_sets()
    n = len(active)
    sets: dict[tuple[int, ...], None] = {}
    chosen = [[i for i in act if x[i]] for act in active]
    for j in range(n):
        if chosen[j] and not (j + 1 < n and set(chosen[j]) <= set(chosen[j + 1])):
            sets[tuple(chosen[j])] = None
    return sorted((list(s) for s in sets), key=lambda s: -len(s))


def cover_cuts(instance: Instance, *, time_limit: float | None = None, threads: int = 1,
               max_terms: int = 0, fit_seconds: float = FIT_SECONDS, shrink: bool = True
               ) -> tuple[float, list[tuple[int, ...]], dict[str, float]]:
    """The cut loop of :func:`cover_bound` (module docstring).

    Parameters
    ----------
    instance : Instance
        A Nara episode.
    time_limit : float, optional
        Seconds in all (default :data:`COVER_SECONDS`); the value at any stop is valid.
    threads : int
        HiGHS threads (default 1).
    max_terms : int
        Nonzeros of the aggregate rows (0: the default of
        :func:`dmlopt.models.nara.bounds.aggregate_rows`).
    fit_seconds : float
        Seconds of one fit proof (default :data:`FIT_SECONDS`).
    shrink : bool
        Shrink every proven set to a minimal cover before it is added (default True).

    Returns
    -------
    (bound, cuts, metrics)
        The floor of the safe smallest dual bound over the rounds (at most the number of
        requests that fit the empty data centre); the covers (request indices, sorted: no
        allocation accepts all of one); metrics ``aggregate`` (the first round's bound),
        ``cuts``, ``rounds``, ``checked`` (sets checked), ``proven`` (1 when the last 0-1
        program was solved and none of its sets was proven not to fit: more cover cuts of this
        kind would not move it).

    References
    ----------
    Paper 001 (Shabka, Zervas), sections 3.1-3.2; H. Crowder, E. L. Johnson and M. Padberg,
    "Solving large-scale zero-one linear programming problems", Oper. Res. 31 (1983) 803-834
    (cover inequalities); ours: covers of sets proven not to fit the data centre, the loop.
    """
    from dmlopt.models.nara import bounds as nb

    deadline = time.monotonic() + float(time_limit or COVER_SECONDS)
    n = len(instance.requests)
    index, coef, rhs = nb.aggregate_rows(instance, max_terms=max_terms)
    rows: Rows = (list(index), list(coef), list(rhs))
    best = float(nb._count_bound(instance))
    first = math.nan
    cuts: dict[tuple[int, ...], None] = {}
    known_fit: set[tuple[int, ...]] = set()
    rounds = checked = 0
    done = False
    while True:
        rounds += 1
        status, dual, x = _solve(n, rows, deadline - time.monotonic(), threads)
        if math.isfinite(dual) and status in solvers.DUAL_BOUND_STATUSES:
            best = min(best, float(math.floor(safe(dual, SENSE))))
        if rounds == 1:
            first = best
        if x is None or time.monotonic() > deadline:
            break
        new = 0
        for members in _chosen_sets(instance, x):
            if time.monotonic() > deadline:
                break
            if tuple(members) in known_fit:
                continue
            checked += 1
            left = max(min(fit_seconds, deadline - time.monotonic()), 1e-3)
            if fit_bound(instance, members, time_limit=left, threads=threads) >= len(members):
                known_fit.add(tuple(members))
                continue
            if shrink:
                members = minimal_cover(instance, members, time_limit=fit_seconds,
                                        threads=threads, deadline=deadline)
            key = tuple(sorted(members))
            if key not in cuts:
                cuts[key] = None
                rows[0].append(list(key))
                rows[1].append([1.0] * len(key))
                rows[2].append(float(len(key) - 1))
                new += 1
        if not new:
            done = time.monotonic() <= deadline
            break
    metrics = {"aggregate": first, "cuts": float(len(cuts)), "rounds": float(rounds),
               "checked": float(checked), "proven": float(done)}
    return best, list(cuts), metrics


def cover_bound(instance: Instance, *, time_limit: float | None = None, threads: int = 1,
                primal: bool = True, max_terms: int = 0, fit_seconds: float = FIT_SECONDS,
                shrink: bool = True) -> BoundValue:
    """Upper bound on the accepted requests: ``aggregate`` with cover cuts (module docstring).

    Parameters
    ----------
    instance : Instance
        A Nara episode.
    time_limit : float, optional
        Seconds in all (default :data:`COVER_SECONDS`); the value at any stop is valid.
    threads : int
        HiGHS threads (default 1).
    primal : bool
        Also return netfit's allocation as the solution found on the way (default True).
    max_terms : int
        Nonzeros of the aggregate rows (0: the default of
        :func:`dmlopt.models.nara.bounds.aggregate_rows`).
    fit_seconds : float
        Seconds of one fit proof (default :data:`FIT_SECONDS`).
    shrink : bool
        Shrink every proven set to a minimal cover before it is added (default True).

    Returns
    -------
    BoundValue
        ``bound``: the value of :func:`cover_cuts`, at most the ``aggregate`` bound (its first
        round); metrics as :func:`cover_cuts`.

    References
    ----------
    Paper 001 (Shabka, Zervas), sections 3.1-3.2; Crowder, Johnson and Padberg, Oper. Res. 31
    (1983) (cover inequalities); ours (module docstring).
    """
    from dmlopt.models.nara import bounds as nb

    best, _, metrics = cover_cuts(instance, time_limit=time_limit, threads=threads,
                                  max_terms=max_terms, fit_seconds=fit_seconds, shrink=shrink)
    return BoundValue(best, solution=nb._primal(instance) if primal else None, metrics=metrics)
