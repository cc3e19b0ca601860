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
import time
from typing import Any

import numpy as np
import pydantic

from dmlopt.bounds import safe
from dmlopt.contract import Bound, BoundValue, NoOptions, Options, Size
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


def glb_costs(weights: np.ndarray, distance: np.ndarray, kc: int,
              deadline: float | None = None) -> np.ndarray | None:
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
    deadline : float or None
        A ``time.perf_counter()`` instant, looked at between blocks of rows: None is returned
        past it.

    Returns
    -------
    (m, n) array or None
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
    if deadline is None:
        return _descending_rows(weights) @ _slot_rows(distance, kc, m - 1).T
    slots = _slot_rows(distance, kc, m - 1).T
    out = np.empty((m, distance.shape[0]))
    block = 128
    for i in range(0, m, block):
        if time.perf_counter() > deadline:
            return None
        rows = weights[i:i + block]
        off = np.ones(rows.shape, dtype=bool)
        off[np.arange(rows.shape[0]), np.arange(i, i + rows.shape[0])] = False
        desc = -np.sort(-rows[off].reshape(rows.shape[0], m - 1), axis=1)
        out[i:i + block] = desc @ slots
    return out


#: assignment problems of at most this many entries go to scipy in one call (uninterruptible,
#: well under a second); larger ones to the resumable kernel, which looks at the clock per row
_SMALL_LAP = 250_000


def _lap(costs: np.ndarray, kc: int, deadline: float | None = None
         ) -> tuple[float, np.ndarray | None]:
    """Minimum of ``sum_i costs[i, vm(i)]`` with at most ``kc`` facilities per VM (columns
    repeated ``kc`` times); returns the value (summed in float64 from the optimal assignment)
    and the VM of each row.

    Exactly by :func:`scipy.optimize.linear_sum_assignment`, or for a problem above
    :data:`_SMALL_LAP` entries with a ``deadline`` (``time.perf_counter()``), by the resumable
    Hungarian method (:func:`_bounds_kernel.lap_rows`) one row at a time: stopped by the
    deadline, it returns the dual value of its potentials (a lower bound on the minimum, the
    unprocessed rows at their least reduced cost) and None for the VMs. ``costs`` must be
    non-negative.
    """
    wide = np.repeat(costs, kc, axis=1)
    m, cols = wide.shape
    if deadline is None or wide.size <= _SMALL_LAP:
        from scipy.optimize import linear_sum_assignment

        rows, assigned = linear_sum_assignment(wide)
        vm = assigned[np.argsort(rows)] // kc
        return float(math.fsum(costs[np.arange(m), vm])), vm
    from dmlopt.models.tap import _bounds_kernel as kern

    a = np.ascontiguousarray(wide, dtype=np.float64)
    u, v = np.zeros(m + 1), np.zeros(cols + 1)
    p, way = np.zeros(cols + 1, dtype=np.int64), np.zeros(cols + 1, dtype=np.int64)
    minv, used = np.empty(cols + 1), np.empty(cols + 1, dtype=np.bool_)
    for i in range(m):
        if time.perf_counter() > deadline:
            rest = (a[i:] - v[1:]).min(axis=1)  # dual feasible for the rows not processed
            return float(math.fsum(u[1:i + 1]) + math.fsum(rest) + math.fsum(v[1:])), None
        kern.lap_rows(a, u, v, p, way, minv, used, i, i + 1)
    vm = np.empty(m, dtype=np.int64)
    for c in range(cols):
        if p[c + 1]:
            vm[p[c + 1] - 1] = c // kc
    return float(math.fsum(costs[np.arange(m), vm])), vm


def gilmore_lawler(instance: Instance, deadline: float | None = None
                   ) -> tuple[float, np.ndarray | None, dict[str, float]]:
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
    deadline : float or None
        A ``time.perf_counter()`` instant: the forms are tried in the order above while there
        is time; an assignment problem stopped by it gives the dual value of its potentials (a
        lower bound, :func:`_lap`), and a deadline met before the first cost matrix is
        complete gives 0, valid since M and D are non-negative (metric ``stopped_by_time``).

    Returns
    -------
    bound : float
        A valid lower bound on (8). With integral M and D (and every sum below 2^52) the
        costs, the assignment problem and its value are exact in float64 and the bound is
        rounded up to an integer (the objective is integral); otherwise it is moved down by
        :func:`dmlopt.bounds.safe`.
    assignment : (m,) int array or None
        The VM of each module in the best assignment problem's optimum: a feasible TAP
        solution (at most K modules per VM); None when no assignment problem finished.
    metrics : dict
        ``glb_sym``, ``glb_out``, ``glb_in``: the values before rounding of the forms tried;
        ``stopped_by_time``: 1 if the deadline cut the computation short.

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
    best, best_vm = 0.0, None  # M, D >= 0: 0 is a bound
    values: dict[str, float] = {"stopped_by_time": 0.0}
    complete, found = True, False
    for label, a, scale in (("sym", w, 0.5), ("out", mm, 1.0), ("in", mm.T, 1.0)):
        costs = glb_costs(a, d, kc, deadline)
        if costs is None:
            values["stopped_by_time"] = 1.0
            break
        value, vm = _lap(costs, kc, deadline)
        value *= scale
        values[f"glb_{label}"] = value
        if value > best or not found:
            best, best_vm = max(best, value), (vm if value >= best else best_vm)
        found = True
        if vm is None:
            complete = False
            values["stopped_by_time"] = 1.0
            break
        if deadline is not None and time.perf_counter() > deadline:
            values["stopped_by_time"] = float(label != "in")
            break
    if not found:
        return 0.0, None, values
    # integral data: the LAP is exact, ``2 * best`` an integer and the objective integral
    bound = float(math.ceil(best - 0.25)) if exact and complete else safe(best, "min")
    return max(bound, 0.0), best_vm, values


def _glb(instance: Instance, *, time_limit: float | None = None) -> BoundValue:
    """The Gilmore-Lawler lower bound (:func:`gilmore_lawler`) as a bound run.

    Parameters
    ----------
    instance : Instance
        The TAP instance (any K: on its padded QAP).
    time_limit : float or None, optional
        Seconds: the forms of :func:`gilmore_lawler` are tried while there is time, the cost
        matrices and the assignment problems looking at the clock as they go (milliseconds at
        n = 100; at m = n = 2,000 the three forms take tens of seconds).

    Returns
    -------
    BoundValue
        A lower bound on (8) (rounded up with integral data, else shifted by
        :func:`dmlopt.bounds.safe`); the assignment of the LAP as the solution (the core
        evaluates it); metrics ``glb_<form>`` of each row form tried.

    References
    ----------
    P. C. Gilmore, Optimal and suboptimal algorithms for the QAP, J. SIAM 10 (1962) 305-313;
    E. L. Lawler, The quadratic assignment problem, Management Science 9 (1963) 586-599. Ours:
    the rectangular, capacitated form for TAP (paper 000, (8)-(12)).
    """
    deadline = None if time_limit is None else time.perf_counter() + 0.9 * time_limit
    bound, vm, values = gilmore_lawler(instance, deadline)
    solution = None if vm is None else Solution(assignment=[int(j) for j in vm])
    return BoundValue(bound, solution=solution, metrics=values)


def _glb_estimate(instance: Instance, _options: Any) -> Size:
    m, n = instance.m, instance.n
    slots = n * min(instance.K, m)
    return Size(8.0 * (3 * m * slots + 2 * n * n + m * m), float(m * m * n + m * m * slots))




#: unit roundoff of float64
_UNIT = 2.0**-53


def _padded_qap(instance: Instance) -> tuple[np.ndarray, np.ndarray, int]:
    """Symmetric pair weights ``W / 2`` padded with zero rows to N facilities, slot distances
    (N x N) and N, for the padded QAP of the module docstring."""
    m, n = instance.m, instance.n
    kc = min(instance.K, m)
    size = n * kc
    mm = instance.traffic
    f = np.zeros((size, size))
    f[:m, :m] = 0.5 * (mm + mm.T)
    np.fill_diagonal(f, 0.0)
    vm = np.arange(size) // kc
    return f, instance.distance[np.ix_(vm, vm)], size


def hahn_grant(instance: Instance, *, time_limit: float | None = None, rounds: int = 10_000,
               share: float = 1.0, stall: int = 50, stall_gain: float = 1e-6,
               ) -> tuple[float, np.ndarray | None, dict[str, float]]:
    """Hahn-Grant dual ascent of the level-1 RLT of TAP's padded QAP: a lower bound at least
    as strong as the Gilmore-Lawler bound (its first round is that bound) that grows every round.

    The padded QAP (module docstring) has N facilities (m modules, N - m dummies without
    traffic) and N slots. With ``y[i, j, k, l] = x[i, j] x[k, l]`` its objective is
    ``sum C[i, j, k, l] y[i, j, k, l]`` with ``C = W[i, k] D[j, l] / 2``. Each round keeps the
    identity ``cost(x) = const + sum B x + sum C y`` for every permutation x:

    1. for every block (i, j), the assignment problem of ``C[i, j, ., .]`` (rows k != i,
       columns l != j; when ``x[i, j] = 1`` the block's y is a permutation matrix): its dual
       value moves to ``B[i, j]``, its reduced costs (>= 0) stay in the block;
    2. the assignment problem of B: its dual value moves to ``const``, B keeps its reduced
       costs (>= 0). Now ``B, C >= 0``, so ``const`` is a lower bound;
    3. ``share`` of every ``B[i, j]`` is spread evenly over its block (``B[i, j] / (N - 1)``
       per entry: the block holds N - 1 ones when ``x[i, j] = 1``);
    4. complementary costs ``C[i, j, k, l]`` and ``C[k, l, i, j]`` multiply the same product
       ``x[i, j] x[k, l]``: both get their mean, so the next round's assignment problems see
       what the partner block could not use.

    Floating point: the identity holds up to rounding; the bound subtracts an upper bound on
    the accumulated rounding error (``32 u rounds (N^3 (max|C| + max|B|) + N |const|)``, u the
    unit roundoff) and any negative reduced cost (``N min B + N (N - 1) min C``). With integral
    data the objective is integral and the bound is rounded up.

    Parameters
    ----------
    instance : Instance
        A TAP instance (any K; N = n min(K, m) slots; memory 8 N^4 bytes).
    time_limit : float, optional
        Seconds; checked after every row of blocks (N assignment problems) and before each
        round; the bound of the last completed step is returned. None: no limit.
    rounds : int
        Largest number of rounds.
    share : float
        Fraction of the linear costs B spread back into the blocks in step 3 (0 < share <= 1).
    stall, stall_gain : int, float
        Stop when the last ``stall`` rounds raised the bound by less than ``stall_gain`` times
        its value (converged: later rounds add little).

    Returns
    -------
    bound : float
        A valid lower bound on (8).
    assignment : (m,) int array or None
        The VM of each module in the best assignment of step 2 seen (feasible for TAP), or None
        when no round finished.
    metrics : dict
        ``rounds`` (completed), ``glb`` (the first round's bound), ``seconds``, ``stopped_by``
        (0 converged or proven optimal, 1 time limit, 2 round limit).

    References
    ----------
    Adams and Johnson, "Improved linear programming-based lower bounds for the quadratic
    assignment problem", DIMACS 16 (1994) (the level-1 RLT); Hahn and Grant, "Lower bounds for
    the quadratic assignment problem based upon a dual formulation", Operations Research 46
    (1998), section 3 (the dual procedure); Adams, Guignard, Hahn, Hightower, "A level-2
    reformulation-linearization technique bound for the quadratic assignment problem", EJOR 180
    (2007), section 4 (its interpretation as RLT1 dual ascent). Paper 000, section IV (the
    objective (8) and constraints (11)-(12)).
    """
    from dmlopt.models.tap import _bounds_kernel as kern

    t0 = time.perf_counter()
    deadline = math.inf if time_limit is None else t0 + time_limit
    m, kc = instance.m, min(instance.K, instance.m)
    f, dist, size = _padded_qap(instance)
    integral = _integral(instance.traffic) and _integral(instance.distance)
    c = np.einsum("ik,jl->ijkl", f, dist)
    b = np.zeros((size, size))
    const, big, bmax, done = 0.0, float(np.abs(c).max(initial=0.0)), 0.0, 0
    best, best_x, best_cost, glb_value, stopped = -math.inf, None, math.inf, math.nan, 2
    history: list[float] = []
    wts = instance.traffic

    def certified(low_b: float) -> float:
        low_c = float(c.min())  # unused entries (k == i or l == j) stay 0
        err = 32.0 * _UNIT * (done + 1) * (size**3 * (big + bmax) + size * abs(const))
        value = const + size * min(0.0, low_b) + size * (size - 1) * min(0.0, low_c) - err
        return float(math.ceil(value)) if integral else safe(value, "min")

    while done < rounds:
        if time.perf_counter() >= deadline:
            stopped = 1
            break
        out_of_time = False
        for i in range(size):
            kern.reduce_blocks(c, b, np.array([i]), size)
            if time.perf_counter() >= deadline and i < size - 1:
                out_of_time = True
                break
        bmax = max(bmax, float(np.abs(b).max()))
        gain, low_b, perm = kern.reduce_square(b, size)
        const += gain
        value = certified(low_b)
        done += 1
        if done == 1:
            glb_value = value
        history.append(value)
        slot = np.empty(size, dtype=np.int64)
        slot[perm[1:] - 1] = np.arange(size)
        vm = slot[:m] // kc
        cost = float((wts * instance.distance[np.ix_(vm, vm)]).sum())
        if cost < best_cost:
            best_cost, best_x = cost, vm
        if value > best:
            best = value
        if out_of_time:
            stopped = 1
            break
        if best >= best_cost - 1e-9 * max(1.0, abs(best_cost)):
            stopped = 0
            break
        if len(history) > stall and history[-1] - history[-1 - stall] <= \
                stall_gain * max(1.0, abs(history[-1])):
            stopped = 0
            break
        big = max(big, kern.spread_and_balance(c, b, size, share))
    return best, best_x, {"rounds": float(done), "glb": glb_value,
                          "ascent_seconds": time.perf_counter() - t0, "stopped_by": float(stopped)}


class HahnGrantOptions(Options):
    """Options of the Hahn-Grant dual ascent."""

    rounds: int = pydantic.Field(10_000, ge=1, description="largest number of rounds")
    share: float = pydantic.Field(1.0, gt=0.0, le=1.0, description="fraction of the linear "
                                  "costs spread back into the blocks each round")
    stall: int = pydantic.Field(50, ge=1, description="stop after this many rounds raising the "
                                "bound by less than stall_gain (relative)")
    stall_gain: float = pydantic.Field(1e-6, ge=0.0, description="relative gain counted as "
                                       "progress over stall rounds")


#: seconds the dual ascent runs when no time limit is given
HG_SECONDS = 60.0


def _hg(instance: Instance, *, time_limit: float | None = None, **options: Any) -> BoundValue:
    """The Hahn-Grant dual ascent (:func:`hahn_grant`), never below the Gilmore-Lawler bound.

    Parameters
    ----------
    instance : Instance
        The TAP instance (N = n min(K, m) slots; memory 8 N^4 bytes).
    time_limit : float or None, optional
        Seconds of ascent; None (default): :data:`HG_SECONDS`. The bound is valid at any stop.
    **options
        :class:`HahnGrantOptions`: ``rounds`` (default 10 000), ``share`` (fraction of the
        linear costs spread back each round, default 1.0), ``stall`` (rounds, default 50) and
        ``stall_gain`` (relative, default 1e-6).

    Returns
    -------
    BoundValue
        The larger of the ascent and the Gilmore-Lawler bound (the GLB's row forms can beat
        the ascent on asymmetric M, and it is the fallback when no round finished); the
        assignment of the last LAP as the solution; metrics ``ascent``, ``rounds`` ... and the
        GLB values.

    References
    ----------
    P. Hahn and T. Grant, Lower bounds for the quadratic assignment problem based upon a dual
    formulation, Operations Research 46 (1998) 912-922; the RLT1 of Adams and Johnson (1994).
    """
    bound, vm, metrics = hahn_grant(instance, time_limit=time_limit or HG_SECONDS, **options)
    # the GLB's out/in row forms can beat the ascent on asymmetric M; also the fallback when no
    # round finished within the time limit
    glb, glb_vm, values = gilmore_lawler(instance)
    metrics = {**metrics, **values, "ascent": bound if math.isfinite(bound) else glb}
    if glb > bound:
        bound, vm = glb, glb_vm
    solution = None if vm is None else Solution(assignment=[int(j) for j in vm])
    return BoundValue(bound, solution=solution, metrics=metrics)


def _hg_estimate(instance: Instance, _options: Any) -> Size:
    size = instance.n * min(instance.K, instance.m)
    return Size(8.0 * size**4 + 64.0 * size * size, float(size) ** 5)


BOUNDS: dict[str, Bound] = {
    "hahn-grant": Bound(function=_hg, Options=HahnGrantOptions, estimate=_hg_estimate,
                        description="Hahn-Grant dual ascent of the level-1 RLT (compiled; "
                        "8 N^4 bytes, N = n min(K, m)); stops when converged or at the time "
                        "limit (default 60 s) with a valid bound"),
    "glb": Bound(function=_glb, Options=NoOptions, estimate=_glb_estimate,
                 description="Gilmore-Lawler bound (rectangular, capacitated): one linear "
                 "assignment problem, O(m^2 n + m^2 n K) (scipy)"),
}

__all__ = ["BOUNDS", "HG_SECONDS", "HahnGrantOptions", "gilmore_lawler", "glb_costs", "hahn_grant"]
