"""Birkhoff-von Neumann OXC configuration of WCG (paper 002, Algorithm 1 lines 25-28, Fig. 3).

* :func:`stuff` turns the inter-rack transfer matrix D (zero diagonal) into a "perfect" matrix D'
  (equal row and column sums, zero diagonal kept: intra-rack traffic does not use the OXC) by
  adding a non-negative zero-diagonal matrix (a transportation plan of the row and column
  deficits built in closed form, see :func:`_zero_diagonal_transport`). The line sum is the
  largest line sum of D, raised only when a zero diagonal makes that impossible.
* :func:`bvn_decompose` writes D' = sum_k theta_k P_k with permutation matrices P_k (repeated
  perfect matchings on the support, scipy's ``linear_sum_assignment``); each step takes the
  bottleneck matching (largest smallest entry, by bisection over the entries), so the
  coefficients come out large first, as in Fig. 3.
* :func:`circuits_from_terms`: a permutation uses 2 ports per ToR (one circuit out, one in), so
  floor(N_ToR / 2) permutation copies fit; copies go to the terms in proportion to
  theta_k / line sum (largest remainder), e.g. Fig. 3: 664 / 1486 * 2 ~ 1 and 478 / 1486 * 2 ~ 1.
"""

from __future__ import annotations

import numpy as np


def stuff(D: np.ndarray) -> tuple[np.ndarray, float]:
    """A perfect matrix D' >= D with zero diagonal and its line sum sigma (Algorithm 1, line 26).

    Raises
    ------
    ValueError
        If ``D`` is not square, has negative entries or a non-zero diagonal.
    """
    D = np.asarray(D, float)
    n = D.shape[0]
    if D.ndim != 2 or D.shape[1] != n:
        raise ValueError(f"D: shape {D.shape} is not square")
    if (D < 0).any() or np.abs(np.diag(D)).max(initial=0) > 0:
        raise ValueError("D: must be non-negative with a zero diagonal")
    sigma = float(max(D.sum(axis=1).max(initial=0), D.sum(axis=0).max(initial=0)))
    if n < 2 or sigma == 0:
        return D.copy(), sigma
    r, c = sigma - D.sum(axis=1), sigma - D.sum(axis=0)
    # zero diagonal: row i's deficit must fit in the other columns: r_i + c_i <= sum(r)
    if n > 2:
        excess = float((r + c - r.sum()).max())
        if excess > 0:
            delta = excess / (n - 2)
            sigma += delta
            r, c = r + delta, c + delta
    if r.sum() <= 1e-12 * sigma:
        return D.copy(), sigma
    return D + _zero_diagonal_transport(r, c), sigma


def _zero_diagonal_transport(r: np.ndarray, c: np.ndarray) -> np.ndarray:
    """E >= 0 with zero diagonal, row sums r and column sums c (needs r_i + c_i <= sum(r)).

    Start from the rank-one r c^T / S, then move the diagonal mass off the diagonal with
    line-sum-preserving exchanges: two diagonal entries i, j -> (i, j) and (j, i); a last one m
    with an entry (j, k) outside row and column m -> (m, k) and (j, m).
    """
    n = r.size
    S = float(r.sum())
    E = np.outer(r, c) / S
    d = np.diag(E).copy()
    np.fill_diagonal(E, 0.0)
    tiny = 1e-12 * S
    while (d > tiny).sum() > 1:
        i, j = np.argsort(-d)[:2]
        delta = min(d[i], d[j])
        E[i, j] += delta
        E[j, i] += delta
        d[i] -= delta
        d[j] -= delta
    m = int(np.argmax(d))
    left = float(d[m])
    if left > tiny:
        mask = np.ones((n, n), bool)
        mask[m, :] = mask[:, m] = False
        np.fill_diagonal(mask, False)
        for j, k in zip(*np.nonzero(mask & (E > 0)), strict=True):
            delta = min(E[j, k], left)
            E[j, k] -= delta
            E[m, k] += delta
            E[j, m] += delta
            left -= delta
            if left <= tiny:
                break
    return np.maximum(E, 0.0)


def _perfect(mat: np.ndarray, v: float) -> np.ndarray | None:
    """A perfect matching (column per row) on the entries >= v, or None if there is none
    (Hopcroft-Karp on the sparse support: O(E sqrt(n)), where an assignment is O(n^3))."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_bipartite_matching

    c = maximum_bipartite_matching(csr_matrix(mat >= v), perm_type="column")
    return None if (c < 0).any() else c


def _bottleneck_matching(mat: np.ndarray, eps: float) -> tuple[np.ndarray, float] | None:
    """The perfect matching on entries > eps maximising its smallest entry (None if none).

    The largest value v among the entries with a perfect matching on the entries >= v; the
    matching returned is scipy's ``linear_sum_assignment`` on the indicator cost entry < v at
    that value. No v above the smallest row or column maximum can work (every line needs an
    entry >= v), and that value is tried first: it is the bottleneck of almost every term, so
    a term usually costs one assignment and no sort. Otherwise bisection over the smaller
    entries, each step deciding only whether a perfect matching exists (Hopcroft-Karp on the
    sparse support, :func:`_perfect`); a matching found at v proves every value up to its
    smallest entry. The bottleneck value is the same whichever matching a step finds, and the
    matching returned is the assignment at that value, so the terms are those of an
    assignment at every step.
    """
    n = mat.shape[0]
    rows = np.arange(n)
    top = min(float(mat.max(axis=1).min()), float(mat.max(axis=0).min()))
    if not top > eps:
        return None
    from scipy.optimize import linear_sum_assignment  # lazily: `dmlopt list` stays light

    _, c = linear_sum_assignment((mat < top).astype(float))
    if mat[rows, c].min() >= top:
        return c, float(mat[rows, c].min())
    vals = np.unique(mat[(mat > eps) & (mat < top)])
    lo, hi = 0, vals.size - 1
    found = False
    while lo <= hi:
        mid = (lo + hi) // 2
        c = _perfect(mat, vals[mid])
        if c is not None:
            found = True
            lo = max(mid, int(np.searchsorted(vals, mat[rows, c].min(), side="right")) - 1) + 1
        else:
            hi = mid - 1
    if not found:
        return None
    _, best = linear_sum_assignment((mat < vals[hi]).astype(float))
    return best, float(mat[rows, best].min())


def bvn_decompose(M: np.ndarray, *, max_terms: int | None = None,
                  rtol: float = 1e-9) -> list[tuple[float, np.ndarray]]:
    """Birkhoff-von Neumann decomposition of a perfect matrix (Algorithm 1, line 27).

    Returns ``[(theta_k, perm_k), ...]`` with ``M = sum_k theta_k P_k`` where ``P_k[i,
    perm_k[i]] = 1``; stops after ``max_terms`` terms if given (the largest come first).
    """
    rest = np.array(M, float)
    n = rest.shape[0]
    if n == 0:
        return []
    scale = float(rest.sum(axis=1).max(initial=0))
    eps = rtol * max(scale, 1.0)
    terms: list[tuple[float, np.ndarray]] = []
    while rest.max(initial=0) > eps and (max_terms is None or len(terms) < max_terms):
        found = _bottleneck_matching(rest, eps)
        if found is None:
            break
        perm, theta = found
        terms.append((theta, perm))
        rest[np.arange(n), perm] -= theta
        rest[rest < eps] = 0.0
    return terms


def circuits_from_terms(terms: list[tuple[float, np.ndarray]], sigma: float, ports: int,
                        n: int) -> np.ndarray:
    """Symmetric circuit counts from the BvN terms (Algorithm 1, line 28)."""
    c = np.zeros((n, n), np.int64)
    copies = ports // 2
    if not terms or sigma <= 0 or copies == 0:
        return c
    share = np.array([t for t, _ in terms]) / sigma * copies
    x = np.floor(share).astype(np.int64)
    left = copies - int(x.sum())
    if left > 0:
        order = np.argsort(-(share - x), kind="stable")
        x[order[:left]] += 1
    for (_, perm), k in zip(terms, x, strict=True):
        if k:
            for s in range(n):
                t = int(perm[s])
                if t != s:
                    c[s, t] += k
                    c[t, s] += k
    return c
