"""Compiled robust tabu search kernel for TAP's padded QAP (numba; private).

Taillard's robust tabu search (Parallel Computing 17, 1991) with his O(N^2)-per-iteration
update of the swap-delta matrix, for symmetric F and B with zero diagonals (the padded QAP of
:mod:`dmlopt.heuristics.tap.search`): after swapping (r, s), the delta of every pair (i, j)
disjoint from {r, s} changes by

    2 (F[r,i] - F[r,j] + F[s,j] - F[s,i]) (P[s,i] - P[s,j] + P[r,j] - P[r,i]),

with ``P[a, b] = B[p(a), p(b)]`` kept up to date (two rows and two columns swap per move),

and the pairs touching r or s are recomputed in O(N). A profile of the numpy version showed the
per-call overhead of about 20 numpy operations per move dominating (100-200 us per move at
N = 20); compiled, a move costs about a microsecond, which is what lets the search reach the
QAPLIB optima within a second. The compiled code is cached on disk (``cache=True``) and loaded
when this module is imported (:mod:`dmlopt.heuristics.tap` imports it when numba is installed),
so a timed run never includes compilation or cache loading.

Moves that cannot change anything (two dummy modules, or two slots of the same VM) are skipped.
"""

from __future__ import annotations

import numba
import numpy as np

from dmlopt.heuristics.tap.robust_tabu_kernel import cost as _cost  # one compiled objective


@numba.njit(cache=True)
def _full_delta(f, bp, r, s):
    """Delta of swapping r and s; ``bp[i, k] = B[p(i), p(k)]`` (the permuted distances)."""
    n = bp.shape[0]
    acc = 0.0
    for k in range(n):
        if k != r and k != s:
            acc += (f[r, k] - f[s, k]) * (bp[s, k] - bp[r, k])
    return 2.0 * acc


@numba.njit(cache=True)
def rots(f, b, perm, m, kc, iterations, seed, aspiration):
    """Robust tabu search from ``perm``; returns (best permutation, its cost)."""
    state = rots_start(f, b, perm, m, kc, seed)
    rots_run(f, b, m, kc, state[0], state[1], state[2], state[3], state[4], state[5], state[6],
             1, iterations, aspiration)
    return state[3], state[5][1]


@numba.njit(cache=True)
def rots_start(f, b, perm, m, kc, seed):
    """The state of :func:`rots` before its first iteration: (p, bp, delta, best, tabu,
    sf = [cost, best cost], si = [tenure, lo, hi, stopped]); seeds numba's generator, which
    :func:`rots_run` draws from, so runs in chunks draw the same numbers as one run."""
    np.random.seed(seed)
    n = perm.shape[0]
    p = perm.copy()
    bp = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            bp[i, j] = b[p[i], p[j]]
    delta = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            delta[i, j] = _full_delta(f, bp, i, j)
    cost = _cost(f, b, p)
    best = p.copy()
    sf = np.array([cost, cost])
    si = np.zeros(4, dtype=np.int64)
    tabu = np.zeros((n, n), dtype=np.int64)  # [facility, slot]: iteration it was left + tenure
    if n < 2 or cost <= 0.0:
        si[3] = 1
        return p, bp, delta, best, tabu, sf, si
    lo = max(1, int(0.9 * n))
    hi = max(lo + 1, int(1.1 * n) + 1)
    for i in range(n):
        for j in range(n):
            tabu[i, j] = -(n * m + 1)
    si[0] = np.random.randint(lo, hi)
    si[1] = lo
    si[2] = hi
    return p, bp, delta, best, tabu, sf, si


@numba.njit(cache=True)
def rots_run(f, b, m, kc, p, bp, delta, best, tabu, sf, si, first, last, aspiration):
    """Iterations ``first..last`` of :func:`rots` on the state of :func:`rots_start` (updated
    in place); ``si[3]`` becomes 1 when the search is over (no useful move, or cost 0)."""
    if si[3] != 0:
        return
    n = p.shape[0]
    cost = sf[0]
    best_cost = sf[1]
    tenure = si[0]
    lo = si[1]
    hi = si[2]
    eps = 1e-9 * max(1.0, abs(best_cost))
    for it in range(first, last + 1):
        ri = -1
        rj = -1
        min_delta = np.inf
        already_aspired = False
        for i in range(n):
            vi = p[i] // kc
            for j in range(i + 1, n):
                if (i >= m and j >= m) or vi == p[j] // kc:
                    continue
                d = delta[i, j]
                authorized = tabu[i, p[j]] < it or tabu[j, p[i]] < it
                aspired = (tabu[i, p[j]] < it - aspiration or tabu[j, p[i]] < it - aspiration
                           or cost + d < best_cost - eps)
                if ((aspired and not already_aspired)
                        or (aspired and already_aspired and d < min_delta)
                        or (not aspired and not already_aspired and d < min_delta
                            and authorized)):
                    ri = i
                    rj = j
                    min_delta = d
                    if aspired:
                        already_aspired = True
        if ri < 0:  # every useful move tabu (or none useful): take the best useful one
            for i in range(n):
                for j in range(i + 1, n):
                    if (i < m or j < m) and p[i] // kc != p[j] // kc and delta[i, j] < min_delta:
                        ri = i
                        rj = j
                        min_delta = delta[i, j]
            if ri < 0:
                si[3] = 1
                break
        tabu[ri, p[ri]] = it + tenure
        tabu[rj, p[rj]] = it + tenure
        t = p[ri]
        p[ri] = p[rj]
        p[rj] = t
        for k in range(n):  # swap rows, then columns, of the permuted distances
            x = bp[ri, k]
            bp[ri, k] = bp[rj, k]
            bp[rj, k] = x
        for k in range(n):
            x = bp[k, ri]
            bp[k, ri] = bp[k, rj]
            bp[k, rj] = x
        cost += delta[ri, rj]
        if cost < best_cost - eps:
            cost = _cost(f, b, p)
            best_cost = cost
            best[:] = p
            eps = 1e-9 * max(1.0, abs(best_cost))
            if best_cost <= 0.0:
                si[3] = 1
                break
        for i in range(n):
            for j in range(i + 1, n):
                if i != ri and i != rj and j != ri and j != rj:
                    delta[i, j] += 2.0 * (
                        (f[ri, i] - f[ri, j] + f[rj, j] - f[rj, i])
                        * (bp[rj, i] - bp[rj, j] + bp[ri, j] - bp[ri, i]))
                else:
                    delta[i, j] = _full_delta(f, bp, i, j)
        if it % (2 * n) == 0:
            tenure = np.random.randint(lo, hi)
        if it % 4096 == 0:
            cost = _cost(f, b, p)
    sf[0] = cost
    sf[1] = best_cost
    si[0] = tenure


def _warm_up() -> None:
    """Load (or compile, the first time) the kernel now, at import, not inside a timed run."""
    f = np.zeros((2, 2))
    rots(f, f, np.arange(2, dtype=np.int64), 2, 1, 1, 0, 20)
    state = rots_start(f, f, np.arange(2, dtype=np.int64), 2, 1, 0)  # the chunked entry points
    rots_run(f, f, 2, 1, *state, 1, 1, 20)


_warm_up()
