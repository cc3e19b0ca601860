"""Compiled kernel of ``rts`` (:mod:`dmlopt.heuristics.tap.robust_tabu`): robust tabu search
in chunks, with the delta-matrix update and the choice of the next move fused in one pass.

The search state lives in arrays owned by the caller (:class:`State`), so a run is a sequence of
calls of :func:`run` with a bounded number of iterations each: the caller checks the clock between
calls (numba cannot) and perturbs the solution between tabu phases. Same padded QAP as
:mod:`dmlopt.heuristics.tap.search` (symmetric F and B, zero diagonals, N slots, m real modules
first, ``kc`` slots per VM; F is zero outside its leading m x m block).

Delta matrix (Taillard 1991, section 3): ``delta[i, j]`` (i < j) is the objective change of
swapping facilities i and j. After the swap (r, s), every pair disjoint from {r, s} is updated in
O(1),

    delta[i, j] += (u[i] - u[j]) (v[i] - v[j]),
    u = 2 (F[r] - F[s]),  v = P[s] - P[r],

with ``P[a, b] = B[p(a), p(b)]`` (rows and columns r, s swapped after the move). The 2N pairs
touching r or s take O(1) each from ``Q = F P`` (ours: Taillard recomputes them in O(N) each),

    delta(k, r) = 2 (Q[k, r] + Q[r, k] - Q[k, k] - Q[r, r] + 2 F[k, r] P[k, r]),

and Q follows a move by a rank-one update of its m rows (rows with no flow change skipped) and a
column swap: O(N m) multiply-adds, a quarter of the 2N recomputations of O(2m) each. O(N^2) per
iteration in all. Only rows i < m exist (a pair of two dummies never changes anything). Pairs
that change nothing (two slots of one VM) hold the sentinel :data:`BIG`: their update term is
exactly 0 (their columns of P are equal), so they keep it and the move choice needs no test for
them.

Fused pass (ours): the pairs touching r or s are computed first (``dr``, ``ds``); then each row
is updated by a branch-free loop the compiler vectorises, which also counts the pairs that could
be the next move (delta below the best candidate so far, or aspired by age); its r and s entries
are filled in, and only a row with such pairs is scanned, while it is still in the L1 cache.
The tabu status of a pair is read from ``t2[i, j] = min(tabu[i, p(j)], tabu[j, p(i)])``, kept
up to date in O(N) per move (only pairs touching r or s change), so the scan reads two
contiguous rows and takes its (rare) slow branch only for a pair that could become the move.

Integer state ``si``: 0 iteration counter, 1 tenure, 2 iteration of the last phase-best
improvement. Float state ``sf``: 0 current cost, 1 phase-best cost.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

#: return codes of :func:`run`
BUDGET, STALLED, TARGET, STUCK = 0, 1, 2, 3
#: delta of a pair that changes nothing (two slots of one VM): never chosen
BIG = 1e300
_HALF = 1e299
_NEVER = np.iinfo(np.int64).min // 4


@dataclass
class State:
    """Arrays of one search (N slots): permutation, P = B[p][:, p], delta, tabu, scratch."""

    p: np.ndarray  # facility -> slot, int64 (N,)
    bp: np.ndarray  # (N, N) float64: P = B[p][:, p]
    q: np.ndarray  # (N, N) float64: Q = F P (rows < m)
    delta: np.ndarray  # (N, N) float64, upper triangle of rows < m
    tabu: np.ndarray  # (N, N) int64: tabu[i, slot], the iteration until i may not return to slot
    tabu_t: np.ndarray  # (N, N) int64: tabu_t[slot, i] = tabu[i, slot]
    t2: np.ndarray  # (N, N) int64: min(tabu[i, p(j)], tabu[j, p(i)]), upper triangle
    work: np.ndarray  # (4, N) float64 scratch: u, v, dr, ds
    iwork: np.ndarray  # (3, N) int64: t2 of the pairs touching r and s (scratch); VM of each
    # facility


def state(size: int) -> State:
    """Fresh arrays for N = ``size`` slots (tabu entries far in the past)."""
    tabu = np.empty((size, size), dtype=np.int64)
    for i in range(size):  # distinct old values, as in Taillard's code
        tabu[i] = -(size * i + np.arange(size)) - 1
    return State(np.arange(size, dtype=np.int64), np.zeros((size, size)), np.zeros((size, size)),
                 np.zeros((size, size)),
                 tabu, np.ascontiguousarray(tabu.T), np.zeros((size, size), dtype=np.int64),
                 np.zeros((4, size)), np.zeros((3, size), dtype=np.int64))


@numba.njit(cache=True, fastmath=True)
def _pair_delta(f, bp, m, r, s):
    """Delta of swapping r and s, O(m): ``2 sum_k (F[r,k] - F[s,k]) (P[s,k] - P[r,k])``.

    F is zero from column m on, so the sum stops there; the terms k = r and k = s are included
    and subtracted (a loop without a branch, which the compiler vectorises); F and P have zero
    diagonals.
    """
    fr = f[r]
    fs = f[s]
    br = bp[r]
    bs = bp[s]
    acc = 0.0
    for k in range(m):
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
def reset(f, b, m, kc, p, bp, q, delta, tabu, t2, iwork):
    """Fill ``bp``, ``q = F P``, the VMs ``iwork[2]``, ``delta`` and ``t2`` (upper triangles of
    rows < m) for ``p``; return the cost of ``p``."""
    n = p.shape[0]
    for i in range(n):
        iwork[2, i] = p[i] // kc
    for i in range(n):
        for j in range(n):
            bp[i, j] = b[p[i], p[j]]
    q[:] = 0.0
    for i in range(m):
        for ll in range(m):
            if f[i, ll] != 0.0:
                _axpy(q[i], f[i, ll], bp[ll])
    for i in range(min(m, n)):
        for j in range(i + 1, n):
            if p[i] // kc == p[j] // kc:
                delta[i, j] = BIG
            else:
                delta[i, j] = _pair_delta(f, bp, m, i, j)
            t2[i, j] = min(tabu[i, p[j]], tabu[j, p[i]])
    return cost(f, b, p)


@numba.njit(cache=True, inline="always")
def _scan_row(i, drow, trow, j0, lim, it, old, sel, sd):
    """Scan pairs (i, j), j >= j0, for the next move; update the selection in place.

    ``sel``: [i, j] of the best candidate, [i, j] of the best tabu move (fallback), aspiration
    flag; ``sd``: [best candidate delta, best tabu delta]. The fast test ``d < sd[0]`` (or the
    age test while nothing is aspired) is all most pairs see.
    """
    min_d = sd[0]
    old_eff = old if sel[4] == 0 else _NEVER
    dd = drow[j0:]
    tt = trow[j0:]
    for k in range(dd.shape[0]):
        d = dd[k]
        t = tt[k]
        if d < min_d or t < old_eff:
            if d >= _HALF:  # sentinel: a pair that changes nothing
                continue
            if d < lim or t < old:  # aspiration by objective or by age
                if sel[4] == 0 or d < min_d:
                    sel[0] = i
                    sel[1] = j0 + k
                    min_d = d
                    sel[4] = 1
                    old_eff = _NEVER
            elif sel[4] == 0:
                if t < it:  # not tabu
                    sel[0] = i
                    sel[1] = j0 + k
                    min_d = d
                elif d < sd[1]:
                    sel[2] = i
                    sel[3] = j0 + k
                    sd[1] = d
    sd[0] = min_d


@numba.njit(cache=True)
def _select(delta, t2, rows, n, lim, it, old, sel, sd):
    """Full scan of the delta matrix for the move of iteration ``it``."""
    sel[:] = -1
    sel[4] = 0
    sd[0] = _HALF
    sd[1] = _HALF
    for i in range(rows):
        _scan_row(i, delta[i], t2[i], i + 1, lim, it, old, sel, sd)


@numba.njit(cache=True, fastmath=True, inline="always")
def _update_row(dd, uu, vv, a, c):
    """``dd[k] += (a - uu[k]) (c - vv[k])`` for every k (slices from 0: vectorised)."""
    for k in range(dd.shape[0]):
        dd[k] += (a - uu[k]) * (c - vv[k])


@numba.njit(cache=True, fastmath=True, inline="always")
def _update_row_count(dd, tt, uu, vv, a, c, thr, old):
    """:func:`_update_row`, and count the updated pairs with ``dd[k] < thr`` or ``tt[k] < old``
    (the pairs a scan would look at; a branch-free count that the compiler vectorises)."""
    hits = 0
    for k in range(dd.shape[0]):
        x = dd[k] + (a - uu[k]) * (c - vv[k])
        dd[k] = x
        hits += (x < thr) | (tt[k] < old)
    return hits


@numba.njit(cache=True, fastmath=True, inline="always")
def _axpy(y, a, x):
    """``y += a x`` (vectorised)."""
    for k in range(y.shape[0]):
        y[k] += a * x[k]


@numba.njit(cache=True, inline="always")
def _column_deltas(f, bp, q, vmf, r, out):
    """``out[k]`` = delta of the pair (k, r) for every k (BIG when the two facilities sit on one
    VM), in O(N) from ``Q = F P``:

        delta(k, r) = 2 (Q[k, r] + Q[r, k] - Q[k, k] - Q[r, r] + 2 F[k, r] P[k, r])

    (F, P symmetric with zero diagonals, so ``(P F)[k, r] = Q[r, k]``).
    """
    n = vmf.shape[0]
    qr = q[r]
    fr = f[r]
    pr = bp[r]
    qrr = qr[r]
    vr = vmf[r]
    for k in range(n):
        if vmf[k] == vr:
            out[k] = BIG
        else:
            out[k] = 2.0 * (q[k, r] + qr[k] - q[k, k] - qrr + 2.0 * fr[k] * pr[k])


@numba.njit(cache=True)
def _move(f, m, kc, p, bp, q, delta, tabu, tabu_t, t2, work, iwork, r, s, select, lim, it, old,
          sel, sd):
    """Swap facilities r < s (r < m) and update ``bp``, ``q = F P``, ``delta`` and ``t2``; when
    ``select``, choose the move of iteration ``it`` in the same pass (into ``sel``, ``sd``)."""
    n = p.shape[0]
    rows = min(m, n - 1)
    u = work[0]
    v = work[1]
    dr = work[2]
    ds = work[3]
    t2r = iwork[0]
    t2s = iwork[1]
    fr = f[r]
    fs = f[s]
    br = bp[r]
    bs = bp[s]
    for k in range(n):  # before the swap: u = 2 (F[r] - F[s]), v = P[r] - P[s]
        u[k] = 2.0 * (fr[k] - fs[k])
        v[k] = br[k] - bs[k]
    # F P' = (F with columns r, s exchanged) P, columns r, s exchanged: a rank-one update of the
    # rows k < m with a flow difference (F[k, s] - F[k, r] = -u[k] / 2), then a column swap
    for k in range(m):
        w = -0.5 * u[k]
        if w != 0.0:
            _axpy(q[k], w, v)
        y = q[k, r]
        q[k, r] = q[k, s]
        q[k, s] = y
    x = p[r]
    p[r] = p[s]
    p[s] = x
    for k in range(n):
        y = bp[r, k]
        bp[r, k] = bp[s, k]
        bp[s, k] = y
    for k in range(n):
        y = bp[k, r]
        bp[k, r] = bp[k, s]
        bp[k, s] = y
    br = bp[r]
    bs = bp[s]
    for k in range(n):  # after the swap: v = P[s] - P[r]
        v[k] = bs[k] - br[k]
    vmf = iwork[2]  # VM of each facility
    x = vmf[r]
    vmf[r] = vmf[s]
    vmf[s] = x
    _column_deltas(f, bp, q, vmf, r, dr)
    _column_deltas(f, bp, q, vmf, s, ds)
    tr = tabu[r]
    ts = tabu[s]
    tcr = tabu_t[p[r]]  # tabu[k, p(r)] for every k, contiguous
    tcs = tabu_t[p[s]]
    for k in range(n):  # tabu status of the pairs touching r or s
        t2r[k] = min(tr[p[k]], tcr[k])
        t2s[k] = min(ts[p[k]], tcs[k])
    if select:
        sel[:] = -1
        sel[4] = 0
        sd[0] = _HALF
        sd[1] = _HALF
    for i in range(rows):
        drow = delta[i]
        trow = t2[i]
        if i in (r, s):
            src = dr if i == r else ds
            tsrc = t2r if i == r else t2s
            for j in range(i + 1, n):
                drow[j] = src[j]
                trow[j] = tsrc[j]
            if select:
                _scan_row(i, drow, trow, i + 1, lim, it, old, sel, sd)
        elif not select:
            _update_row(drow[i + 1:], u[i + 1:], v[i + 1:], u[i], v[i])
            if r > i:
                drow[r] = dr[i]
                trow[r] = t2r[i]
            if s > i:
                drow[s] = ds[i]
                trow[s] = t2s[i]
        else:  # update and count the pairs that could be chosen; scan only if there are some
            thr = sd[0]
            old_eff = old if sel[4] == 0 else _NEVER
            hits = _update_row_count(drow[i + 1:], trow[i + 1:], u[i + 1:], v[i + 1:], u[i],
                                     v[i], thr, old_eff)
            if r > i:  # the count saw a stale entry there
                hits -= (drow[r] < thr) | (trow[r] < old_eff)
                drow[r] = dr[i]
                trow[r] = t2r[i]
                hits += (drow[r] < thr) | (trow[r] < old_eff)
            if s > i:
                hits -= (drow[s] < thr) | (trow[s] < old_eff)
                drow[s] = ds[i]
                trow[s] = t2s[i]
                hits += (drow[s] < thr) | (trow[s] < old_eff)
            if hits > 0:
                _scan_row(i, drow, trow, i + 1, lim, it, old, sel, sd)


@numba.njit(cache=True)
def swap(f, m, kc, p, bp, q, delta, tabu, tabu_t, t2, work, iwork, r, s):
    """Public form of the move (r, s) with its updates, no tabu change and no move choice (for
    tests and perturbations). One of r, s must be a real module (< m)."""
    if r > s:
        r, s = s, r
    sel = np.zeros(5, dtype=np.int64)
    sd = np.zeros(2)
    _move(f, m, kc, p, bp, q, delta, tabu, tabu_t, t2, work, iwork, r, s, False, 0.0, 0, 0, sel,
          sd)


@numba.njit(cache=True)
def run(f, b, m, kc, p, bp, q, delta, tabu, tabu_t, t2, work, iwork, best, si, sf, max_iters,
        stall, target, aspiration, lo, hi, seed):
    """Robust tabu search (Taillard 1991) from the state, for at most ``max_iters`` iterations.

    A swap (i, j) is tabu when both facilities would return to slots they left less than
    ``tenure`` iterations ago (tenure redrawn uniformly in [lo, hi) every 2N iterations); a tabu
    move is allowed when it improves the phase best (aspiration by objective); a move placing a
    facility in a slot it left more than ``aspiration`` iterations ago is taken first
    (aspiration by age, Taillard's long-term diversification). Swaps that change nothing (two
    dummy facilities, two slots of one VM) are skipped. When every useful move is tabu and none
    is aspired, the best tabu move is taken. ``tabu[i, slot]``: the iteration until which
    facility i may not return to ``slot`` (``tabu_t`` its transpose).

    Returns :data:`BUDGET` (iterations used up), :data:`STALLED` (no phase-best improvement in
    ``stall`` iterations), :data:`TARGET` (phase best <= ``target``) or :data:`STUCK` (no
    useful move). ``best`` holds the phase-best permutation, ``sf[1]`` its cost (accumulated
    from deltas: exact for integer data; the caller re-scores).
    """
    np.random.seed(seed)
    n = p.shape[0]
    if n < 2 or m < 1:
        return STUCK
    rows = min(m, n - 1)
    sel = np.zeros(5, dtype=np.int64)
    sd = np.zeros(2)
    it = si[0] + 1
    cur = sf[0]
    best_cost = sf[1]
    lim = best_cost - 1e-9 * max(1.0, abs(best_cost)) - cur  # d < lim: new phase best
    _select(delta, t2, rows, n, lim, it, it - aspiration, sel, sd)
    done = 0
    code = BUDGET
    while done < max_iters:
        si[0] = it
        done += 1
        if sel[0] >= 0:
            ri = sel[0]
            rj = sel[1]
            d = sd[0]
        elif sel[2] >= 0:  # every useful move tabu: take the best one
            ri = sel[2]
            rj = sel[3]
            d = sd[1]
        else:
            code = STUCK
            break
        until = it + si[1]
        pr = p[ri]
        pj = p[rj]
        tabu[ri, pr] = until
        tabu_t[pr, ri] = until
        tabu[rj, pj] = until
        tabu_t[pj, rj] = until
        improved = d < lim
        cur += d
        if improved:
            best_cost = cur
        if it % (2 * n) == 0:
            si[1] = np.random.randint(lo, hi)
        stop = done >= max_iters or (not improved and it - si[2] >= stall)
        nxt = it + 1
        nlim = best_cost - 1e-9 * max(1.0, abs(best_cost)) - cur
        _move(f, m, kc, p, bp, q, delta, tabu, tabu_t, t2, work, iwork, ri, rj, not stop, nlim, nxt,
              nxt - aspiration, sel, sd)
        if improved:
            sf[1] = cur
            best[:] = p
            si[2] = it
            if cur <= target:
                exact = cost(f, b, p)
                if exact <= target:
                    cur = exact
                    sf[1] = exact
                    sf[0] = exact
                    code = TARGET
                    break
        if it % 8192 == 0:
            cur = cost(f, b, p)
        sf[0] = cur
        if stop:
            if done < max_iters:
                code = STALLED
            break
        it = nxt
        lim = nlim
    return code


def _warm_up() -> None:
    """Load (or compile, the first time) the kernel at import, not inside a timed run."""
    f = np.zeros((3, 3))
    st = state(3)
    reset(f, f, 3, 1, st.p, st.bp, st.q, st.delta, st.tabu, st.t2, st.iwork)
    swap(f, 3, 1, st.p, st.bp, st.q, st.delta, st.tabu, st.tabu_t, st.t2, st.work, st.iwork, 0, 1)
    run(f, f, 3, 1, st.p, st.bp, st.q, st.delta, st.tabu, st.tabu_t, st.t2, st.work, st.iwork,
        st.p.copy(), np.zeros(3, dtype=np.int64), np.zeros(2), 1, 1, -np.inf, 10, 1, 2, 0)


_warm_up()
