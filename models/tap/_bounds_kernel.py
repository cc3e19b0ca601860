"""Compiled kernels of the TAP bounds (numba; private to :mod:`dmlopt.models.tap.bounds`).

State of the RLT1 dual ascent on a square QAP of size N (Hahn and Grant 1998): a constant, the
linear costs ``B`` (N x N) and the quadratic costs ``C[i, j, k, l]`` (N^4; entries with
``k == i`` or ``l == j`` unused), such that for every permutation x (``x[i, j] = 1``: facility i
in slot j) the objective equals ``const + sum B x + sum C[i, j, k, l] x[i, j] x[k, l]``. Every
step below keeps that identity (up to rounding, which the caller bounds).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def lap(a, n, u, v, p, way, minv, used):  # pragma: no cover - compiled
    """Hungarian method with potentials on the leading n x n block of ``a`` (shortest
    augmenting paths, O(n^3)). 1-based work arrays of length n + 1. On return ``u[1:]``,
    ``v[1:]`` are dual potentials with ``a[r, c] - u[r + 1] - v[c + 1] >= 0`` (up to rounding)
    and ``p[c + 1] - 1`` the row assigned to column c."""
    inf = np.inf
    for t in range(n + 1):
        u[t] = 0.0
        v[t] = 0.0
        p[t] = 0
    for i in range(1, n + 1):
        p[0] = i
        j0 = 0
        for t in range(n + 1):
            minv[t] = inf
            used[t] = False
        while True:
            used[j0] = True
            i0 = p[j0]
            delta = inf
            j1 = 0
            ui0 = u[i0]
            for j in range(1, n + 1):
                if not used[j]:
                    cur = a[i0 - 1, j - 1] - ui0 - v[j]
                    if cur < minv[j]:
                        minv[j] = cur
                        way[j] = j0
                    if minv[j] < delta:
                        delta = minv[j]
                        j1 = j
            for j in range(n + 1):
                if used[j]:
                    u[p[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while True:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
            if j0 == 0:
                break


@numba.njit(cache=True)
def reduce_blocks(c, b, rows, size):  # pragma: no cover - compiled
    """Step 1 for the blocks ``(i, j)``, i in ``rows``: solve the assignment problem of
    ``C[i, j]`` without row i and column j, replace the block by its reduced costs and add the
    dual value to ``B[i, j]``. Returns the smallest reduced cost written."""
    n1 = size - 1
    a = np.empty((n1, n1))
    u = np.empty(n1 + 1)
    v = np.empty(n1 + 1)
    p = np.empty(n1 + 1, dtype=np.int64)
    way = np.empty(n1 + 1, dtype=np.int64)
    minv = np.empty(n1 + 1)
    used = np.empty(n1 + 1, dtype=np.bool_)
    low = 0.0
    for i in rows:
        for j in range(size):
            blk = c[i, j]
            r = 0
            for k in range(size):
                if k == i:
                    continue
                s = 0
                for col in range(size):
                    if col == j:
                        continue
                    a[r, s] = blk[k, col]
                    s += 1
                r += 1
            lap(a, n1, u, v, p, way, minv, used)
            total = 0.0
            for t in range(1, n1 + 1):
                total += u[t] + v[t]
            b[i, j] += total
            r = 0
            for k in range(size):
                if k == i:
                    continue
                s = 0
                uk = u[r + 1]
                for col in range(size):
                    if col == j:
                        continue
                    val = (blk[k, col] - uk) - v[s + 1]
                    blk[k, col] = val
                    if val < low:
                        low = val
                    s += 1
                r += 1
    return low


@numba.njit(cache=True)
def spread_and_balance(c, b, size, share):  # pragma: no cover - compiled
    """Steps 3-4: move ``share`` of each ``B[i, j]`` evenly into its block (the block's
    ``x_kl`` summed over its N - 1 rows is ``(N - 1) x_ij``, so ``B[i, j] x_ij`` is
    ``B[i, j] / (N - 1)`` on each entry), then give each pair of complementary costs
    ``C[i, j, k, l]``, ``C[k, l, i, j]`` (the same product ``x_ij x_kl``) their mean.
    Returns the largest absolute entry of C afterwards."""
    n1 = size - 1
    for i in range(size):
        for j in range(size):
            moved = b[i, j] * share
            b[i, j] -= moved
            add = moved / n1
            blk = c[i, j]
            for k in range(size):
                if k == i:
                    continue
                for col in range(size):
                    if col != j:
                        blk[k, col] += add
    big = 0.0
    for i in range(size):
        for j in range(size):
            for k in range(i + 1, size):
                for col in range(size):
                    if col == j:
                        continue
                    mean = 0.5 * (c[i, j, k, col] + c[k, col, i, j])
                    c[i, j, k, col] = mean
                    c[k, col, i, j] = mean
                    if abs(mean) > big:
                        big = abs(mean)
    return big


@numba.njit(cache=True)
def reduce_square(b, size):  # pragma: no cover - compiled
    """Step 2: the assignment problem of ``B``: B replaced by its reduced costs; returns the dual
    value (added to the constant), the smallest reduced cost and ``p`` (``p[c + 1] - 1``: the
    row assigned to column c)."""
    u = np.empty(size + 1)
    v = np.empty(size + 1)
    p = np.empty(size + 1, dtype=np.int64)
    way = np.empty(size + 1, dtype=np.int64)
    minv = np.empty(size + 1)
    used = np.empty(size + 1, dtype=np.bool_)
    lap(b, size, u, v, p, way, minv, used)
    total = 0.0
    for t in range(1, size + 1):
        total += u[t] + v[t]
    low = 0.0
    for r in range(size):
        for s in range(size):
            val = (b[r, s] - u[r + 1]) - v[s + 1]
            b[r, s] = val
            if val < low:
                low = val
    return total, low, p.copy()


@numba.njit(cache=True)
def lap_rows(a, u, v, p, way, minv, used, start, stop):  # pragma: no cover - compiled
    """Rows ``start..stop - 1`` (0-based) of the Hungarian method of :func:`lap` on the
    rectangular ``a`` (rows <= columns, every row assigned, a column at most once), resumable:
    the 1-based work arrays (length columns + 1; ``u`` length rows + 1) carry the state from
    one call to the next (all zero before the first). After each call the potentials are dual
    feasible for the rows processed (``a[r, c] - u[r + 1] - v[c + 1] >= 0``) and ``v[1:] <= 0``,
    so with the unprocessed rows at ``u = min_c (a[r, c] - v[c + 1])``, ``sum u + sum v[1:]`` is
    a lower bound on the assignment's optimum at any stop."""
    n = a.shape[1]
    inf = np.inf
    for i in range(start + 1, stop + 1):
        p[0] = i
        j0 = 0
        for t in range(n + 1):
            minv[t] = inf
            used[t] = False
        while True:
            used[j0] = True
            i0 = p[j0]
            delta = inf
            j1 = 0
            ui0 = u[i0]
            for j in range(1, n + 1):
                if not used[j]:
                    cur = a[i0 - 1, j - 1] - ui0 - v[j]
                    if cur < minv[j]:
                        minv[j] = cur
                        way[j] = j0
                    if minv[j] < delta:
                        delta = minv[j]
                        j1 = j
            for j in range(n + 1):
                if used[j]:
                    u[p[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while True:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
            if j0 == 0:
                break
