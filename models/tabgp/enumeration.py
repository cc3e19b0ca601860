"""TABGP (paper 004): an exact enumeration for up to three steps (ours; the ``enum`` bound).

The method proves optima that the MIP of the ``pairs`` formulation leaves open at n = 20
(``n20-p05-tau3-s0``: an hour of HiGHS stopped at bound 168 against 173). It exploits that
migration is expensive: an optimal sequence of partitions stays close to one *reference*
partition.

Decomposition around a reference step
-------------------------------------
Write d(P', P) for the fewest vertices whose label must change to turn the labelled partition P
into P' (the migration cost between consecutive steps is alpha d). With tau <= 3 steps take the
reference step r (the middle one for tau = 3, step 0 otherwise); every other step is next to r,
so, for a fixed P_r, the other steps are independent and

    OPT = min over P_r of F(P_r),   F(P) = cut_r(P) + sum_{t != r} h_t(P),
    h_t(P) = min over P' of cut_t(P') + alpha d(P', P).

Bounds that prune the reference partitions
------------------------------------------
Let U be an upper bound (a feasible solution's cost) and c_t* the least cut of step t alone
(computed exactly first). A solution costing less than U moves at most
M = floor((U - sum_t c_t*) / alpha) vertices in all. Write G_t(P) = cut_t(P) - h_t(P) >= 0 for
what step t gains by leaving P. For a set D of moved vertices, the edges at D that are inside a
cluster afterwards weigh at most sum_{v in D} top_t(v), the k - 1 heaviest edges of v at step t
(its cluster holds at most k - 1 others); before, they weigh at least half of
sum_{v in D} in_t(v, P) (v's edges into its own cluster; an edge inside D is counted twice). So

    G_t(P) <= max over D of sum_{v in D} (top_t(v) - in_t(v, P) / 2 - alpha),

and with |D_0| + |D_2| <= M, G(P) = sum_{t != r} G_t(P) is at most the sum of the M largest
positive terms over (t, v), and at most sum_{t != r} (cut_t(P) - c_t*). Then
F(P) >= cut_S(P) - G(P), cut_S being the cut of the summed graph (the edges of all steps). The
search enumerates the reference partitions with cut_S(P) - Gamma < U, Gamma the same top-M sum
with in_t = 0 (independent of P), by a depth-first search over the vertices (restricted-growth
labels, clusters of at most k) that prunes with the k - 1 heaviest remaining edges of every
unassigned vertex; at a leaf the P-specific bound above is checked, and only then h_t(P) is
computed exactly by a second depth-first search over the labelled partitions of step t with at
most floor((cut_t(P) - c_t*) / alpha) label changes. A leaf better than U becomes the incumbent
and U shrinks during the search. The search starts from the best static partition (the same
partition at every step, the least cut of the summed graph) and the caller's start.

When the search ends, no solution costs less than U - delta (delta = 1 when alpha and all
weights are integers: the objective is then an integer; else a relative 1e-9), so U - delta is a
valid bound; interrupted by the time limit, sum_t c_t* is.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from dmlopt.bounds import safe
from dmlopt.contract import BoundValue, Size

#: seconds the enumeration runs when no time limit is given
ENUM_SECONDS = 3600.0

#: nodes of the depth-first search between two looks at the clock
_CHUNK = 2_000_000

#: nodes of one exact search of a non-reference step (h_t) before the enumeration gives up
#: (only when alpha is small against the weights: many label changes stay affordable)
NEAREST_NODES = 50_000_000


def _kernels() -> Any:
    """The numba kernels, compiled on first use (the module imports without numba's cost)."""
    from dmlopt.models.tabgp import _enum_kernels

    return _enum_kernels


def weight_matrices(instance: Any) -> np.ndarray:
    """Edge weights as a (tau, n, n) symmetric array (0 for no edge)."""
    W = np.zeros((instance.tau, instance.n, instance.n))
    for t, edges in enumerate(instance.edges):
        for j, (u, v) in enumerate(edges):
            W[t, u, v] = W[t, v, u] = instance.weight(t, j)
    return W


def _integral(instance: Any) -> bool:
    ws = [instance.weight(t, j) for t in range(instance.tau) for j in range(len(instance.edges[t]))]
    return float(instance.alpha).is_integer() and all(float(w).is_integer() for w in ws)


def _min_cut(W: np.ndarray, l: int, k: int, start_internal: float,
             deadline: float | None = None) -> tuple[float, np.ndarray]:
    """The largest internal weight of a partition of W's graph into at most l clusters of at
    most k vertices (so the least cut), and one such partition's labels; SolverError once
    ``time.perf_counter()`` passes ``deadline`` (no bound is known before it ends)."""
    from dmlopt.errors import SolverError

    K = _kernels()
    order = np.argsort(-W.sum(axis=1), kind="stable")
    Wo = np.ascontiguousarray(W[np.ix_(order, order)])
    try:
        best, labels = K.max_internal(Wo, l, k, start_internal - 1e-9, deadline)
    except K.OutOfTime:
        raise SolverError("bound: enum: the least cuts of the steps were not found within the "
                          "time limit: no bound") from None
    out = np.empty_like(labels)
    out[order] = labels
    return float(best), out


def enum_bound(instance: Any, *, time_limit: float | None = None, start: Any = None
               ) -> BoundValue:
    """Exact optimum of a TABGP instance with at most three steps, by enumeration (ours).

    Parameters
    ----------
    instance : Instance
        A TABGP instance with tau <= 3 (more steps are refused: the decomposition around one
        reference step needs every other step next to it).
    time_limit : float, optional
        Seconds (default :data:`ENUM_SECONDS`, checked every 2 million search nodes); when it
        stops the search, the bound is the sum of the per-step least cuts, still valid, and the
        solution the best found so far. When it passes before those least cuts are known
        there is no bound: SolverError (``dmlopt.solve`` then runs the MIP, ``dmlopt.bound``
        without a method the next method).
    start : Solution, optional
        A feasible solution whose cost starts the upper bound.

    Returns
    -------
    BoundValue
        ``bound``: the optimum (moved by :func:`dmlopt.bounds.safe`) when the search ended, with
        ``solution`` reaching it; metrics ``complete`` (1 or 0), ``gave_up`` (1 when a step's
        exact search exceeded :data:`NEAREST_NODES`: alpha small against the weights),
        ``nodes``, ``leaves`` (reference
        partitions whose other steps were solved exactly), ``static`` (the best static
        partition's cost), ``step_cuts`` (sum of the per-step least cuts), ``seconds``, and
        ``interrupted`` (1) after Ctrl-C, which ends the search like the time limit.

    Raises
    ------
    InstanceError
        If tau > 3, or ``start`` is not feasible.
    SolverError
        If the time limit passes before the static and per-step least cuts are found.

    References
    ----------
    Ours (module docstring of :mod:`dmlopt.models.tabgp.enumeration`): the decomposition around
    a reference step, the gain bound and the depth-first search; the problem is paper 004's
    (Figiel, Nichterlein, Schmid), section 1, its ILP section 4.2.
    """
    from dmlopt.errors import InstanceError, interrupt_of
    from dmlopt.models.tabgp.instance import Solution, evaluate

    if instance.tau > 3:
        raise InstanceError("tau", instance.tau, "the enumeration handles at most 3 steps")
    t0 = time.perf_counter()
    limit = ENUM_SECONDS if time_limit is None else float(time_limit)
    # at most n labels are ever needed (a step has at most n non-empty clusters, and a cluster
    # left by all its vertices can take a new one without adding migration), none above n
    l, k = min(instance.l, instance.n), min(instance.k, instance.n)
    tau, alpha = instance.tau, float(instance.alpha)
    W = weight_matrices(instance)
    S = W.sum(axis=0)
    total_s = float(S.sum()) / 2
    deadline = t0 + limit
    static_int, static_labels = _min_cut(S, l, k, 0.0, deadline)
    inc = np.tile(static_labels, (tau, 1))
    ub = total_s - static_int
    if isinstance(start, Solution):
        ev = evaluate(instance, start)
        if not ev.feasible:  # refused as the MIP's warm_start refuses it
            raise InstanceError("warm_start", ev.violations[0], "is not a feasible start")
        if ev.objective < ub:
            ub, inc = float(ev.objective), np.asarray(start.assignment, dtype=np.int64)
    steps = [_min_cut(W[t], l, k, float(
        (W[t] * (static_labels[:, None] == static_labels[None, :])).sum()) / 2, deadline)
        for t in range(tau)]
    cstar = np.array([float(W[t].sum()) / 2 - steps[t][0] for t in range(tau)])
    if alpha <= 0:  # migration is free: every step on its own
        sol = Solution(assignment=np.array([s[1] for s in steps]).tolist())
        return BoundValue(bound=safe(float(cstar.sum()), "min"), solution=sol, metrics={
            "complete": 1.0, "gave_up": 0.0, "nodes": 0.0, "leaves": 0.0,
            "static": total_s - static_int,
            "step_cuts": float(cstar.sum()), "seconds": time.perf_counter() - t0})
    search = _Search(W, l, k, alpha, cstar, ub, _integral(instance))
    interrupted = False
    try:
        complete = search.run(t0 + limit)
    except (KeyboardInterrupt, SystemError) as exc:  # Ctrl-C: the incumbent and a valid bound
        if isinstance(exc, SystemError) and not interrupt_of(exc):
            raise
        complete, interrupted = False, True
    if search.best is not None:
        inc = search.best
    metrics = {"complete": float(complete), "gave_up": float(search.gave_up),
               "nodes": float(search.nodes),
               "leaves": float(search.leaves), "static": total_s - static_int,
               "step_cuts": float(cstar.sum()), "seconds": time.perf_counter() - t0}
    if interrupted:
        metrics["interrupted"] = 1.0
    bound = search.bound() if complete else float(cstar.sum())
    sol = Solution(assignment=np.asarray(inc, dtype=np.int64).tolist())
    return BoundValue(bound=safe(max(bound, 0.0), "min"), solution=sol, metrics=metrics)


class _Search:
    """The depth-first search over the reference partitions (module docstring), resumable in
    chunks of nodes so that the time limit is checked between them."""

    def __init__(self, W: np.ndarray, l: int, k: int, alpha: float, cstar: np.ndarray,
                 ub: float, integral: bool) -> None:
        K = _kernels()
        self.tau, n = W.shape[0], W.shape[1]
        self.l, self.k, self.alpha, self.cstar, self.ub = l, k, alpha, cstar, ub
        self.integral = integral
        self.r = 1 if self.tau == 3 else 0
        self.others = np.array([t for t in range(self.tau) if t != self.r], dtype=np.int64)
        S = W.sum(axis=0)
        self.order = np.argsort(-S.sum(axis=1), kind="stable")
        self.W = np.ascontiguousarray(W[:, self.order][:, :, self.order])
        self.S = np.ascontiguousarray(S[np.ix_(self.order, self.order)])
        self.total_s = float(self.S.sum()) / 2
        self.top = K.topsums(self.S, k)
        # top_t(v): the k - 1 heaviest edges of v at step t
        self.topk = -np.sort(-self.W, axis=2)[:, :, :max(k - 1, 0)].sum(axis=2)
        self.state = K.new_state(n, l)
        self.best: np.ndarray | None = None
        self.nodes = self.leaves = 0
        self.gave_up = False

    def slack(self) -> float:
        """A solution must cost at most ub - slack to improve (half a unit when costs are
        integers, a relative 5e-10 otherwise)."""
        return 0.5 if self.integral else 5e-10 * max(1.0, abs(self.ub))

    def bound(self) -> float:
        """The bound once the search has ended: no solution costs ub - slack or less."""
        return self.ub if self.integral else self.ub - self.slack()

    def _moves(self) -> int:
        if self.alpha <= 0:
            return self.W.shape[1] * self.tau
        return int(np.floor((self.ub - self.slack() - self.cstar.sum()) / self.alpha + 1e-9))

    def _need(self, moves: int) -> float:
        """Least summed-graph internal weight of a reference partition that may improve."""
        gains = np.maximum(self.topk[self.others] - self.alpha, 0.0).ravel()
        gamma = float(np.sort(gains)[::-1][:max(moves, 0)].sum())
        return self.total_s - (self.ub - self.slack()) - gamma

    def run(self, deadline: float) -> bool:
        """Search until the end (True) or the deadline (False)."""
        K = _kernels()
        n = self.W.shape[1]
        out = np.zeros((self.tau, n), dtype=np.int64)
        moves = self._moves()
        if moves < 0:
            return True
        need = self._need(moves)
        while True:
            code = K.dfs(self.S, self.top, self.l, self.k, need, *self.state, _CHUNK)
            self.nodes = int(self.state[6][1])
            if code == 0:
                return True
            if code == 2:
                if time.perf_counter() > deadline:
                    return False
                continue
            self.leaves += 1
            limit = self.ub - self.slack()
            f = K.leaf(self.W, self.state[0], self.l, self.k, self.others, self.r, self.cstar,
                       self.topk, self.alpha, limit, moves, out, NEAREST_NODES)
            if np.isnan(f):
                self.gave_up = True
                return False
            if f <= limit + 1e-9:
                self.ub = float(f)
                self.best = np.empty_like(out)
                self.best[:, self.order] = out
                moves = self._moves()
                if moves < 0:
                    return True
                need = self._need(moves)


def estimate_enum(instance: Any, _options: Any) -> Size:
    """Memory and work of :func:`enum_bound`: the number of partitions of the vertices into at
    most l clusters of at most k (what the search may visit) times n per step; 1e300 (refused
    by any size limit) when tau > 3, which the method does not handle, or when the count
    reaches 1e300. Computed in floating point, in time O(n) once the count is known to stay
    below 1e300 (:func:`partition_count`), never in big integers."""
    n, l, k = instance.n, min(instance.l, instance.n), min(instance.k, instance.n)
    if instance.tau > 3:
        return Size(memory=0.0, work=HUGE)
    count = partition_count(n, l, k)
    return Size(memory=64.0 * n * n * max(1, instance.tau) * (k + 2),
                work=min(count * n * instance.tau, HUGE))


#: the count at which the estimate stops counting (refused by any size limit)
HUGE = 1e300


def _log_factorials(n: int) -> np.ndarray:
    return np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, n + 1, dtype=float)))))


def partition_count(n: int, l: int, k: int) -> float:
    """:func:`_n_partitions` in floating point, capped at :data:`HUGE`.

    First a lower bound in O(n): for each number b of clusters that can hold the n vertices
    (ceil(n / k) <= b <= min(l, n)), the partitions into b clusters of balanced sizes number at
    least n! / (prod s_i! b!). When one reaches :data:`HUGE`, so does the count. Otherwise
    n <= ~1,000 (two clusters already give about 2^n / n partitions), l = 1 is counted directly,
    and the recurrence of :func:`_n_partitions` runs in floats, one vector operation per vertex.

    Parameters
    ----------
    n, l, k : vertices, clusters, cluster capacity.

    Returns
    -------
    float
        The number of partitions (relative error about 1e-12), or :data:`HUGE`.

    References
    ----------
    The restricted Stirling numbers of the second kind; this module's docstring.
    """
    l, k = min(l, n), min(k, n)
    if n == 0:
        return 1.0
    if l * k < n:
        return 0.0
    if l == 1:
        return 1.0
    lf = _log_factorials(n)
    b = np.arange(max(1, -(-n // k)), l + 1)
    q, r = n // b, n % b
    lower = lf[n] - r * lf[np.minimum(q + 1, n)] - (b - r) * lf[q] - lf[b]
    if float(lower.max()) >= math.log(HUGE):
        return HUGE
    # ways[j, c]: partitions of j vertices into c clusters (the smallest vertex's cluster first)
    ways = np.zeros((n + 1, l + 1))
    ways[0, 0] = 1.0
    with np.errstate(over="ignore", invalid="ignore"):
        for j in range(1, n + 1):
            s = np.arange(1, min(k, j) + 1)
            coef = np.exp(lf[j - 1] - lf[s - 1] - lf[j - s])
            ways[j, 1:] = coef @ ways[j - s, :-1]
    total = float(ways[n].sum())
    return HUGE if not math.isfinite(total) or total >= HUGE else total


def _n_partitions(n: int, l: int, k: int) -> int:
    """Partitions of n labelled vertices into at most l unlabelled clusters of size 1..k."""
    l, k = min(l, n), min(k, n)  # at most n clusters are non-empty, none holds more than n
    # ways[j][b]: partitions of j vertices into b clusters (the smallest vertex's cluster first)
    ways = [[0] * (l + 1) for _ in range(n + 1)]
    ways[0][0] = 1
    for j in range(1, n + 1):
        for b in range(1, l + 1):
            ways[j][b] = sum(math.comb(j - 1, s - 1) * ways[j - s][b - 1]
                             for s in range(1, min(k, j) + 1))
    return sum(ways[n][b] for b in range(l + 1))


__all__ = ["ENUM_SECONDS", "HUGE", "NEAREST_NODES", "enum_bound", "estimate_enum",
           "partition_count", "weight_matrices"]
