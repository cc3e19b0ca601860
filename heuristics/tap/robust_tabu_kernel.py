"""Compiled kernel of ``rts`` (:mod:`dmlopt.heuristics.tap.robust_tabu`): robust tabu search
in chunks.

The search state lives in arrays owned by the caller, so a run is a sequence of calls of
:func:`run` with a bounded number of iterations each: the caller checks the clock between calls
(numba cannot) and perturbs the solution between tabu phases. Same padded QAP as
:mod:`dmlopt.heuristics.tap.search` (symmetric F and B, zero diagonals, N slots, m real
modules, ``kc`` slots per VM).

Delta matrix (Taillard 1991, section 3): ``delta[i, j]`` (i < j) is the objective change of
swapping facilities i and j. After the swap (r, s), every pair disjoint from {r, s} is updated in
O(1),

    delta[i, j] += 2 (F[r,i] - F[r,j] + F[s,j] - F[s,i]) (P[s,i] - P[s,j] + P[r,j] - P[r,i]),

with ``P[a, b] = B[p(a), p(b)]`` (rows and columns r, s swapped after the move), and the O(N)
pairs touching r or s are recomputed in O(N) each: O(N^2) per iteration in all.

Integer state ``si``: 0 iteration counter, 1 tenure, 2 iteration of the last phase-best
improvement. Float state ``sf``: 0 current cost, 1 phase-best cost.
"""

from __future__ import annotations

import numba
import numpy as np

#: return codes of :func:`run`
BUDGET, STALLED, TARGET, STUCK = 0, 1, 2, 3


@numba.njit(cache=True, fastmath=True)
def _pair_delta(f, bp, r, s):
    """Delta of swapping r and s, O(N): ``2 sum_k (F[r,k] - F[s,k]) (P[s,k] - P[r,k])``.

    The terms k = r and k = s are included and subtracted (a loop without a branch, which the
    compiler vectorises); F and P have zero diagonals.
    """
    n = bp.shape[0]
    fr = f[r]
    fs = f[s]
    br = bp[r]
    bs = bp[s]
    acc = 0.0
    for k in range(n):
        acc += (fr[k] - fs[k]) * (bs[k] - br[k])
    acc -= (fr[r] - fs[r]) * (bs[r] - br[r]) + (fr[s] - fs[s]) * (bs[s] - br[s])
    return 2.0 * acc


@numba.njit(cache=True)
def cost(f, b, p):
    """Objective ``sum_ij F[i, j] B[p(i), p(j)]``."""
    n = p.shape[0]
    acc = 0.0
    for i in range(n):
        for j in range(n):
            acc += f[i, j] * b[p[i], p[j]]
    return acc


@numba.njit(cache=True)
def reset(f, b, p, bp, delta):
    """Fill ``bp`` and the upper triangle of ``delta`` for ``p``; return the cost of ``p``."""
    n = p.shape[0]
    for i in range(n):
        for j in range(n):
            bp[i, j] = b[p[i], p[j]]
    for i in range(n):
        for j in range(i + 1, n):
            delta[i, j] = _pair_delta(f, bp, i, j)
    return cost(f, b, p)


@numba.njit(cache=True, fastmath=True)
def _apply(f, p, bp, delta, r, s):
    """Swap facilities r < s and update ``bp`` and ``delta`` (Taillard's O(N^2) update)."""
    n = p.shape[0]
    t = p[r]
    p[r] = p[s]
    p[s] = t
    for k in range(n):
        x = bp[r, k]
        bp[r, k] = bp[s, k]
        bp[s, k] = x
    for k in range(n):
        x = bp[k, r]
        bp[k, r] = bp[k, s]
        bp[k, s] = x
    fr = f[r]
    fs = f[s]
    br = bp[r]
    bs = bp[s]
    for i in range(n - 1):  # O(1) update of every pair (branch-free inner loop) ...
        if i in (r, s):
            continue
        a = fr[i] - fs[i]
        c = bs[i] - br[i]
        row = delta[i]
        for j in range(i + 1, n):
            row[j] += 2.0 * ((a - fr[j] + fs[j]) * (c - bs[j] + br[j]))
    for i in range(n):  # ... then the pairs touching r or s, recomputed in O(N)
        if i != r:
            if i < r:
                delta[i, r] = _pair_delta(f, bp, i, r)
            else:
                delta[r, i] = _pair_delta(f, bp, r, i)
        if i != s:
            if i < s:
                delta[i, s] = _pair_delta(f, bp, i, s)
            else:
                delta[s, i] = _pair_delta(f, bp, s, i)


@numba.njit(cache=True)
def swap(f, p, bp, delta, r, s):
    """Public form of the move (r, s) with its delta update (for tests and perturbations)."""
    if r > s:
        r, s = s, r
    _apply(f, p, bp, delta, r, s)


@numba.njit(cache=True)
def run(f, b, m, kc, p, bp, delta, tabu, best, si, sf, max_iters, stall, target, aspiration,
        lo, hi, seed):
    """Robust tabu search (Taillard 1991) from the state, for at most ``max_iters`` iterations.

    A swap (i, j) is tabu when both facilities would return to slots they left less than
    ``tenure`` iterations ago (tenure redrawn uniformly in [lo, hi) every 2N iterations); a tabu
    move is allowed when it improves the phase best (aspiration by objective); a move placing a
    facility in a slot it left more than ``aspiration`` iterations ago is taken first
    (aspiration by age, Taillard's long-term diversification). Swaps that change nothing (two
    dummy facilities, two slots of one VM) are skipped. ``tabu[i, slot]``: the iteration until
    which facility i may not return to ``slot``.

    Returns :data:`BUDGET` (iterations used up), :data:`STALLED` (no phase-best improvement in
    ``stall`` iterations), :data:`TARGET` (phase best <= ``target``) or :data:`STUCK` (no
    useful move). ``best`` holds the phase-best permutation, ``sf[1]`` its cost.
    """
    np.random.seed(seed)
    n = p.shape[0]
    if n < 2 or m < 1:
        return STUCK
    vm = np.empty(n, dtype=np.int64)
    for i in range(n):
        vm[i] = p[i] // kc
    tabu_t = np.empty((n, n), dtype=np.int64)  # tabu_t[slot, i] = tabu[i, slot], row access
    for i in range(n):
        for k in range(n):
            tabu_t[k, i] = tabu[i, k]
    rows = min(m, n - 1)  # pairs (i, j), i < j, with i a real module: i < m
    done = 0
    code = BUDGET
    while done < max_iters:
        it = si[0] + 1
        si[0] = it
        done += 1
        cur = sf[0]
        best_cost = sf[1]
        lim = best_cost - 1e-9 * max(1.0, abs(best_cost)) - cur  # d < lim: new phase best
        old = it - aspiration
        ri = -1
        rj = -1
        min_delta = np.inf
        aspired_found = False
        for i in range(rows):
            vi = vm[i]
            pi = p[i]
            for j in range(i + 1, n):
                if vm[j] == vi:
                    continue
                d = delta[i, j]
                if aspired_found and d >= min_delta:
                    continue
                ti = tabu[i, p[j]]
                tj = tabu_t[pi, j]
                if d < lim or ti < old or tj < old:
                    if not aspired_found or d < min_delta:
                        ri = i
                        rj = j
                        min_delta = d
                        aspired_found = True
                elif d < min_delta and (ti < it or tj < it):
                    ri = i
                    rj = j
                    min_delta = d
        if ri < 0:  # every useful move tabu: take the best useful one
            for i in range(rows):
                for j in range(i + 1, n):
                    if vm[i] != vm[j] and delta[i, j] < min_delta:
                        ri = i
                        rj = j
                        min_delta = delta[i, j]
            if ri < 0:
                code = STUCK
                break
        until = it + si[1]
        tabu[ri, p[ri]] = until
        tabu_t[p[ri], ri] = until
        tabu[rj, p[rj]] = until
        tabu_t[p[rj], rj] = until
        _apply(f, p, bp, delta, ri, rj)
        x = vm[ri]
        vm[ri] = vm[rj]
        vm[rj] = x
        cur += min_delta
        if min_delta < lim:
            cur = cost(f, b, p)  # exact value: no drift in the incumbent
            sf[1] = cur
            best[:] = p
            si[2] = it
            if cur <= target:
                sf[0] = cur
                code = TARGET
                break
        sf[0] = cur
        if it % (2 * n) == 0:
            si[1] = np.random.randint(lo, hi)
        if it % 8192 == 0:
            sf[0] = cost(f, b, p)
        if it - si[2] >= stall:
            code = STALLED
            break
    return code


def _warm_up() -> None:
    """Load (or compile, the first time) the kernel at import, not inside a timed run."""
    f = np.zeros((3, 3))
    p = np.arange(3, dtype=np.int64)
    bp = np.zeros((3, 3))
    delta = np.zeros((3, 3))
    reset(f, f, p, bp, delta)
    swap(f, p, bp, delta, 0, 1)
    run(f, f, 3, 1, p, bp, delta, np.zeros((3, 3), dtype=np.int64), p.copy(),
        np.zeros(3, dtype=np.int64), np.zeros(2), 1, 1, -np.inf, 10, 1, 2, 0)


_warm_up()
