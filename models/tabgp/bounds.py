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

Per-step balance multipliers
----------------------------
The sizes m only say that a label holds at most w k nodes of the window, so the bound above lets
a label take 2k nodes of one step and none of the next. A Lagrangian term restores part of the
per-step balance. Let P_t = 1_t 1_t^T / n for the nodes V_t of step t in the window (n of them)
and s_t(X) = tr(X^T 1_t 1_t^T X) = sum_i |S_i & V_t|^2, the sum of the squared label sizes of
step t. Those sizes are integers in 0..k that sum to n, so

    beta = r (q + 1)^2 + (l - r) q^2  <=  s_t(X)  <=  gamma = f k^2 + g^2

(n = q l + r, 0 <= r < l, the most even split, by convexity of the square; n = f k + g,
0 <= g < k, the most uneven split allowed by the capacity, a vertex of the polytope
{0 <= x_i <= k, sum x_i = n} on which the convex sum of squares takes its maximum). For any
real c_t, c_t s_t(X) <= max(c_t beta, c_t gamma) and therefore

    2 cut = tr(X^T (L + diag u + sum_t c_t P_t) X) - sum(u) - sum_t c_t s_t(X) / n
          >= DH(L + diag u + sum_t c_t P_t) - sum(u) - sum_t max(c_t beta, c_t gamma) / n,

where DH(A) = sum_j m_j lambda_j(A) is the Donath-Hoffman sum above (valid for every symmetric
A, whatever the signs of its eigenvalues). c = 0 gives the bound without multipliers. The
right-hand side is concave in (u, c) jointly (DH is a minimum of functions linear in A, A is
affine in (u, c), and -max(c beta, c gamma) is concave). With c = c+ - c- (both >= 0) the search
maximises it by L-BFGS-B under bounds c+, c- >= 0, with the multiplier term replaced by
(gamma c+ - beta c-) / n (equal when c+ or c- is 0, larger otherwise, so the search's function
stays below the bound and is linear in c+, c-), with the gradients
(S_t - gamma) / (2 n) for c+_t and (beta - S_t) / (2 n) for c-_t, S_t = sum_j m_j (1_t^T y_j)^2.
c_t > 0 (penalising a step-mean direction) is the useful sign when the eigenvectors place more
of a label on one step than the capacity allows; c_t < 0 acts when they spread it too evenly
(Cauchy-Schwarz: beta >= n^2 / l). With w = 1 the single P_1 only moves the eigenvalue of the
all-ones direction.

Label-size rows
---------------
The balance multipliers see a step only through the sum of its squared label sizes. A finer
Lagrangian term: for a node i of the window and a step t, s_ti(X) = |label(i) & V_t| (the
nodes of step t sharing i's label) is an integer between lo = max(0, n - (l - 1) k) (the other
labels hold at most (l - 1) k of the n vertices; at least 1 for i in V_t) and hi = min(k, n)
(:func:`row_ranges`). With R_t(a) = (a 1_t^T + 1_t a^T) / 2 for a vector a over the window's
nodes, tr(X^T R_t(a) X) = sum_i a_i s_ti(X), so for any real a_t (t = steps of the window)

    2 cut >= DH(L + diag u + sum_t c_t P_t + sum_t R_t(a_t)) - sum(u) - (c terms)
             - sum_{t,i} max(a_ti lo_ti, a_ti hi_ti).

When l k = n (every label holds exactly k vertices of each step) lo = hi for the nodes of
other steps and the term is an equality. The search keeps a free, with the term itself and the
supergradient (G_ti - hi_ti) / 2 where a_ti > 0, (G_ti - lo_ti) / 2 elsewhere, G_ti =
sum_j m_j y_j(i) (1_t^T y_j). R_t(a) is of rank two, so the iterative eigensolver keeps its
operator form.

Same-label pairs
----------------
Y = X X^T is the 0/1 matrix of the pairs that share a label, so tr(X^T Z X) = <Z, Y> >= 0 for
every symmetric Z >= 0 with zero diagonal, and

    2 cut >= DH(A - Z) - sum(u) - (c and a terms)

with A the matrix above. Z pays where the eigenvectors place two nodes on opposite sides
more than any labelling can (sum_j m_j y_j(i) y_j(j) < 0, the gradient of z_ij). Z is dense:
the multipliers of all N (N - 1) / 2 pairs are used up to a window order (option ``pairs``,
1,000 nodes by default), after the stages over (u, c) and the rows; the Karisch and Rendl (1998)
semidefinite relaxation of graph partitioning has the same constraint (Y >= 0) and this is
its Lagrangian form over the eigenvalue bound. The search over z is a projected L-BFGS
(:func:`_projected_lbfgs`): with N (N - 1) / 2 bounded variables L-BFGS-B's Cauchy point cost
more than the eigenvalues (55 % of the stage's time on a 900-node window), and in the same 300
s the projected search reached 3837 where L-BFGS-B reached 3819 (er, n = 300, seed 6).

Certification. The search may use an iterative eigensolver (LOBPCG) and stops wherever the time
limit falls; only its final multipliers matter. The reported bound re-computes the needed
eigenvalues of A = L + diag(u) + sum_t c_t P_t + sum_t R_t(a_t) - Z (Z clipped at 0) with
LAPACK's dense symmetric solver (all of them below the l-th, so none is missed) and lowers each
by ``EIG_MARGIN`` N max(1, ||A||_inf) (the norm of the whole matrix A, rank-one terms
included), far above the solver's backward error (a small multiple of N eps ||A||, eps =
2.2e-16), before the sum; the multiplier terms are summed with ``math.fsum`` and the total is
then moved by :func:`dmlopt.bounds.safe`. Every window's bound is clipped at 0 (a cut weight is
never negative).
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
from dmlopt.models.tabgp.lbfgs import projected_lbfgs as _projected_lbfgs

#: relative margin per eigenvalue: lambda_j is lowered by EIG_MARGIN * N * ||A||_inf
EIG_MARGIN = 1e-10

#: seconds the spectral bound runs when no time limit is given
SPECTRAL_SECONDS = 300.0

#: seconds reserved per window of 1,000 nodes for the dense certification (a cube law beyond;
#: measured on one thread: 0.5 s for 2,000 nodes, 2.1 s for 3,000)
_CERTIFY_SECONDS = 0.35

#: below this window order the search uses dense eigenvalues, above it LOBPCG
_DENSE_ORDER = 1000


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
    balance: bool = pydantic.Field(
        True,
        description="per-step balance multipliers (a Lagrangian term per step on the sum of "
                    "squared label sizes, see the module docstring); off: the diagonal shift "
                    "alone")
    rows: bool = pydantic.Field(
        True,
        description="label-size rows: a multiplier per node and step on how many nodes of "
                    "that step share the node's label (between max(0, n - (l - 1) k) and k, "
                    "see the module docstring)")
    pairs: int = pydantic.Field(
        1000, ge=0, le=20_000,
        description="largest window order (nodes) with same-label pair multipliers (every "
                    "pair of nodes shares a label or not, never less: dense matrices, about "
                    "N^2 / 2 multipliers; 0: never)")
    threads: int = pydantic.Field(
        1, ge=1, le=256,
        description="BLAS threads of the eigenvalue routines, at most the machine's cores "
                    "(the time reserved for the certification is measured on one; contended "
                    "threads on a shared machine made one window 15-20 times slower)")


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
    eigenvalues until ``order`` nodes are placed (length ``min(l, order)``, decreasing,
    trailing zeros: at most ``order`` labels are non-empty).

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
    m = np.zeros(min(l, order))
    rest = order
    for j in range(m.size):
        m[j] = min(capacity, rest)
        rest -= m[j]
    return m


def balance_range(n: int, capacity: int, l: int) -> tuple[int, int]:
    """The least and the largest sum of squared label sizes of one step (section "Per-step
    balance multipliers" of this module).

    Parameters
    ----------
    n : int
        Vertices of the step.
    capacity : int
        Most vertices per label (k).
    l : int
        Number of labels.

    Returns
    -------
    tuple of int
        (beta, gamma): beta = r (q + 1)^2 + (l - r) q^2 for n = q l + r (the most even split),
        gamma = f k^2 + g^2 for n = f k + g (labels filled to the capacity one after another).

    References
    ----------
    Paper 004, section 1 (the capacity k); the bounds follow from the convexity of x^2.
    """
    q, r = divmod(n, l)
    f, g = divmod(n, capacity)
    return r * (q + 1) ** 2 + (l - r) * q * q, f * capacity * capacity + g * g


def row_ranges(n: int, capacity: int, l: int) -> tuple[int, int, int]:
    """The range of |label(i) & V_t|, the nodes of step t that share node i's label (section
    "Label-size rows" of this module).

    Parameters
    ----------
    n : int
        Vertices of a step.
    capacity : int
        Most vertices per label and step (k).
    l : int
        Number of labels.

    Returns
    -------
    tuple of int
        (lo_same, lo_other, hi): the least count for a node i of step t itself (i counts), the
        least for a node of another step, and the most: lo = max(0, n - (l - 1) k) (the other
        l - 1 labels hold at most (l - 1) k of the step's n vertices), at least 1 for i in
        V_t, and hi = min(k, n).

    References
    ----------
    Paper 004, section 1 (the capacity k per label and step).
    """
    lo = max(0, n - (l - 1) * capacity)
    return max(1, lo), lo, min(capacity, n)


class _Window:
    """The Donath-Hoffman function of one window with its multipliers, and its eigenvector
    cache. The variables are x = (u, c+, c-, a, z): u of length N = w n (the diagonal
    shift), c+ and c- of length w (per-step balance, empty without), a of length w N
    (label-size rows, empty without; a[t, i] for step t of the window and node i), z the
    same-label multipliers of the pairs i < j (upper triangle, row by row; empty without)."""

    def __init__(self, lap: Any, sizes: np.ndarray, steps: int, balance: tuple[int, int] | None,
                 rows: tuple[int, int, int] | None = None, pairs: bool = False) -> None:
        self.lap = lap
        self.order = lap.shape[0]
        self.steps = steps
        self.n = self.order // steps
        self.q = int(np.count_nonzero(sizes))
        self.m = sizes[:self.q]
        self.balance = balance
        self.rows = rows
        self.pairs = pairs
        w, order = steps, self.order
        self.c_at = order
        self.a_at = self.c_at + (2 * w if balance else 0)
        self.z_at = self.a_at + (w * order if rows else 0)
        self.dim = self.z_at + (order * (order - 1) // 2 if pairs else 0)
        # the pairs i < j in z's order (made once: every evaluation uses them twice)
        self.upper = np.triu_indices(order, 1) if pairs else None
        # step indicators (w, N) and the rows' ranges per (step, node)
        self.ones = np.zeros((w, order))
        for t in range(w):
            self.ones[t, t * self.n:(t + 1) * self.n] = 1.0
        if rows:
            lo_same, lo_other, hi = rows
            self.lo = np.where(self.ones > 0, float(lo_same), float(lo_other))
            self.hi = np.full((w, order), float(hi))
        self.vectors: np.ndarray | None = None

    def split(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(u, c, a, z) with c = c+ - c- and a of shape (w, N) (zeros without)."""
        w, order = self.steps, self.order
        u = x[:order]
        c = (x[self.c_at:self.c_at + w] - x[self.c_at + w:self.a_at] if self.balance
             else np.zeros(w))
        a = x[self.a_at:self.z_at].reshape(w, order) if self.rows else np.zeros((w, order))
        return u, c, a, x[self.z_at:self.dim]

    def dense(self, x: np.ndarray) -> np.ndarray:
        """A = L + diag(u) + sum_t c_t 1_t 1_t^T / n + sum_t (a_t 1_t^T + 1_t a_t^T) / 2 - Z as a
        dense array."""
        u, c, a, z = self.split(x)
        mat = self.lap.toarray()
        mat[np.diag_indices(self.order)] += u
        n = self.n
        for t in range(self.steps):
            if c[t] != 0.0:
                mat[t * n:(t + 1) * n, t * n:(t + 1) * n] += c[t] / n
        if self.rows and np.any(a):
            r = a.T @ self.ones
            mat += 0.5 * (r + r.T)
        if self.pairs and z.size:
            upper = np.zeros((self.order, self.order))
            upper[self.upper] = z
            mat -= upper + upper.T
        return mat

    def operator(self, x: np.ndarray) -> Any:
        """A as a scipy LinearOperator (sparse Laplacian plus diagonal plus rank-one and
        rank-two terms; not with pair multipliers, which make A dense)."""
        import scipy.sparse as sp
        from scipy.sparse.linalg import LinearOperator

        u, c, a, _ = self.split(x)
        base = (self.lap + sp.diags(u)).tocsr()
        if not np.any(c) and not np.any(a):
            return base
        w, n, scale = self.steps, self.n, c / self.n
        ones = self.ones

        def matmat(v: np.ndarray) -> np.ndarray:
            v2 = v.reshape(self.order, -1)
            means = v2.reshape(w, n, -1).sum(axis=1) * scale[:, None]
            out = base @ v2 + np.repeat(means, n, axis=0)
            if self.rows:
                out += 0.5 * (a.T @ (ones @ v2) + ones.T @ (a @ v2))
            return out if v.ndim == 2 else out.ravel()

        return LinearOperator((self.order, self.order), matvec=matmat, matmat=matmat,
                              dtype=float)

    def eig(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The q smallest eigenpairs of A (approximate: used for the search only)."""
        import scipy.linalg as la

        if self.order <= _DENSE_ORDER or self.q >= self.order // 4 or self.pairs:
            return la.eigh(self.dense(x), subset_by_index=[0, self.q - 1])
        from scipy.sparse.linalg import lobpcg

        block = self.q + 4
        if self.vectors is None:
            lam, vec = la.eigh(self.dense(x), subset_by_index=[0, block - 1])
        else:
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                lam, vec = lobpcg(self.operator(x), self.vectors, largest=False, tol=1e-7,
                                  maxiter=200)
            order = np.argsort(lam)
            lam, vec = lam[order], vec[:, order]
        self.vectors = vec
        return lam[:self.q], vec[:, :self.q]

    def penalty(self, c: np.ndarray, a: np.ndarray | None = None) -> float:
        """sum_t max(c_t beta, c_t gamma) / n + sum_{t,i} max(a_ti lo_ti, a_ti hi_ti) (0 for
        the multipliers a window does not have)."""
        out = 0.0
        if self.balance:
            beta, gamma = self.balance
            out += math.fsum(max(ct * beta, ct * gamma) for ct in c.tolist()) / self.n
        if self.rows and a is not None:
            out += math.fsum(np.maximum(a * self.lo, a * self.hi).ravel().tolist())
        return out

    def value(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """The search's function of x and its gradient; its balance term is
        (gamma c+ - beta c-) / n, linear in x and at least the certified one, its rows' term
        the certified one (a supergradient where a_ti = 0 and lo < hi)."""
        lam, vec = self.eig(x)
        u = x[:self.order]
        val = 0.5 * (float(self.m @ lam) - float(u.sum()))
        grad = np.zeros(self.dim)
        grad[:self.order] = 0.5 * ((vec ** 2) @ self.m - 1.0)
        w = self.steps
        if self.balance:
            beta, gamma = self.balance
            plus, minus = x[self.c_at:self.c_at + w], x[self.c_at + w:self.a_at]
            val -= 0.5 * float(gamma * plus.sum() - beta * minus.sum()) / self.n
            sums = vec.reshape(w, self.n, self.q).sum(axis=1)
            share = (sums ** 2) @ self.m  # S_t
            grad[self.c_at:self.c_at + w] = 0.5 * (share - gamma) / self.n
            grad[self.c_at + w:self.a_at] = 0.5 * (beta - share) / self.n
        if self.rows:
            a = x[self.a_at:self.z_at].reshape(w, self.order)
            val -= 0.5 * float(np.maximum(a * self.lo, a * self.hi).sum())
            # d(v^T (a_t 1_t^T + 1_t a_t^T) v / 2) / d a_t[i] = v[i] (1_t . v)
            g = ((vec * self.m) @ (self.ones @ vec).T).T     # (w, N)
            grad[self.a_at:self.z_at] = (0.5 * (g - np.where(a > 0, self.hi, self.lo))).ravel()
        if self.pairs:
            # d(DH(A - Z) / 2) / d z_ij = -sum_j m_j y_j(i) y_j(j)
            same = (vec * self.m) @ vec.T
            grad[self.z_at:] = -same[self.upper]
        return val, grad

    def certified(self, x: np.ndarray) -> float:
        """The window's bound at ``x`` from dense LAPACK eigenvalues lowered by the margin
        (negative pair multipliers count as 0: only z >= 0 is a bound)."""
        import scipy.linalg as la

        if self.pairs:
            x = x.copy()
            x[self.z_at:] = np.maximum(x[self.z_at:], 0.0)
        u, c, a, _ = self.split(x)
        mat = self.dense(x)
        norm = float(np.abs(mat).sum(axis=1).max())
        lam = la.eigvalsh(mat, subset_by_index=[0, self.q - 1])
        lam = lam - EIG_MARGIN * self.order * max(1.0, norm)
        return max(0.0, 0.5 * (math.fsum(self.m * lam) - math.fsum(u) - self.penalty(c, a)))


class _Deadline(Exception):
    pass


def _maximise(win: _Window, iterations: int, deadline: float, start: np.ndarray | None = None,
              projected: bool = False, out: dict | None = None) -> tuple[np.ndarray, float]:
    """L-BFGS-B (``projected``: :func:`_projected_lbfgs`) on -value(x) from ``start`` (default
    zero; c+, c-, z >= 0); the best x seen (the start when out of time at once) and the
    search's value at x = 0 (NaN when not reached); ``out["val"]`` gets the best value and
    ``out["start"]`` the first one (-inf when out of time at once)."""
    import scipy.optimize as so

    x0 = np.zeros(win.dim) if start is None else np.asarray(start, float)
    best = {"val": -math.inf, "x": x0.copy(), "zero": math.nan}

    def f(x: np.ndarray) -> tuple[float, np.ndarray]:
        if time.perf_counter() > deadline:
            raise _Deadline
        val, grad = win.value(x)
        if math.isnan(best["zero"]) and not np.any(x):
            best["zero"] = val
        best.setdefault("start", val)
        if val > best["val"]:
            best["val"], best["x"] = val, x.copy()
        return -val, -grad

    if iterations > 0:
        # u and a free; c+, c- and z >= 0
        lower = np.zeros(win.dim, dtype=bool)
        lower[win.c_at:win.a_at] = True
        lower[win.z_at:] = True
        with contextlib.suppress(_Deadline):
            if projected:
                _projected_lbfgs(f, x0, lower, iterations)
            else:
                bounds = [(0.0, None) if b else (None, None) for b in lower.tolist()]
                so.minimize(f, x0, jac=True, method="L-BFGS-B", bounds=bounds,
                            options={"maxiter": iterations, "maxfun": 2 * iterations})
    if out is not None:
        out["val"], out["start"] = best["val"], best.get("start", -math.inf)
    return best["x"], best["zero"]


def _stage(win: _Window, iterations: int, deadline: float,
           warm: np.ndarray) -> tuple[np.ndarray, bool]:
    """One later stage of a window's search: from the last stage's point ``warm`` (new
    multipliers at 0) and, when that search ends on its own before ``deadline`` without
    raising the value it started from, once more from zero; the better point. A warm start can
    stall where eigenvalues cross (drift n = 30, tau = 4, l = 2, seed 1, one window of 4
    steps: the rows stage stayed at 41.8 from the balance stage's point and reached 52.2 from
    zero). A stage that made progress keeps the rest of its time for the next stage (er n =
    300: its rows stage ends early, and the pair stage is still rising at the limit). Also
    returns whether it searched again."""
    its = 20 * iterations if win.pairs else iterations
    first: dict = {}
    x, _ = _maximise(win, its, deadline, start=warm, projected=win.pairs, out=first)
    gain = first.get("val", -math.inf) - first.get("start", -math.inf)
    if time.perf_counter() >= deadline or gain > 1e-9 * max(1.0, abs(first.get("val", 0.0))):
        return x, False
    second: dict = {}
    y, _ = _maximise(win, its, deadline, projected=win.pairs, out=second)
    return (y if second.get("val", -math.inf) > first.get("val", -math.inf) else x), True


def spectral_bound(instance: Any, *, time_limit: float | None = None, window: int = 0,
                   max_order: int = 2000, iterations: int = 300, balance: bool = True,
                   rows: bool = True, pairs: int = 1000, threads: int = 1) -> BoundValue:
    """Donath-Hoffman eigenvalue lower bound on the TABGP cost, summed over windows of steps.

    Parameters
    ----------
    instance : Instance
        A TABGP instance.
    time_limit : float, optional
        Seconds for the whole bound (default :data:`SPECTRAL_SECONDS`); the search over the
        diagonal shift (and the multipliers) stops at the limit and the bound stays valid. The
        final dense eigenvalue computation runs after the search (0.35 s reserved per window
        of 1,000 nodes, a cube law beyond).
    window : int
        Steps per window (0: automatic, see :class:`SpectralOptions`).
    max_order : int
        Largest window order for the automatic choice.
    iterations : int
        L-BFGS iterations per window.
    balance : bool
        Per-step balance multipliers (module docstring, section "Per-step balance
        multipliers"); False: the diagonal shift alone.
    rows : bool
        Label-size rows (module docstring, section "Label-size rows").
    pairs : int
        Largest window order with same-label pair multipliers (module docstring, section
        "Same-label pairs"); 0: never. The search of a window runs in stages, (u, c), then the
        rows, then the pairs, each from the last one's best point and with an equal share of
        the window's time (what a stage leaves goes to the next); a later stage whose search
        ends before its share without raising its start runs once more from zero and keeps
        the better point.
    threads : int
        BLAS threads while the bound runs (default 1, whatever the environment allows
        otherwise: the certification's reserve is measured on one thread), at most the
        machine's cores.

    Returns
    -------
    BoundValue
        The certified bound (see the module docstring); metrics ``window``, ``windows``,
        ``balance`` (1 with multipliers), ``rows`` (1 with label-size rows), ``pairs`` (1 with
        pair multipliers), ``unshifted`` (the search's value at u = 0, c = 0,
        uncertified, 0 for a window not reached), ``search_seconds``, ``certify_seconds``,
        ``uncertified_windows`` (windows whose certification would end past the time limit:
        they count 0, still a bound; the time per window is probed on this machine first) and
        ``restarted_stages`` (later stages whose warm-started search stalled at its start and
        ran again from zero).

    References
    ----------
    Donath and Hoffman, "Lower bounds for the partitioning of graphs", IBM J. Res. Dev. 17(5),
    1973; Rendl and Wolkowicz, "A projection technique for partitioning the nodes of a graph",
    Ann. Oper. Res. 58, 1995 (the bound with an optimised diagonal); Karisch and Rendl,
    "Semidefinite programming and graph equipartition", Fields Inst. Commun. 18, 1998 (the
    constraints Y e = m e and Y >= 0 whose multipliers are the label-size rows and the pairs).
    Paper 004, section 1 (the objective and the capacity k).
    """
    import os

    from threadpoolctl import threadpool_limits

    # more threads than cores only contend (64 on 2 busy cores ran past 120 s of a 5 s limit)
    with threadpool_limits(limits=min(threads, os.cpu_count() or 1), user_api="blas"):
        return _spectral(instance, time_limit, window, max_order, iterations, balance, rows,
                         pairs)


def _spectral(instance: Any, time_limit: float | None, window: int, max_order: int,
              iterations: int, balance: bool, rows: bool = True, pairs: int = 1000
              ) -> BoundValue:
    """:func:`spectral_bound` with the BLAS threads set."""
    t0 = time.perf_counter()
    limit = SPECTRAL_SECONDS if time_limit is None else float(time_limit)
    w = _window_size(instance, window, max_order)
    laps = window_laplacians(instance, w)
    sizes = part_sizes(w * instance.n, w * instance.k, instance.l)
    ranges = balance_range(instance.n, instance.k, instance.l) if balance else None
    counts = row_ranges(instance.n, instance.k, instance.l) if rows else None
    with_pairs = 2 <= w * instance.n <= pairs
    wins = [_Window(lap, sizes, w, ranges, counts, with_pairs) for lap in laps]
    # reserve a dense eigenvalue pass per window, at this machine's speed now (contended: up
    # to 20 times slower than the constant)
    order = w * instance.n
    per_window = 0.05 + max(_CERTIFY_SECONDS * (order / 1000.0) ** 3, _certify_speed(order))
    reserve = len(wins) * per_window
    search_end = t0 + max(0.0, limit - reserve)
    shifts, zeros, restarted = [], [], 0
    for i, win in enumerate(wins):
        share = max(0.0, (search_end - time.perf_counter()) / (len(wins) - i))
        now = time.perf_counter()
        # in stages: (u, c), rows, pairs, each from the last one's best point (new multipliers
        # at 0: same value), equal shares of time (leftovers go to the next)
        stages = [_Window(win.lap, sizes, w, ranges) if counts or win.pairs else win]
        if counts:
            stages.append(_Window(win.lap, sizes, w, ranges, counts))
        if win.pairs:
            stages.append(win)
        x, zero = _maximise(stages[0], iterations, now + share / len(stages))
        for j, stage in enumerate(stages[1:], start=2):
            x, again = _stage(stage, iterations, now + share * j / len(stages),
                              np.concatenate([x, np.zeros(stage.dim - x.size)]))
            restarted += again
        shifts.append(x)
        zeros.append(max(0.0, zero))
    search = time.perf_counter() - t0
    terms, took, end = [], 0.0, t0 + limit + 0.5 * max(2.0, 0.1 * limit)  # half the tolerance
    for win, u in zip(wins, shifts, strict=True):
        if time_limit is None or time.perf_counter() + (took or per_window) <= end:
            start = time.perf_counter()
            terms.append(win.certified(u))  # one not certified by then counts 0 (share >= 0)
            took = max(took, time.perf_counter() - start)
    return BoundValue(max(0.0, safe(math.fsum(terms), "min")), metrics={
        "window": float(w), "windows": float(len(wins)), "balance": float(balance),
        "rows": float(rows), "pairs": float(with_pairs), "unshifted": math.fsum(zeros),
        "search_seconds": search, "certify_seconds": time.perf_counter() - t0 - search,
        "uncertified_windows": float(len(wins) - len(terms)),
        "restarted_stages": float(restarted)})


def _certify_speed(order: int, probe: int = 200) -> float:
    """Seconds one certification of ``order`` nodes should take here now: a dense eigenvalue
    pass of ``probe`` nodes timed (the faster of two), scaled by the cube law."""
    import scipy.linalg as la
    k = max(2, min(order, probe))
    mat = np.random.default_rng(0).standard_normal((k, k))
    times = [time.perf_counter()]
    for _ in range(2):
        la.eigvalsh(mat + mat.T, subset_by_index=[0, k // 10])
        times.append(time.perf_counter())
    return float(np.diff(times).min()) * (order / k) ** 3


def _estimate_spectral(instance: Any, options: Any) -> Size:
    w = _window_size(instance, options.window, options.max_order)
    order = w * instance.n
    windows = instance.tau - w + 1
    # with pair multipliers: the projected L-BFGS's 10 correction pairs, its iterates,
    # directions and gradients (about 20 more vectors of N^2 / 2 values) and the dense
    # matrices of an evaluation (about 5 N^2): 45 such vectors measured (tracemalloc, 900
    # nodes), 60 counted
    pairs = 2 <= order <= options.pairs
    return Size(memory=3.0 * 8.0 * order * order + 64.0 * sum(len(e) for e in instance.edges)
                + (60.0 * 8.0 * order * order / 2 if pairs else 0.0),
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
                                  "diagonal shift, balance, label-size and same-label pair "
                                  "multipliers; scales to thousands of vertices"),
}
