"""Dual bounds of TABGP (paper 004): lower bounds on the total cut and migration cost.

Methods, strongest first where they fit:

* ``"mip"``, ``"lp"``: HiGHS on the ``pairs`` formulation (:mod:`dmlopt.bounds`); exact or
  near-exact up to n = 16 and out of reach (size limit) far beyond.
* ``"spectral"``: a Donath-Hoffman eigenvalue bound on the *supra-graph* of consecutive steps
  (:func:`spectral_bound`), for instances with hundreds or thousands of vertices.

The supra-graph
---------------
Give vertex v at step t the node (t, v); join (t, u) and (t, v) by the weight of the edge uv of
E_t and (t, v) to (t + 1, v) by alpha. A TABGP solution labels every node with a cluster 0..l-1
and then its cost (cut plus migration) is exactly the weight of the supra-graph's edges whose
ends carry different labels: a migration is a cut "vertical" edge. Each label holds at most k
nodes per step, so at most w k nodes of a window of w steps.

The window decomposition
------------------------
A window is w consecutive steps. With the sliding windows s..s+w-1 (s = 0..tau-w), step t lies
in c_t windows and the vertical edge (t, t+1) in c'_t; giving each copy of an edge the weight
1/c_t (or 1/c'_t) of the original makes the cost of every labelling exactly the sum of the
windows' cut weights. A lower bound on each window's cut is therefore a lower bound on the total.
w = 1 bounds the cut of every step separately (no migration term); w = tau is the whole
supra-graph.

The eigenvalue bound of one window
----------------------------------
Let L be the window's Laplacian (N = w n nodes), X the N x l indicator matrix of a labelling
with label sizes m_1 >= ... >= m_l, so that the cut weight is tr(X^T L X) / 2. For any vector u,
tr(X^T diag(u) X) = sum(u), and with Y = X diag(m)^(-1/2) (orthonormal columns)

    2 cut = sum_j m_j y_j^T (L + diag u) y_j - sum(u) >= sum_j m_j lambda_j(L + diag u) - sum(u)

with lambda_1 <= lambda_2 <= ... (Donath and Hoffman 1973; the minimum of
sum_j m_j y_j^T A y_j over orthonormal y with m decreasing pairs the largest weight with the
smallest eigenvalue). The sizes are unknown but each m_j <= w k and sum m_j = N; the right-hand
side is smallest when the sizes fill the smallest eigenvalues first (m = (wk, ..., wk, r, 0,
...)), which gives a bound for every labelling. The right-hand side is concave in u (a minimum of
linear functions), and ``spectral_bound`` maximises it by L-BFGS on (sub)gradients
g_v = (sum_j m_j y_j(v)^2 - 1) / 2.

Certification. The search may use an iterative eigensolver (LOBPCG) and stops wherever the time
limit falls; only its final u matters. The reported bound re-computes the needed eigenvalues of
L + diag(u) with LAPACK's dense symmetric solver (all of them below the l-th, so none is missed)
and lowers each by ``EIG_MARGIN`` N ||L + diag u||_inf, far above the solver's backward error
(a small multiple of N eps ||A||, eps = 2.2e-16), before the sum; the total is then moved by
:func:`dmlopt.bounds.safe`. Every window's bound is clipped at 0 (a cut weight is never
negative).
"""

from __future__ import annotations

import contextlib
import math
import time
from typing import Any

import numpy as np
import pydantic

from dmlopt.bounds import lp_relaxation, mip_bound, safe
from dmlopt.contract import Bound, BoundValue, Options, Size

#: relative margin per eigenvalue: lambda_j is lowered by EIG_MARGIN * N * ||A||_inf
EIG_MARGIN = 1e-10

#: seconds the spectral bound runs when no time limit is given
SPECTRAL_SECONDS = 300.0

#: below this window order the search uses dense eigenvalues, above it LOBPCG
_DENSE_ORDER = 500


class SpectralOptions(Options):
    """Options of the spectral (Donath-Hoffman) bound."""

    window: int = pydantic.Field(
        0, ge=0, le=1_000_000,
        description="steps per window (0: the most steps whose supra-graph has at most "
                    "max_order nodes; 1: every step alone, no migration term)")
    max_order: int = pydantic.Field(
        2000, ge=1, le=20_000,
        description="largest window order (nodes) for the automatic window choice")
    iterations: int = pydantic.Field(
        300, ge=0, le=100_000,
        description="L-BFGS iterations per window on the diagonal shift (0: no shift)")


def _window_size(instance: Any, window: int, max_order: int) -> int:
    if window:
        return min(window, instance.tau)
    return max(1, min(instance.tau, max_order // max(1, instance.n)))


def window_laplacians(instance: Any, window: int) -> list[Any]:
    """The Laplacians of the sliding windows of ``window`` steps (section "The window
    decomposition" of this module), as scipy CSR matrices of order ``window * n``.

    Parameters
    ----------
    instance : Instance
        A TABGP instance.
    window : int
        Steps per window, 1..tau.

    Returns
    -------
    list of scipy.sparse.csr_matrix
        One Laplacian per window s = 0..tau-window; node (t, v) of the window starting at s is
        row (t - s) n + v. Summed over the windows, the cut weights of a labelling are its
        TABGP cost (cut plus alpha times migrations) when ``window >= 2`` and its cut alone
        when ``window == 1``.

    References
    ----------
    Figiel, Nichterlein, Schmid (paper 004), section 1: the objective; the supra-graph
    (time-expanded graph) is the usual representation of a temporal graph.
    """
    import scipy.sparse as sp

    n, tau, w = instance.n, instance.tau, window
    starts = range(tau - w + 1)
    cover = np.array([sum(1 for s in starts if s <= t < s + w) for t in range(tau)], float)
    cover_v = np.array([sum(1 for s in starts if s <= t and t + 1 < s + w)
                        for t in range(tau - 1)], float)
    out = []
    for s in starts:
        rows, cols, vals = [], [], []
        for i in range(w):
            u, v, wt = instance.arrays[s + i]
            rows.append(u + i * n)
            cols.append(v + i * n)
            vals.append(wt / cover[s + i])
            if i + 1 < w and instance.alpha > 0:
                idx = np.arange(n, dtype=np.int64) + i * n
                rows.append(idx)
                cols.append(idx + n)
                vals.append(np.full(n, instance.alpha / cover_v[s + i]))
        order = w * n
        r = np.concatenate(rows) if rows else np.zeros(0, np.int64)
        c = np.concatenate(cols) if cols else np.zeros(0, np.int64)
        x = np.concatenate(vals) if vals else np.zeros(0)
        adj = sp.coo_matrix((x, (r, c)), shape=(order, order)).tocsr()
        adj = adj + adj.T
        out.append((sp.diags(np.asarray(adj.sum(axis=1)).ravel()) - adj).tocsr())
    return out


def part_sizes(order: int, capacity: int, l: int) -> np.ndarray:
    """The label sizes that minimise the Donath-Hoffman sum: ``capacity`` on the smallest
    eigenvalues until ``order`` nodes are placed (length ``l``, decreasing, trailing zeros).

    Parameters
    ----------
    order : int
        Nodes of the window (w n).
    capacity : int
        Most nodes one label may hold in the window (w k).
    l : int
        Number of labels.

    Returns
    -------
    numpy.ndarray
        Sizes m_1 >= ... >= m_l with sum ``order`` (``order <= l * capacity`` holds for every
        valid instance).

    References
    ----------
    Donath and Hoffman, "Lower bounds for the partitioning of graphs", IBM J. Res. Dev. 17(5),
    1973: the bound for given sizes; a smaller weighted sum is a bound for all feasible sizes.
    """
    m = np.zeros(l)
    rest = order
    for j in range(l):
        m[j] = min(capacity, rest)
        rest -= m[j]
    return m


class _Window:
    """The Donath-Hoffman function of one window and its eigenvector cache."""

    def __init__(self, lap: Any, sizes: np.ndarray) -> None:
        self.lap = lap
        self.order = lap.shape[0]
        self.q = int(np.count_nonzero(sizes))
        self.m = sizes[:self.q]
        self.vectors: np.ndarray | None = None

    def eig(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The q smallest eigenpairs of L + diag(u) (approximate: used for the search only)."""
        import scipy.linalg as la
        import scipy.sparse as sp

        if self.order <= _DENSE_ORDER or self.q >= self.order // 4:
            a = self.lap.toarray()
            a[np.diag_indices(self.order)] += u
            return la.eigh(a, subset_by_index=[0, self.q - 1])
        from scipy.sparse.linalg import lobpcg

        a = (self.lap + sp.diags(u)).tocsr()
        block = self.q + 4
        if self.vectors is None:
            a_dense = a.toarray()
            lam, vec = la.eigh(a_dense, subset_by_index=[0, block - 1])
        else:
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                lam, vec = lobpcg(a, self.vectors, largest=False, tol=1e-7, maxiter=200)
            order = np.argsort(lam)
            lam, vec = lam[order], vec[:, order]
        self.vectors = vec
        return lam[:self.q], vec[:, :self.q]

    def value(self, u: np.ndarray) -> tuple[float, np.ndarray]:
        lam, vec = self.eig(u)
        val = 0.5 * (float(self.m @ lam) - float(u.sum()))
        grad = 0.5 * ((vec ** 2) @ self.m - 1.0)
        return val, grad

    def certified(self, u: np.ndarray) -> float:
        """The window's bound at ``u`` from dense LAPACK eigenvalues lowered by the margin."""
        import scipy.linalg as la

        a = self.lap.toarray()
        a[np.diag_indices(self.order)] += u
        norm = float(np.abs(a).sum(axis=1).max())
        lam = la.eigvalsh(a, subset_by_index=[0, self.q - 1])
        lam = lam - EIG_MARGIN * self.order * max(1.0, norm)
        return max(0.0, 0.5 * (math.fsum(self.m * lam) - math.fsum(u)))


class _Deadline(Exception):
    pass


def _maximise(win: _Window, iterations: int, deadline: float) -> tuple[np.ndarray, float]:
    """L-BFGS on -value(u); the best u seen (zero when out of time at once) and the search's
    value at u = 0 (NaN when not reached)."""
    import scipy.optimize as so

    best = {"val": -math.inf, "u": np.zeros(win.order), "zero": math.nan}

    def f(u: np.ndarray) -> tuple[float, np.ndarray]:
        if time.perf_counter() > deadline:
            raise _Deadline
        val, grad = win.value(u)
        if math.isnan(best["zero"]):
            best["zero"] = val
        if val > best["val"]:
            best["val"], best["u"] = val, u.copy()
        return -val, -grad

    if iterations > 0:
        with contextlib.suppress(_Deadline):
            so.minimize(f, np.zeros(win.order), jac=True, method="L-BFGS-B",
                        options={"maxiter": iterations, "maxfun": 2 * iterations})
    return best["u"], best["zero"]


def spectral_bound(instance: Any, *, time_limit: float | None = None, window: int = 0,
                   max_order: int = 2000, iterations: int = 300) -> BoundValue:
    """Donath-Hoffman eigenvalue lower bound on the TABGP cost, summed over windows of steps.

    Parameters
    ----------
    instance : Instance
        A TABGP instance.
    time_limit : float, optional
        Seconds for the whole bound (default :data:`SPECTRAL_SECONDS`); the search over the
        diagonal shift stops at the limit and the bound stays valid. The final dense
        eigenvalue computation runs after the search (about a second per window of 1,000
        nodes, a cube law beyond).
    window : int
        Steps per window (0: automatic, see :class:`SpectralOptions`).
    max_order : int
        Largest window order for the automatic choice.
    iterations : int
        L-BFGS iterations per window.

    Returns
    -------
    BoundValue
        The certified bound (see the module docstring); metrics ``window``, ``windows``,
        ``unshifted`` (the search's value at u = 0, uncertified, 0 for a window not
        reached), ``search_seconds`` and ``certify_seconds``.

    References
    ----------
    Donath and Hoffman, "Lower bounds for the partitioning of graphs", IBM J. Res. Dev. 17(5),
    1973; Rendl and Wolkowicz, "A projection technique for partitioning the nodes of a graph",
    Ann. Oper. Res. 58, 1995 (the bound with an optimised diagonal). Paper 004, section 1 (the
    objective and the capacity k).
    """
    t0 = time.perf_counter()
    limit = SPECTRAL_SECONDS if time_limit is None else float(time_limit)
    w = _window_size(instance, window, max_order)
    laps = window_laplacians(instance, w)
    sizes = part_sizes(w * instance.n, w * instance.k, instance.l)
    wins = [_Window(lap, sizes) for lap in laps]
    # reserve time for the certification: a dense eigenvalue pass per window
    order = w * instance.n
    reserve = len(wins) * (0.05 + 1.0 * (order / 1000.0) ** 3)
    search_end = t0 + max(0.0, limit - reserve)
    shifts, zeros = [], []
    for i, win in enumerate(wins):
        share = (search_end - time.perf_counter()) / (len(wins) - i)
        u, zero = _maximise(win, iterations, time.perf_counter() + max(0.0, share))
        shifts.append(u)
        zeros.append(max(0.0, zero))
    search = time.perf_counter() - t0
    value = math.fsum(win.certified(u) for win, u in zip(wins, shifts, strict=True))
    return BoundValue(max(0.0, safe(value, "min")), metrics={
        "window": float(w), "windows": float(len(wins)),
        "unshifted": math.fsum(zeros), "search_seconds": search,
        "certify_seconds": time.perf_counter() - t0 - search})


def _estimate_spectral(instance: Any, options: Any) -> Size:
    w = _window_size(instance, options.window, options.max_order)
    order = w * instance.n
    windows = instance.tau - w + 1
    return Size(memory=3.0 * 8.0 * order * order + 64.0 * sum(len(e) for e in instance.edges),
                work=windows * (2.0 * order ** 3 + options.iterations * 50.0 * order))


def _enum_function(instance: Any, *, time_limit: float | None = None, start: Any = None
                   ) -> BoundValue:
    """The exact enumeration (:func:`dmlopt.models.tabgp.enumeration.enum_bound`).

    Parameters
    ----------
    instance : Instance
        A TABGP instance with at most 3 steps.
    time_limit : float or None, optional
        Seconds (None: :data:`dmlopt.models.tabgp.enumeration.ENUM_SECONDS`).
    start : Solution or None, optional
        A feasible solution whose cost starts the search's upper bound (default None).

    Returns
    -------
    BoundValue
        The optimum and a solution reaching it when the search ends; else the sum of the
        per-step least cuts and the best solution found.

    References
    ----------
    Ours: :mod:`dmlopt.models.tabgp.enumeration` (decomposition around a reference step, gain
    bound); the problem is paper 004's, section 1.
    """
    from dmlopt.models.tabgp.enumeration import enum_bound

    return enum_bound(instance, time_limit=time_limit, start=start)


def _enum_estimate(instance: Any, options: Any) -> Size:
    from dmlopt.models.tabgp.enumeration import estimate_enum

    return estimate_enum(instance, options)


class EnumOptions(Options):
    """Options of the exact enumeration (none: it ends exact or at the time limit)."""


BOUNDS: dict[str, Bound] = {
    # exact for tau <= 3 (every formulation has the same optimum, tests/tabgp/test_enum_front.py)
    "enum": Bound(function=_enum_function, Options=EnumOptions, estimate=_enum_estimate,
                  description="exact for tau <= 3: enumeration of the reference step's "
                              "partitions, other steps solved exactly around it "
                              "(dmlopt.solve runs it first)",
                  exact=("pairs", "paper", "strong", "clusters", "balanced", "triples")),
    "mip": mip_bound("pairs"),
    "lp": lp_relaxation("pairs"),
    "spectral": Bound(function=spectral_bound, Options=SpectralOptions,
                      estimate=_estimate_spectral,
                      description="Donath-Hoffman eigenvalue bound on windows of the "
                                  "supra-graph (steps joined by migration edges), optimised "
                                  "diagonal shift; scales to thousands of vertices"),
}
