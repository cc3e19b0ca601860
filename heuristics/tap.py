"""Heuristics for TAP (paper 000, sections IV-B and IV-C) and improvers.

``cle``
    Cluster Embedding (IV-B). The paper gives the idea, not pseudocode; this is our reading.
    A cluster is the set of VMs attached to one switch (``Instance.cluster_labels``), its capacity
    K times its VM count. Clusters are ordered by capacity (largest first), overlay links by
    weight ``M_ii' + M_i'i`` (heaviest first). For each link with an unplaced end: both ends
    unplaced go to the first cluster (in that order) with room for both, else each to the first
    cluster with room; one end unplaced joins its partner's cluster if it has room, else the first
    cluster with room. Modules without links fill the remaining room last. Inside a cluster the
    cost is ignored (as the paper says): modules fill its VMs in order, K per VM. O(links log
    links + clusters log clusters + links * clusters), the paper's complexity.
``abm``
    Average-Based Matching (IV-C): modules by average traffic ``sum_i' (M_ii' + M_i'i) / (m - 1)``
    (largest first), VMs by average hop count ``sum_j' D_jj' / (n - 1)`` (smallest first); the
    k-th module goes to the k-th slot of the VM order, each VM offering K slots. Ties by index.
``random``
    A uniformly random feasible assignment (a random choice of m of the n K slots).
``local-search`` (option ``start``: a heuristic name, default ``random``)
    Iterated best-improvement descent over moves to a VM with free capacity and pairwise swaps
    (delta of one move O(n), all deltas of a solution in one matrix product; see
    :mod:`dmlopt.heuristics._tap_search`), then ``restarts`` perturb-and-descend rounds from the
    best solution. ``cle-ls``, ``abm-ls``, ``random-ls`` are it with that start.
``tabu`` (option ``start``, default ``random``)
    Iterated robust tabu search on the same neighbourhood: Taillard's robust tabu search
    (compiled with numba when installed) restarted ``rounds`` times from the perturbed best
    solution; see :func:`tabu`.
``rts`` (ours; options ``time_limit``, ``iterations``, ``target``, ``clock``)
    The QAPLIB-scale portfolio: iterated robust tabu search (Taillard 1991) with Taillard's
    incremental delta matrix, a breakout-local-search adaptive perturbation (Benlic and Hao 2013)
    and random restarts, until a time budget (default ``max(1, 10 (N/100)^2)`` s, N = n min(K, m)
    slots), an iteration budget or a target objective; see :mod:`dmlopt.heuristics._tap_rts`.
``faq-2opt`` (peer baseline; option ``restarts``, default 10)
    scipy's ``quadratic_assignment``: FAQ from a random start, then 2-opt, best of ``restarts``;
    see :mod:`dmlopt.heuristics._tap_faq`.

All return a :class:`~dmlopt.models.tap.Solution`; none imports Pyomo.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
from dmlopt.heuristics import _tap_search as ts
from dmlopt.heuristics._tap_faq import faq_2opt
from dmlopt.heuristics._tap_rts import rts
from dmlopt.models.tap import Instance, Solution

from dmlopt.errors import InstanceError


def random_assignment(instance: Instance, *, seed: int = 0) -> Solution:
    """A uniformly random feasible assignment: m distinct slots out of the n K slots."""
    rng = np.random.default_rng(seed)
    kc = min(instance.K, instance.m)
    slots = rng.choice(instance.n * kc, size=instance.m, replace=False)
    return Solution(assignment=(slots // kc).tolist())


def abm(instance: Instance, *, seed: int = 0) -> Solution:
    """Average-Based Matching (section IV-C); deterministic (``seed`` unused)."""
    m, n, kc = instance.m, instance.n, min(instance.K, instance.m)
    module_avg = instance.pair_weight.sum(axis=1) / max(m - 1, 1)
    vm_avg = instance.distance.sum(axis=1) / max(n - 1, 1)
    modules = np.argsort(-module_avg, kind="stable")
    slots = np.repeat(np.argsort(vm_avg, kind="stable"), kc)
    out = np.empty(m, dtype=np.int64)
    out[modules] = slots[:m]
    return Solution(assignment=out.tolist())


def cle(instance: Instance, *, seed: int = 0) -> Solution:
    """Cluster Embedding (section IV-B, our reading: see the module docstring)."""
    m, K = instance.m, instance.K
    labels = instance.cluster_labels
    members = [np.flatnonzero(labels == c) for c in range(int(labels.max()) + 1)]
    members = [vms for vms in members if vms.size]
    order = sorted(range(len(members)), key=lambda c: (-members[c].size, c))
    room = [members[c].size * K for c in order]
    where = np.full(m, -1, dtype=np.int64)  # position in `order` of each module's cluster

    def first_with(space: int) -> int:
        return next((t for t, r in enumerate(room) if r >= space), -1)

    def put(i: int, t: int) -> None:
        where[i] = t
        room[t] -= 1

    w = np.triu(instance.pair_weight, 1)
    links = np.argwhere(w > 0)
    links = links[np.lexsort((links[:, 1], links[:, 0], -w[links[:, 0], links[:, 1]]))]
    for i, k in links.tolist():
        free = [x for x in (i, k) if where[x] < 0]
        if len(free) == 2:
            t = first_with(2)
            if t >= 0:
                put(i, t)
                put(k, t)
            else:
                put(i, first_with(1))
                put(k, first_with(1))
        elif len(free) == 1:
            x, partner = free[0], (k if free[0] == i else i)
            t = int(where[partner])
            put(x, t if room[t] >= 1 else first_with(1))
    for i in np.flatnonzero(where < 0).tolist():
        put(i, first_with(1))
    out = np.empty(m, dtype=np.int64)
    for t, c in enumerate(order):
        placed = np.flatnonzero(where == t)
        out[placed] = np.repeat(members[c], K)[: placed.size]
    return Solution(assignment=out.tolist())


def _start(instance: Instance, start: Any, seed: int) -> np.ndarray:
    """The starting assignment: a heuristic name, a Solution, or a list of VMs."""
    if isinstance(start, str):
        if start not in _CONSTRUCTIVE:
            raise InstanceError("start", start, "is not a starting heuristic (one of "
                                f"{', '.join(_CONSTRUCTIVE)})")
        sol = _CONSTRUCTIVE[start](instance, seed=seed)
    elif isinstance(start, Solution):
        sol = start
    else:
        assignment = start.get("assignment") if isinstance(start, dict) else start
        sol = Solution(assignment=list(assignment))
    from dmlopt.models.tap import evaluate

    ev = evaluate(instance, sol)
    if not ev.feasible:
        raise InstanceError("start", "solution", f"is infeasible ({ev.violations[0]})")
    return np.asarray(sol.assignment, dtype=np.int64)


def local_search(instance: Instance, *, seed: int = 0, start: Any = "random",
                 restarts: int = 30, time_limit: float | None = None) -> Solution:
    """Iterated swap/move descent from ``start`` (see the module docstring)."""
    if restarts < 0:
        raise InstanceError("restarts", restarts, "must be >= 0")
    rng = np.random.default_rng(seed)
    a = _start(instance, start, seed)
    qap = ts.padded(instance.traffic, instance.distance, instance.K)
    best = ts.iterated_descent(qap, ts.to_perm(qap, a), rng, restarts, time_limit)
    return Solution(assignment=ts.to_assignment(qap, best))


def tabu(instance: Instance, *, seed: int = 0, start: Any = "random", rounds: int = 6,
         iterations: int | None = None, kick: float = 1.0, time_limit: float | None = None,
         engine: str = "auto") -> Solution:
    """Iterated robust tabu search (Taillard 1991 inside Misevicius' iterated tabu search).

    ``rounds`` tabu runs of ``iterations`` moves each (default ``25 N^2``, N = n min(K, m) slots,
    capped at 20 000), the first from ``start``, the others from the best solution perturbed by
    ``kick * N`` random swaps (the default 1.0 is close to a random restart, which measured best
    on QAPLIB's chr instances; smaller values intensify); ``time_limit`` (seconds) is checked
    between rounds. ``engine``: "numba" (compiled kernel), "numpy", or "auto".
    """
    qap = ts.padded(instance.traffic, instance.distance, instance.K)
    if iterations is None:
        iterations = min(20_000, 25 * qap.size * qap.size)
    for field, value in (("iterations", iterations), ("rounds", rounds)):
        if value < 1:
            raise InstanceError(field, value, "must be >= 1")
    if not 0 < kick <= 1:
        raise InstanceError("kick", kick, "must be in (0, 1]")
    if engine not in ("auto", "numba", "numpy"):
        raise InstanceError("engine", engine, "must be auto, numba or numpy")
    rng = np.random.default_rng(seed)
    a = _start(instance, start, seed)
    best = ts.iterated_tabu(qap, ts.to_perm(qap, a), rng, rounds, iterations, kick, time_limit,
                            engine)
    return Solution(assignment=ts.to_assignment(qap, best))


_CONSTRUCTIVE = {"cle": cle, "abm": abm, "random": random_assignment}

HEURISTICS = {
    "cle": cle,
    "abm": abm,
    "random": random_assignment,
    "local-search": local_search,
    "cle-ls": partial(local_search, start="cle"),
    "abm-ls": partial(local_search, start="abm"),
    "random-ls": partial(local_search, start="random"),
    "tabu": tabu,
    "rts": rts,
    "faq-2opt": faq_2opt,
}
