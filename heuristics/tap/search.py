"""Swap-based search for TAP on its padded QAP (private helpers of :mod:`dmlopt.heuristics.tap`).

A TAP instance with capacity K is a Koopmans-Beckmann QAP on ``N = n * Kc`` slots
(``Kc = min(K, m)``): slot s belongs to VM ``s // Kc``, the slot distance is ``B[s, t] =
D[vm(s), vm(t)]`` (0 on the same VM) and the ``N - m`` free slots hold dummy modules without
traffic. Moving a module to a VM with free capacity is a swap with a dummy; exchanging two modules
is a swap of two real ones, so one move type covers both neighbourhoods of the issue. Since D is
symmetric the objective (8) uses only ``F = (M + M^T) / 2``, which makes every swap delta a
symmetric formula:

    delta(r, s) = 2 sum_{k != r, s} (F[s, k] - F[r, k]) (B[p(r), p(k)] - B[p(s), p(k)])

(O(N) per pair). All ``N^2`` deltas of one solution come from one matrix product (:func:`deltas`).
The descent keeps them instead: after a swap only a rank-one term changes ``F B'`` and the gains
of the m real rows are updated in O(m N) (:func:`descent`; exact, and so identical to the full
recomputation, when the data are integers, as in the generators and QAPLIB).
Swaps of two dummies or of two modules on the same VM change nothing and are masked out.

References
----------
* E. Taillard: Robust taboo search for the quadratic assignment problem, Parallel Computing 17
  (1991) 443-455 (tenure drawn in [0.9 N, 1.1 N], aspiration by objective and by age).
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Padded:
    """The padded QAP of a TAP instance: ``F`` (N x N), ``B`` (N x N), m modules, Kc slots/VM."""

    F: np.ndarray
    B: np.ndarray
    m: int
    kc: int

    @property
    def size(self) -> int:
        return int(self.F.shape[0])

    def slot_vm(self) -> np.ndarray:
        return np.arange(self.size) // self.kc


def padded(traffic: np.ndarray, distance: np.ndarray, K: int) -> Padded:
    """Build the padded QAP of (M, D, K)."""
    m, n = traffic.shape[0], distance.shape[0]
    kc = min(K, m)
    size = n * kc
    f = np.zeros((size, size))
    sym = (traffic + traffic.T) / 2.0
    np.fill_diagonal(sym, 0.0)
    f[:m, :m] = sym
    vm = np.arange(size) // kc
    b = distance[np.ix_(vm, vm)].astype(float)
    return Padded(f, b, m, kc)


def to_perm(qap: Padded, assignment: np.ndarray) -> np.ndarray:
    """Facility -> slot permutation of a module -> VM assignment (dummies fill free slots)."""
    size, kc = qap.size, qap.kc
    used = np.zeros(size // kc, dtype=np.int64)
    perm = np.empty(size, dtype=np.int64)
    taken = np.zeros(size, dtype=bool)
    for i, j in enumerate(assignment):
        s = j * kc + used[j]
        used[j] += 1
        perm[i] = s
        taken[s] = True
    perm[qap.m:] = np.flatnonzero(~taken)
    return perm


def to_assignment(qap: Padded, perm: np.ndarray) -> list[int]:
    """Module -> VM of a facility -> slot permutation."""
    return (perm[: qap.m] // qap.kc).tolist()


def total(qap: Padded, perm: np.ndarray) -> float:
    """Objective of a permutation (equals TAP objective (8))."""
    return float((qap.F * qap.B[np.ix_(perm, perm)]).sum())


def deltas(f: np.ndarray, b: np.ndarray, perm: np.ndarray) -> np.ndarray:
    """``delta[r, s]``: objective change of swapping facilities r and s (symmetric F, B)."""
    bp = b.take(perm, axis=0).take(perm, axis=1)
    g = f @ bp
    d = g.ravel()[:: g.shape[0] + 1]
    out = g + g.T
    out -= d[:, None]
    out -= d[None, :]
    out += 2.0 * f * bp
    out *= 2.0
    return out


def _useful(qap: Padded, perm: np.ndarray, upper: np.ndarray, real: np.ndarray) -> np.ndarray:
    vm = perm // qap.kc
    return upper & real & (vm[:, None] != vm[None, :])


def _masks(qap: Padded) -> tuple[np.ndarray, np.ndarray]:
    size = qap.size
    upper = np.triu(np.ones((size, size), dtype=bool), 1)
    is_real = np.arange(size) < qap.m
    return upper, is_real[:, None] | is_real[None, :]


def descent(qap: Padded, perm: np.ndarray, cost: float, deadline: float | None = None
            ) -> tuple[np.ndarray, float]:
    """Best-improvement swap descent to a local optimum (or to ``deadline``).

    Parameters
    ----------
    qap : Padded
        The padded QAP.
    perm : numpy.ndarray
        Facility -> slot permutation to start from (not modified).
    cost : float
        Its objective.
    deadline : float or None, optional
        A :func:`time.perf_counter` instant, checked before each swap: once it has passed, the
        descent stops with the permutation reached so far (each swap keeps it feasible). None
        (default): no deadline.

    Returns
    -------
    (numpy.ndarray, float)
        The local optimum (or the permutation reached at the deadline) and its objective.

    Notes
    -----
    With exact data (:func:`_exact`: every product and sum of the objective an exact float,
    as with the integer traffic and hop distances of the generators and QAPLIB) the swap
    gains are kept incrementally (:func:`_descent_incremental`: O(m N) per swap, rows of the
    m real modules only) and every gain equals the full recomputation bit for bit, so the
    descent takes the same swaps. Other data go through :func:`_descent_full` (all N^2 gains
    by one N^3 product per swap), whose rounding the incremental gains would not reproduce.
    """
    if _exact(qap):
        return _descent_incremental(qap, perm, cost, deadline)
    return _descent_full(qap, perm, cost, deadline)


def _past(deadline: float | None) -> bool:
    """True once the :func:`time.perf_counter` instant ``deadline`` has passed (None: never)."""
    return deadline is not None and time.perf_counter() >= deadline


def _descent_full(qap: Padded, perm: np.ndarray, cost: float, deadline: float | None = None
                  ) -> tuple[np.ndarray, float]:
    """Best-improvement descent recomputing every swap gain after each swap (:func:`deltas`)."""
    upper, real = _masks(qap)
    perm = perm.copy()
    while True:
        if _past(deadline):
            return perm, cost
        d = deltas(qap.F, qap.B, perm)
        d[~_useful(qap, perm, upper, real)] = np.inf
        k = int(np.argmin(d))
        r, s = divmod(k, qap.size)
        if not d[r, s] < -1e-9 * max(1.0, abs(cost)):
            return perm, cost
        perm[r], perm[s] = perm[s], perm[r]
        cost += float(d[r, s])


def exact_gains(traffic: np.ndarray, distance: np.ndarray) -> bool:
    """True if the swap gains of (traffic, distance) are exact float64 numbers.

    Parameters
    ----------
    traffic : numpy.ndarray
        Module traffic M (or 2 F, the symmetric traffic doubled).
    distance : numpy.ndarray
        VM distances D (or the slot distances B).

    Returns
    -------
    bool
        M + M^T and D are integer-valued and small enough that every partial sum of a swap
        gain stays below 2^52: then any summation order gives the same gain, bit for bit.
    """
    f2 = np.asarray(traffic, float)
    f2 = f2 + f2.T
    b = np.asarray(distance, float)
    if not (np.isfinite(f2).all() and np.isfinite(b).all()):
        return False
    if not (np.array_equal(f2, np.round(f2)) and np.array_equal(b, np.round(b))):
        return False
    big_b = float(np.abs(b).max(initial=0.0))
    bound = 8.0 * big_b * (float(np.abs(f2).sum(axis=1).max(initial=0.0))
                           + float(np.abs(f2).max(initial=0.0)))
    return bound < 2.0**52


def _exact(qap: Padded) -> bool:
    """:func:`exact_gains` of the padded QAP (2 F = M + M^T off the diagonal, B)."""
    return exact_gains(qap.F, qap.B)


def _descent_incremental(qap: Padded, perm: np.ndarray, cost: float,
                         deadline: float | None = None) -> tuple[np.ndarray, float]:
    """:func:`_descent_full` with the gains of rows 0..m-1 kept up to date in O(m N) per swap.

    ``G = F[:m] @ B[perm][:, perm]`` (m x N; the rows of the dummies are zero) changes by a
    rank-one term and a column exchange when slots r and s swap; the gain of swapping r < m and
    s is ``2 (G[r, s] + G[s, r] - G[r, r] - G[s, s] + 2 F[r, s] B'[r, s])`` with ``G[s, .]``
    and ``G[s, s]`` zero for a dummy s (as in :func:`deltas`).
    """
    size, m, kc = qap.size, qap.m, qap.kc
    perm = perm.copy()
    if m == 0 or size < 2:
        return perm, cost
    f = qap.F[:m]                       # m x N, zero beyond column m
    fm = qap.F[:m, :m]
    b = qap.B
    g = fm @ b[np.ix_(perm[:m], perm)]
    cols = np.arange(size)
    upper = cols[None, :] > np.arange(m)[:, None]
    rows = np.arange(m)
    while True:
        if _past(deadline):
            return perm, cost
        bpm = b[np.ix_(perm[:m], perm[:m])]
        dg = g[rows, rows]
        out = g.copy()
        out[:, :m] += g[:, :m].T
        out -= dg[:, None]
        out[:, :m] -= dg[None, :]
        out[:, :m] += 2.0 * fm * bpm
        out *= 2.0
        vm = perm // kc
        out[~(upper & (vm[:m, None] != vm[None, :]))] = np.inf
        k = int(np.argmin(out))
        r, s = divmod(k, size)
        gain = out[r, s]
        if not gain < -1e-9 * max(1.0, abs(cost)):
            return perm, cost
        # G += (F[:, r] - F[:, s]) (B'[s, :] - B'[r, :]), then columns r and s exchanged
        col = f[:, r] - f[:, s]
        row = b[perm[s], perm] - b[perm[r], perm]
        g += col[:, None] * row[None, :]
        g[:, [r, s]] = g[:, [s, r]]
        perm[r], perm[s] = perm[s], perm[r]
        cost += float(gain)


def _kick(qap: Padded, perm: np.ndarray, rng: np.random.Generator, swaps: int) -> np.ndarray:
    perm = perm.copy()
    real = np.arange(qap.m)
    for _ in range(swaps):
        r = int(rng.choice(real)) if qap.m else 0
        s = int(rng.integers(qap.size))
        perm[r], perm[s] = perm[s], perm[r]
    return perm


def iterated_descent(qap: Padded, perm: np.ndarray, rng: np.random.Generator, restarts: int,
                     time_limit: float | None = None, keep: list | None = None) -> np.ndarray:
    """Descent, then ``restarts`` times: perturb the best solution, descend, keep if better.
    ``time_limit`` (seconds) is checked between restarts and before each swap of every descent
    (the first included), so the search stops with the best permutation so far. ``keep``, a
    list, holds the best permutation so far (``perm`` before the first descent ends), so a
    caller that catches Ctrl-C still has it."""
    keep = [] if keep is None else keep
    keep[:] = [np.asarray(perm).copy()]
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    best, best_cost = descent(qap, perm, total(qap, perm), deadline)
    keep[:] = [best]
    kick = max(2, qap.m // 4)
    for _ in range(restarts):
        if _past(deadline):
            break
        start = _kick(qap, best, rng, kick)
        cand, cost = descent(qap, start, total(qap, start), deadline)
        if cost < best_cost - 1e-9 * max(1.0, abs(best_cost)):
            best, best_cost = cand, cost
            keep[:] = [best]
    return best


def _batch_totals(qap: Padded, perms: np.ndarray) -> np.ndarray:
    bp = qap.B[perms[:, :, None], perms[:, None, :]]
    return (qap.F[None] * bp).sum(axis=(1, 2))


@functools.cache
def _tap_kernel():
    """The compiled kernel (:mod:`dmlopt.heuristics.tap.kernel`), imported on first use, not
    with this module: numba and the cached kernels take about a second to load, which commands
    that run no TAP search (``dmlopt list``, ``validate``, ``solve``) should not pay. None when
    numba is missing (the numpy search runs)."""
    try:
        from dmlopt.heuristics.tap import kernel
    except ImportError:  # pragma: no cover - numba is a dependency
        return None
    return kernel


def has_numba() -> bool:
    """True if the compiled kernel (:mod:`dmlopt.heuristics.tap.kernel`) can be used."""
    return _tap_kernel() is not None


def robust_tabu(qap: Padded, perm: np.ndarray, rng: np.random.Generator, iterations: int,
                engine: str = "auto", deadline: float | None = None
                ) -> tuple[np.ndarray, float]:
    """Taillard's robust tabu search from ``perm``: (best permutation, its objective).

    ``engine``: "numba" (the compiled kernel), "numpy" (:func:`robust_tabu_numpy`), or "auto"
    (numba when installed). ``deadline``, a :func:`time.perf_counter` instant: the compiled
    kernel then runs in chunks of :func:`tabu_chunk` iterations with the clock checked between
    them (the chunks draw the same random numbers as one run, so a deadline that does not bind
    changes nothing); the numpy engine checks it between iterations.
    """
    perm = np.asarray(perm, dtype=np.int64)
    if engine == "numpy" or (engine == "auto" and not has_numba()):
        limit = None if deadline is None else max(deadline - time.perf_counter(), 0.0)
        best = robust_tabu_numpy(qap, perm[None], rng, iterations, limit)
        return best, total(qap, best)
    kernel = _tap_kernel()
    if kernel is None:
        from dmlopt.errors import InstanceError

        raise InstanceError("engine", engine, "needs numba, which is not installed")
    seed = int(rng.integers(2**31 - 1))
    aspiration = 5 * qap.size * qap.size
    if deadline is None:
        best, cost = kernel.rots(qap.F, qap.B, perm.copy(), qap.m, qap.kc, iterations, seed,
                                 aspiration)
        return best, float(cost)
    f, b = qap.F, qap.B
    p, bp, delta, best, tabu, sf, si = kernel.rots_start(f, b, perm.copy(), qap.m, qap.kc, seed)
    chunk = tabu_chunk(qap.size)
    first = 1
    while first <= iterations and si[3] == 0 and not _past(deadline):
        last = min(iterations, first + chunk - 1)
        kernel.rots_run(f, b, qap.m, qap.kc, p, bp, delta, best, tabu, sf, si, first, last,
                        aspiration)
        first = last + 1
    return best, float(sf[1])


def tabu_chunk(size: int) -> int:
    """Iterations of the compiled tabu kernel between two looks at the clock: about 2e7
    elementary steps (tens of milliseconds), each iteration costing about N^2.

    Parameters
    ----------
    size : int
        N, the padded QAP's slots.

    Returns
    -------
    int
        ``2e7 / N^2`` iterations, between 1 and 65,536.

    References
    ----------
    Ours (the chunking of :func:`robust_tabu`).
    """
    return int(min(1 << 16, max(1, 20_000_000 // max(1, size * size))))


def iterated_tabu(qap: Padded, perm: np.ndarray, rng: np.random.Generator, rounds: int,
                  iterations: int, kick: float = 0.3, time_limit: float | None = None,
                  engine: str = "auto", keep: list | None = None) -> np.ndarray:
    """Iterated tabu search: round 0 from ``perm``, each later round from the best solution
    after ``kick * N`` random swaps of a module (Misevicius' iterated tabu search with Taillard's
    robust tabu search inside); ``time_limit`` is checked between rounds and, inside each
    round, between chunks of the kernel's iterations (:func:`robust_tabu`). ``keep``, a list,
    holds the best permutation so far as its only item at all times (``perm`` before the first
    round ends), so a caller that catches Ctrl-C still has it."""
    if engine != "numpy":
        has_numba()  # load the compiled kernel before the clock starts
    keep = [] if keep is None else keep
    keep[:] = [np.asarray(perm, dtype=np.int64).copy()]
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    best, best_cost = robust_tabu(qap, perm, rng, iterations, engine, deadline)
    keep[:] = [best]
    swaps = max(2, int(kick * qap.size))
    for _ in range(1, rounds):
        if best_cost <= 0 or _past(deadline):
            break
        cand, cost = robust_tabu(qap, _kick(qap, best, rng, swaps), rng, iterations, engine,
                                 deadline)
        if cost < best_cost - 1e-9 * max(1.0, abs(best_cost)):
            best, best_cost = cand, cost
            keep[:] = [best]
    return best


def robust_tabu_numpy(qap: Padded, perms: np.ndarray, rng: np.random.Generator,
                      iterations: int, time_limit: float | None = None) -> np.ndarray:
    """Robust tabu search in numpy, one independent chain per row of ``perms``.

    The chains run in lock step as one batch of numpy operations (numpy's per-call overhead,
    not arithmetic, dominates at these sizes, so R chains cost little more than one). A swap
    (r, s) is tabu when both r and s would return to slots they left within the last ``tenure``
    iterations (tenure redrawn in [0.9 N, 1.1 N] every 2N iterations, per chain); a tabu move is
    allowed if it beats the chain's best (aspiration); a move that puts both facilities in slots
    they have not held for ``5 N^2`` iterations is forced (long-term aspiration).

    Returns
    -------
    The best permutation found by any chain.
    """
    t0 = time.perf_counter()
    perms = np.array(perms, dtype=np.int64, copy=True).reshape(-1, qap.size)
    chains, size = perms.shape
    upper, real = _masks(qap)
    cost = _batch_totals(qap, perms)
    best, best_cost = perms.copy(), cost.copy()
    if size < 2 or best_cost.min() <= 0:
        return best[int(np.argmin(best_cost))]
    lo, hi = max(1, int(0.9 * size)), max(2, int(1.1 * size) + 1)
    tenure = rng.integers(lo, hi, chains)
    tabu_until = np.zeros((chains, size, size), dtype=np.int64)  # [chain, facility, slot]
    last_held = np.full((chains, size, size), -1, dtype=np.int64)
    ar = np.arange(chains)
    last_held[ar[:, None], np.arange(size)[None, :], perms] = 0
    aspiration = 5 * size * size
    fixed_useful = (upper & real)[None] if qap.kc == 1 else None
    eye = np.arange(size)
    for it in range(1, iterations + 1):
        bp = qap.B[perms[:, :, None], perms[:, None, :]]
        g = qap.F[None] @ bp
        dg = g[:, eye, eye]
        d = g + g.transpose(0, 2, 1)
        d -= dg[:, :, None]
        d -= dg[:, None, :]
        d += 2.0 * qap.F[None] * bp
        d *= 2.0
        if fixed_useful is None:
            vm = perms // qap.kc
            useful = (upper & real)[None] & (vm[:, :, None] != vm[:, None, :])
        else:
            useful = fixed_useful
        idx = np.broadcast_to(perms[:, None, :], (chains, size, size))
        until = np.take_along_axis(tabu_until, idx, axis=2)  # until[c, r, s] = tu[c, r, p[s]]
        tabu = (until >= it) & (until.transpose(0, 2, 1) >= it)
        eps = 1e-9 * np.maximum(1.0, np.abs(best_cost))
        aspire = (cost - best_cost + eps)[:, None, None] + d < 0
        score = np.where(useful & (~tabu | aspire), d, np.inf)
        if it % size == 0:  # long-term aspiration, checked every N iterations
            held = np.take_along_axis(last_held, idx, axis=2)
            old = useful & (it - held > aspiration) & (it - held.transpose(0, 2, 1) > aspiration)
            forced = old.any(axis=(1, 2))
            if forced.any():
                score[forced] = np.where(old[forced], d[forced], np.inf)
        flat = score.reshape(chains, -1)
        k = np.argmin(flat, axis=1)
        stuck = ~np.isfinite(flat[ar, k])
        if stuck.any():  # every useful move tabu: take the best useful one
            alt = np.where(useful, d, np.inf).reshape(chains, -1) if fixed_useful is None \
                else np.where(np.broadcast_to(useful, d.shape), d, np.inf).reshape(chains, -1)
            k[stuck] = np.argmin(alt[stuck], axis=1)
        r, s = np.divmod(k, size)
        pr, ps = perms[ar, r], perms[ar, s]
        tabu_until[ar, r, pr] = it + tenure
        tabu_until[ar, s, ps] = it + tenure
        perms[ar, r], perms[ar, s] = ps, pr
        last_held[ar, r, ps] = it
        last_held[ar, s, pr] = it
        cost = cost + d[ar, r, s]
        better = cost < best_cost - eps
        if better.any():
            cost[better] = _batch_totals(qap, perms[better])  # no drift in incumbents
            best[better] = perms[better]
            best_cost[better] = cost[better]
            if best_cost.min() <= 0:
                break
        if it % (2 * size) == 0:
            tenure = rng.integers(lo, hi, chains)
        if it % 128 == 0:
            cost = _batch_totals(qap, perms)
            if time_limit is not None and time.perf_counter() - t0 > time_limit:
                break
    return best[int(np.argmin(best_cost))]
