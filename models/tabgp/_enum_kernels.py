"""numba kernels of :mod:`dmlopt.models.tabgp.enumeration` (private)."""

from __future__ import annotations

import time

import numpy as np
from numba import njit

_EPS = 1e-9
#: search nodes of :func:`max_internal` between two looks at the clock
CHUNK_NODES = 1 << 20


class OutOfTime(Exception):
    """:func:`max_internal` passed its deadline before its search ended."""


@njit(cache=True)
def topsums(W: np.ndarray, k: int) -> np.ndarray:
    """top[j, i, r]: the sum of the r largest weights W[j, i:j] (edges of j to the vertices
    i..j-1, the unassigned ones before j when vertices 0..i-1 are placed)."""
    n = W.shape[0]
    top = np.zeros((n, n + 1, k + 1))
    for j in range(n):
        for i in range(j + 1):
            vals = np.sort(W[j, i:j])[::-1]
            acc = 0.0
            for r in range(1, k + 1):
                if r - 1 < vals.shape[0]:
                    acc += vals[r - 1]
                top[j, i, r] = acc
    return top


@njit(cache=True)
def _future(W, top, wb, size, i, c, nbn, l, k):
    """Upper bound on the internal weight the vertices after i still add, once i is placed in
    cluster c (nbn clusters open): each later vertex j joins its best open cluster, gaining its
    edges to the members there and its heaviest edges to the vertices between i and j."""
    n = W.shape[0]
    bd = 0.0
    for j in range(i + 1, n):
        bj = 0.0
        for b in range(nbn):
            sb = size[b] + (1 if b == c else 0)
            if sb < k:
                val = wb[j, b] + (W[j, i] if b == c else 0.0) + top[j, i + 1, k - 1 - sb]
                if val > bj:
                    bj = val
        if nbn < l:
            val = top[j, i + 1, k - 1]
            if val > bj:
                bj = val
        bd += bj
    return bd


@njit(cache=True)
def _fits(size, c, nbn, l, k, remaining):
    cap = 0
    for b in range(l):
        if b < nbn:
            cap += k - size[b] - (1 if b == c else 0)
        else:
            cap += k
    return cap >= remaining


@njit(cache=True)
def dfs(W, top, l, k, need, st_assign, st_size, st_wb, st_choice, st_inner, st_nb, pos,
        budget):
    """Advance the depth-first search over partitions (restricted-growth labels, clusters of at
    most k) with internal weight >= need until a leaf (returns 1, the partition in st_assign),
    the end (0) or ``budget`` nodes (2). ``pos[0]`` is the depth, ``pos[1]`` the node count."""
    n = W.shape[0]
    i = pos[0]
    spent = 0
    while i >= 0:
        if spent >= budget:
            pos[0] = i
            pos[1] += spent
            return 2
        if i == n:
            # leave the leaf: undo the last vertex
            i -= 1
            b = st_assign[i]
            for j in range(n):
                st_wb[j, b] -= W[j, i]
            st_size[b] -= 1
            st_assign[i] = -1
            continue
        c = st_choice[i] + 1
        nb = st_nb[i]
        placed = False
        newin = 0.0
        while c <= min(nb, l - 1):
            if st_size[c] < k:
                nbn = nb + 1 if c == nb else nb
                if _fits(st_size, c, nbn, l, k, n - i - 1):
                    newin = st_inner[i] + st_wb[i, c]
                    spent += 1
                    if newin + _future(W, top, st_wb, st_size, i, c, nbn, l, k) >= need - _EPS:
                        placed = True
                        break
            c += 1
        if not placed:
            i -= 1
            if i >= 0:
                b = st_assign[i]
                for j in range(n):
                    st_wb[j, b] -= W[j, i]
                st_size[b] -= 1
                st_assign[i] = -1
            continue
        st_choice[i] = c
        st_assign[i] = c
        st_size[c] += 1
        for j in range(n):
            st_wb[j, c] += W[j, i]
        st_inner[i + 1] = newin
        st_nb[i + 1] = nb + 1 if c == nb else nb
        st_choice[i + 1] = -1
        i += 1
        if i == n and newin >= need - _EPS:
            pos[0] = i
            pos[1] += spent
            return 1
    pos[0] = i
    pos[1] += spent
    return 0


def new_state(n: int, l: int) -> tuple:
    """Fresh arrays of :func:`dfs` (assign, size, wb, choice, inner, nb, pos)."""
    choice = -np.ones(n + 1, np.int64)
    return (-np.ones(n, np.int64), np.zeros(l, np.int64), np.zeros((n, l)), choice,
            np.zeros(n + 1), np.zeros(n + 1, np.int64), np.zeros(2, np.int64))


def max_internal(W: np.ndarray, l: int, k: int, need: float,
                 deadline: float | None = None) -> tuple[float, np.ndarray]:
    """The largest internal weight >= need of a partition into at most l clusters of at most
    k (branch and bound: every leaf raises need), and its labels (-1s if none reaches need).
    Raises :class:`OutOfTime` once ``time.perf_counter()`` passes ``deadline`` (looked at every
    :data:`CHUNK_NODES` nodes)."""
    n = W.shape[0]
    top = topsums(W, k)
    st = new_state(n, l)
    best, labels = -np.inf, -np.ones(n, np.int64)
    while True:
        code = dfs(W, top, l, k, need, *st, CHUNK_NODES if deadline is not None else 1 << 60)
        if code == 2:  # the budget: the search resumes from its saved state
            if time.perf_counter() > deadline:
                raise OutOfTime
            continue
        if code == 0:
            return best, labels
        value = float(st[4][n])
        if value > best:
            best, labels = value, st[0].copy()
            need = value + _EPS * max(1.0, abs(value))


@njit(cache=True)
def nearest(Wt, ref, l, k, alpha, moves, cutoff, out, cap):
    """min over labelled partitions P' of cut(P') + alpha d(P', ref) with at most ``moves``
    label changes and value < cutoff (strictly); the value (inf if none) and P' in out; nan
    after ``cap`` nodes (the search is then not finished)."""
    n = Wt.shape[0]
    lab = -np.ones(n, np.int64)
    size = np.zeros(l, np.int64)
    cost = np.zeros(n + 1)
    used = np.zeros(n + 1, np.int64)
    choice = -np.ones(n, np.int64)
    best = cutoff
    found = False
    nodes = 0
    i = 0
    while i >= 0:
        nodes += 1
        if nodes > cap:
            return np.nan
        if i == n:
            if cost[n] < best - _EPS:
                best = cost[n]
                found = True
                for v in range(n):
                    out[v] = lab[v]
            i -= 1
            size[lab[i]] -= 1
            lab[i] = -1
            continue
        c = choice[i] + 1
        placed = False
        add = 0.0
        while c < l:
            a = (ref[i] + c) % l  # own label first
            mv = 0 if c == 0 else 1
            if size[a] < k and used[i] + mv <= moves:
                add = alpha * mv
                for u in range(i):
                    if lab[u] != a:
                        add += Wt[u, i]
                if cost[i] + add < best - _EPS:
                    placed = True
                    break
            c += 1
        if not placed:
            choice[i] = -1
            i -= 1
            if i >= 0:
                size[lab[i]] -= 1
                lab[i] = -1
            continue
        choice[i] = c
        a = (ref[i] + c) % l
        lab[i] = a
        size[a] += 1
        cost[i + 1] = cost[i] + add
        used[i + 1] = used[i] + (0 if c == 0 else 1)
        i += 1
    return best if found else np.inf


@njit(cache=True)
def gain_bound(W, labels, others, topk, alpha, moves):
    """Upper bound on sum_{t in others} G_t(P) for the labelled partition P (module
    docstring): the ``moves`` largest positive top_t(v) - in_t(v, P) / 2 - alpha."""
    n = W.shape[1]
    vals = np.zeros(others.shape[0] * n)
    m = 0
    for q in range(others.shape[0]):
        t = others[q]
        for v in range(n):
            inside = 0.0
            for u in range(n):
                if u != v and labels[u] == labels[v]:
                    inside += W[t, v, u]
            x = topk[t, v] - inside / 2 - alpha
            if x > 0:
                vals[m] = x
                m += 1
    s = np.sort(vals[:m])[::-1]
    total = 0.0
    for j in range(min(moves, m)):
        total += s[j]
    return total


@njit(cache=True)
def cut_of(Wt, labels):
    n = Wt.shape[0]
    c = 0.0
    for u in range(n):
        for v in range(u + 1, n):
            if labels[u] != labels[v]:
                c += Wt[u, v]
    return c


@njit(cache=True)
def leaf(W, labels, l, k, others, r, cstar, topk, alpha, limit, moves, out, cap):
    """F(P) of the module docstring for the leaf partition P = ``labels`` of the reference
    step r when it is at most ``limit`` (else inf): cut_r(P) plus h_t(P) for the other steps,
    each found by :func:`nearest` (nan when one stops at ``cap`` nodes); their partitions go to
    out[t]."""
    tau = W.shape[0]
    cuts = np.zeros(tau)
    cut_s = 0.0
    for t in range(tau):
        cuts[t] = cut_of(W[t], labels)
        cut_s += cuts[t]
    slack = 0.0
    for q in range(others.shape[0]):
        slack += cuts[others[q]] - cstar[others[q]]
    g = min(gain_bound(W, labels, others, topk, alpha, moves), slack)
    if cut_s - g > limit + _EPS:
        return np.inf
    acc = cuts[r]
    rest = 0.0
    for q in range(others.shape[0]):
        rest += cstar[others[q]]
    for v in range(labels.shape[0]):
        out[r, v] = labels[v]
    for q in range(others.shape[0]):
        t = others[q]
        rest -= cstar[t]
        room = limit - acc - rest
        if room < cstar[t] - _EPS:
            return np.inf
        b = int(np.floor((min(cuts[t], room) - cstar[t]) / alpha + _EPS))
        h = nearest(W[t], labels, l, k, alpha, b, min(room + _EPS, cuts[t] + 1e-7), out[t], cap)
        if np.isnan(h):
            return h
        if h > room + _EPS:
            return np.inf
        acc += h
    return acc
