"""Swap-based search for TAP on its padded QAP (private helpers of :mod:`dmlopt.heuristics.tap`).

A TAP instance with capacity K is a Koopmans-Beckmann QAP on ``N = n * Kc`` slots
(``Kc = min(K, m)``): slot s belongs to VM ``s // Kc``, the slot distance is ``B[s, t] =
D[vm(s), vm(t)]`` (0 on the same VM) and the ``N - m`` free slots hold dummy modules without
traffic. Moving a module to a VM with free capacity is a swap with a dummy; exchanging two modules
is a swap of two real ones, so one move type covers both neighbourhoods of the issue. Since D is
symmetric the objective (8) uses only ``F = (M + M^T) / 2``, which makes every swap delta a
symmetric formula:

    delta(r, s) = 2 sum_{k != r, s} (F[s, k] - F[r, k]) (B[p(r), p(k)] - B[p(s), p(k)])

(O(N) per pair). All ``N^2`` deltas of one solution come from one matrix product (:func:`deltas`),
which numpy does faster than Taillard's incremental update in pure Python for the sizes here.
Swaps of two dummies or of two modules on the same VM change nothing and are masked out.

References
----------
* E. Taillard: Robust taboo search for the quadratic assignment problem, Parallel Computing 17
  (1991) 443-455 (tenure drawn in [0.9 N, 1.1 N], aspiration by objective and by age).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Padded:
    """The padded QAP of a TAP instance: ``F`` (N x N), ``B`` (N x N), m modules, Kc slots/VM."""

    F: np.ndarray
    B: np.ndarray
    m: int
    kc: int

    @property
    def size(self) -> int:
        return int(self.F.shape[0])

    def slot_vm(self) -> np.ndarray:
        return np.arange(self.size) // self.kc


def padded(traffic: np.ndarray, distance: np.ndarray, K: int) -> Padded:
    """Build the padded QAP of (M, D, K)."""
    m, n = traffic.shape[0], distance.shape[0]
    kc = min(K, m)
    size = n * kc
    f = np.zeros((size, size))
    sym = (traffic + traffic.T) / 2.0
    np.fill_diagonal(sym, 0.0)
    f[:m, :m] = sym
    vm = np.arange(size) // kc
    b = distance[np.ix_(vm, vm)].astype(float)
    return Padded(f, b, m, kc)


def to_perm(qap: Padded, assignment: np.ndarray) -> np.ndarray:
    """Facility -> slot permutation of a module -> VM assignment (dummies fill free slots)."""
    size, kc = qap.size, qap.kc
    used = np.zeros(size // kc, dtype=np.int64)
    perm = np.empty(size, dtype=np.int64)
    taken = np.zeros(size, dtype=bool)
    for i, j in enumerate(assignment):
        s = j * kc + used[j]
        used[j] += 1
        perm[i] = s
        taken[s] = True
    perm[qap.m:] = np.flatnonzero(~taken)
    return perm


def to_assignment(qap: Padded, perm: np.ndarray) -> list[int]:
    """Module -> VM of a facility -> slot permutation."""
    return (perm[: qap.m] // qap.kc).tolist()


def total(qap: Padded, perm: np.ndarray) -> float:
    """Objective of a permutation (equals TAP objective (8))."""
    return float((qap.F * qap.B[np.ix_(perm, perm)]).sum())


def deltas(f: np.ndarray, b: np.ndarray, perm: np.ndarray) -> np.ndarray:
    """``delta[r, s]``: objective change of swapping facilities r and s (symmetric F, B)."""
    bp = b[np.ix_(perm, perm)]
    g = f @ bp
    d = np.diag(g)
    return 2.0 * (g + g.T - d[:, None] - d[None, :] + 2.0 * f * bp)


def _useful(qap: Padded, perm: np.ndarray, upper: np.ndarray, real: np.ndarray) -> np.ndarray:
    vm = perm // qap.kc
    return upper & real & (vm[:, None] != vm[None, :])


def _masks(qap: Padded) -> tuple[np.ndarray, np.ndarray]:
    size = qap.size
    upper = np.triu(np.ones((size, size), dtype=bool), 1)
    is_real = np.arange(size) < qap.m
    return upper, is_real[:, None] | is_real[None, :]


def descent(qap: Padded, perm: np.ndarray, cost: float) -> tuple[np.ndarray, float]:
    """Best-improvement swap descent to a local optimum."""
    upper, real = _masks(qap)
    perm = perm.copy()
    while True:
        d = deltas(qap.F, qap.B, perm)
        d[~_useful(qap, perm, upper, real)] = np.inf
        k = int(np.argmin(d))
        r, s = divmod(k, qap.size)
        if not d[r, s] < -1e-9 * max(1.0, abs(cost)):
            return perm, cost
        perm[r], perm[s] = perm[s], perm[r]
        cost += float(d[r, s])


def _kick(qap: Padded, perm: np.ndarray, rng: np.random.Generator, swaps: int) -> np.ndarray:
    perm = perm.copy()
    real = np.arange(qap.m)
    for _ in range(swaps):
        r = int(rng.choice(real)) if qap.m else 0
        s = int(rng.integers(qap.size))
        perm[r], perm[s] = perm[s], perm[r]
    return perm


def iterated_descent(qap: Padded, perm: np.ndarray, rng: np.random.Generator, restarts: int,
                     time_limit: float | None = None) -> np.ndarray:
    """Descent, then ``restarts`` times: perturb the best solution, descend, keep if better."""
    t0 = time.perf_counter()
    best, best_cost = descent(qap, perm, total(qap, perm))
    kick = max(2, qap.m // 4)
    for _ in range(restarts):
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            break
        start = _kick(qap, best, rng, kick)
        cand, cost = descent(qap, start, total(qap, start))
        if cost < best_cost - 1e-9 * max(1.0, abs(best_cost)):
            best, best_cost = cand, cost
    return best


def robust_tabu(qap: Padded, perm: np.ndarray, rng: np.random.Generator, iterations: int,
                time_limit: float | None = None) -> np.ndarray:
    """Taillard's robust tabu search on the padded QAP; returns the best permutation seen.

    A swap (r, s) is tabu when both r and s would return to slots they left within the last
    ``tenure`` iterations (tenure redrawn in [0.9 N, 1.1 N] every 2N iterations); a tabu move
    is allowed if it improves the best objective (aspiration); a move that puts both facilities
    in slots they have not held for ``5 N^2`` iterations is forced (long-term aspiration).
    """
    t0 = time.perf_counter()
    size = qap.size
    upper, real = _masks(qap)
    perm = perm.copy()
    cost = total(qap, perm)
    best, best_cost = perm.copy(), cost
    if size < 2 or best_cost <= 0:
        return best
    lo, hi = max(1, int(0.9 * size)), max(2, int(1.1 * size) + 1)
    tenure = int(rng.integers(lo, hi))
    tabu_until = np.zeros((size, size), dtype=np.int64)  # [facility, slot]
    last_held = np.full((size, size), -1, dtype=np.int64)
    last_held[np.arange(size), perm] = 0
    aspiration = 5 * size * size
    for it in range(1, iterations + 1):
        d = deltas(qap.F, qap.B, perm)
        useful = _useful(qap, perm, upper, real)
        if not useful.any():
            break
        until = tabu_until[:, perm]  # until[r, s] = tabu_until[r, perm[s]]
        tabu = (until >= it) & (it <= until.T)
        eps = 1e-9 * max(1.0, abs(best_cost))
        allowed = useful & (~tabu | (cost + d < best_cost - eps))
        held = last_held[:, perm]
        old = (it - held > aspiration) & (it - held.T > aspiration) & useful
        pick = old if old.any() else (allowed if allowed.any() else useful)
        k = int(np.argmin(np.where(pick, d, np.inf)))
        r, s = divmod(k, size)
        tabu_until[r, perm[r]] = it + tenure
        tabu_until[s, perm[s]] = it + tenure
        perm[r], perm[s] = perm[s], perm[r]
        last_held[r, perm[r]] = it
        last_held[s, perm[s]] = it
        cost += float(d[r, s])
        if cost < best_cost - eps:
            cost = total(qap, perm)  # no drift in the incumbent
            best, best_cost = perm.copy(), cost
            if best_cost <= 0:
                break
        if it % (2 * size) == 0:
            tenure = int(rng.integers(lo, hi))
        if it % 128 == 0:
            cost = total(qap, perm)
            if time_limit is not None and time.perf_counter() - t0 > time_limit:
                break
    return best
