"""Lower bounds on TAP (paper 000, objective (8)): Gilmore-Lawler and the RLT1 dual ascent.

The TAP objective (8) is, for an assignment p of the m modules to the n VMs with at most K
modules per VM,

    cost(p) = sum_{i != i'} M[i, i'] D[p(i), p(i')]

(the diagonal of M never costs anything, since ``D[j, j] = 0``). Both bounds work on the
*padded QAP*: every VM j becomes ``kc = min(K, m)`` slots (no VM ever holds more than m
modules), slot s lies on VM ``s // kc`` and two slots are ``D[vm(s), vm(t)]`` apart (0 on the
same VM). A TAP assignment is then an injective map of the m modules into the ``N = n kc``
slots, and every injective map is a TAP assignment of the same cost, so a lower bound on the
padded problem is one on TAP. As D is symmetric, (8) only depends on the pair weights
``W = M + M^T`` (zero diagonal): ``cost(p) = 1/2 sum_{i != i'} W[i, i'] D[p(i), p(i')]``.

``glb``: the Gilmore-Lawler bound (:func:`gilmore_lawler`), one rectangular linear assignment
problem, milliseconds at n = 100. ``hahn-grant``: the dual ascent of the level-1 RLT
(:func:`hahn_grant`), much stronger, O(N^5) per round with a compiled kernel.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dmlopt.bounds import safe
from dmlopt.contract import Bound, BoundValue, NoOptions, Size
from dmlopt.models.tap.instance import Instance, Solution

#: largest magnitude below which integer sums are exact in float64 (LAP costs and values)
_EXACT = 2.0**52


def _integral(a: np.ndarray) -> bool:
    return bool(np.all(a == np.round(a)))


def _slot_rows(distance: np.ndarray, kc: int, length: int) -> np.ndarray:
    """For every VM j, the ``length`` smallest distances from one slot of j to the other slots,
    ascending: ``kc - 1`` zeros (the other slots of j), then every ``D[j, j']`` (j' != j)
    ``kc`` times. Shape ``(n, length)``."""
    n = distance.shape[0]
    others = np.sort(distance[~np.eye(n, dtype=bool)].reshape(n, n - 1), axis=1) if n > 1 \
        else np.zeros((n, 0))
    rows = np.concatenate([np.zeros((n, kc - 1)), np.repeat(others, kc, axis=1)], axis=1)
    return rows[:, :length]


def _descending_rows(a: np.ndarray) -> np.ndarray:
    """Each row of the square matrix ``a`` without its diagonal entry, sorted descending."""
    m = a.shape[0]
    off = a[~np.eye(m, dtype=bool)].reshape(m, m - 1)
    return -np.sort(-off, axis=1)


def glb_costs(weights: np.ndarray, distance: np.ndarray, kc: int) -> np.ndarray:
    """The Gilmore-Lawler cost matrix of a rectangular QAP with non-negative data.

    Parameters
    ----------
    weights : (m, m) array, non-negative
        Facility weights ``A``; the bounded cost is ``sum_{i != i'} A[i, i'] B[s(i), s(i')]``
        over injective maps s of the facilities into the slots (the diagonal is ignored).
    distance : (n, n) array, non-negative, zero diagonal
        VM distances; slot distances ``B`` are ``distance`` between the slots' VMs (0 on one VM).
    kc : int
        Slots per VM (``n kc >= m``).

    Returns
    -------
    (m, n) array
        ``L[i, j]``: the least possible value of ``sum_{i' != i} A[i, i'] B[s, s(i')]`` with
        facility i on a slot s of VM j, by the rearrangement inequality: the m - 1 weights of
        row i, descending, times the m - 1 smallest slot distances from s, ascending.

    References
    ----------
    Gilmore, "Optimal and suboptimal algorithms for the quadratic assignment problem", J. SIAM
    10 (1962); Lawler, "The quadratic assignment problem", Management Science 9 (1963);
    Burkard, Dell'Amico, Martello, *Assignment Problems* (2009), section 7.5.1.
    """
    m = weights.shape[0]
    if m < 2:
        return np.zeros((m, distance.shape[0]))
    return _descending_rows(weights) @ _slot_rows(distance, kc, m - 1).T


def _lap(costs: np.ndarray, kc: int) -> tuple[float, np.ndarray]:
    """Minimum of ``sum_i costs[i, vm(i)]`` with at most ``kc`` facilities per VM (columns
    repeated ``kc`` times), exactly by :func:`scipy.optimize.linear_sum_assignment`; returns the
    value (summed in float64 from the optimal assignment) and the VM of each row."""
    from scipy.optimize import linear_sum_assignment

    wide = np.repeat(costs, kc, axis=1)
    rows, cols = linear_sum_assignment(wide)
    order = np.argsort(rows)
    vm = cols[order] // kc
    return float(math.fsum(costs[np.arange(costs.shape[0]), vm])), vm


def gilmore_lawler(instance: Instance) -> tuple[float, np.ndarray, dict[str, float]]:
    """Gilmore-Lawler lower bound of a TAP instance (rectangular, capacitated, asymmetric M).

    Three valid bounds from three ways of writing (8) as a sum over modules, each a linear
    assignment problem on :func:`glb_costs`; the largest is returned:

    * ``sym``: ``1/2 sum_i sum_{i'} W[i, i'] D[p(i), p(i')]`` with ``W = M + M^T``,
      costs ``glb_costs(W) / 2``;
    * ``out``: ``sum_i sum_{i'} M[i, i'] D[...]`` (the traffic module i sends), ``glb_costs(M)``;
    * ``in``: the traffic module i receives, ``glb_costs(M^T)``.

    They coincide when M is symmetric. For each, the assignment problem's optimum is at most
    the cost of the optimal TAP assignment (whose row terms are each at least their
    rearrangement minimum), so it is a lower bound.

    Parameters
    ----------
    instance : Instance
        A TAP instance.

    Returns
    -------
    bound : float
        A valid lower bound on (8). With integral M and D (and every sum below 2^52) the
        costs, the assignment problem and its value are exact in float64 and the bound is
        rounded up to an integer (the objective is integral); otherwise it is moved down by
        :func:`dmlopt.bounds.safe`.
    assignment : (m,) int array
        The VM of each module in the best assignment problem's optimum: a feasible TAP
        solution (at most K modules per VM).
    metrics : dict
        ``glb_sym``, ``glb_out``, ``glb_in``: the three values before rounding.

    References
    ----------
    Paper 000, section IV, equations (8)-(12) (the objective and constraints). Gilmore (1962),
    Lawler (1963); Burkard, Dell'Amico, Martello, *Assignment Problems* (2009), section 7.5.1
    (the bound for Koopmans-Beckmann QAPs, here with rectangular, capacitated slots).
    """
    m, K = instance.m, instance.K
    mm, d = instance.traffic, instance.distance
    kc = min(K, m)
    w = mm + mm.T
    np.fill_diagonal(w, 0.0)
    exact = (_integral(mm) and _integral(d)
             and 2.0 * m * m * float(mm.max(initial=0.0)) * float(d.max(initial=0.0)) < _EXACT)
    best, best_vm, values = -math.inf, np.zeros(m, dtype=np.int64), {}
    for label, a, scale in (("sym", w, 0.5), ("out", mm, 1.0), ("in", mm.T, 1.0)):
        value, vm = _lap(glb_costs(a, d, kc), kc)
        value *= scale
        values[f"glb_{label}"] = value
        if value > best:
            best, best_vm = value, vm
    # integral data: the LAP is exact, ``2 * best`` an integer and the objective integral
    bound = float(math.ceil(best - 0.25)) if exact else safe(best, "min")
    return bound, best_vm, values


def _glb(instance: Instance, *, time_limit: float | None = None) -> BoundValue:
    bound, vm, values = gilmore_lawler(instance)
    return BoundValue(bound, solution=Solution(assignment=[int(j) for j in vm]),
                      metrics=values)


def _glb_estimate(instance: Instance, _options: Any) -> Size:
    m, n = instance.m, instance.n
    slots = n * min(instance.K, m)
    return Size(8.0 * (3 * m * slots + 2 * n * n + m * m), float(m * m * n + m * m * slots))


BOUNDS: dict[str, Bound] = {
    "glb": Bound(function=_glb, Options=NoOptions, estimate=_glb_estimate,
                 description="Gilmore-Lawler bound (rectangular, capacitated): one linear "
                 "assignment problem, O(m^2 n + m^2 n K) (scipy)"),
}

__all__ = ["BOUNDS", "gilmore_lawler", "glb_costs"]
