"""INC/OXC heuristics (paper 002): OXC circuits (BvN, repair, rebalance), optimal circuits
and bandwidth."""

from __future__ import annotations

import math

import numpy as np

from dmlopt.heuristics.inc_oxc.bvn import bvn_decompose, circuits_from_terms, stuff
from dmlopt.models.inc_oxc import (
    Instance,
    best_f,
    flow_coefficients,
    link_loads,
)


def _repair(c: np.ndarray, need: np.ndarray, ports: int, literal: bool = False) -> np.ndarray:
    """Release idle circuits, cover every pair with traffic, hand out leftover ports."""
    c = c.copy()
    c[need <= 0] = 0
    n = c.shape[0]
    iu = np.triu_indices(n, 1)
    pairs = [(int(s), int(t)) for s, t in zip(*iu, strict=True) if need[s, t] > 0]
    pairs.sort(key=lambda p: -need[p])
    for s, t in pairs:
        if c[s, t]:
            continue
        for end in (s, t):
            if c[end].sum() >= ports:
                many = np.flatnonzero(c[end] >= 2)
                if many.size:
                    u = int(many[np.argmin(need[end, many] / c[end, many])])
                    c[end, u] -= 1
                    c[u, end] -= 1
        if c[s].sum() < ports and c[t].sum() < ports:
            c[s, t] += 1
            c[t, s] += 1
    free = ports - c.sum(axis=1)
    while True:
        ok = (free[:, None] > 0) & (free[None, :] > 0) & (need > 0)
        if not ok.any():
            break
        score = np.where(ok, need / (c + 1.0) if literal else need / np.maximum(c, 0.5), -1.0)
        s, t = np.unravel_index(int(np.argmax(score)), score.shape)
        c[s, t] += 1
        c[t, s] += 1
        free[s] -= 1
        free[t] -= 1
    return c if literal else _rebalance(c, need, ports)


def _rebalance(c: np.ndarray, need: np.ndarray, ports: int) -> np.ndarray:
    """Move ports to the bottleneck pair (smallest c / need): a rack of the pair without a free
    port gives one up from another pair that keeps a larger ratio with one circuit less; stops
    when the bottleneck cannot be raised."""
    c = c.copy()
    pos = need > 0
    if not pos.any():
        return c
    for _ in range(4 * c.shape[0] * ports):
        ratio = np.where(pos, c / np.where(pos, need, 1), np.inf)
        s, t = np.unravel_index(int(np.argmin(ratio)), ratio.shape)
        low = ratio[s, t]
        take = []
        for end, other in ((s, t), (t, s)):
            if c[end].sum() < ports:
                continue
            r1 = np.where(pos[end] & (c[end] >= 1),
                          (c[end] - 1) / np.where(pos[end], need[end], 1), -np.inf)
            r1[~pos[end] & (c[end] >= 1)] = np.inf     # idle circuits go first
            r1[other] = -np.inf
            u = int(np.argmax(r1))
            if not r1[u] > low * (1 + 1e-12):
                take = None
                break
            take.append((end, u))
        if take is None:
            break
        for end, u in take:
            c[end, u] -= 1
            c[u, end] -= 1
        c[s, t] += 1
        c[t, s] += 1
    return c


def _circuits_bvn(instance: Instance, wrack, ps_rack, server, rounding: str = "pairs"
                  ) -> np.ndarray:
    R, P = instance.n_racks, instance.n_tor
    d = instance.arrays["data"][instance.arrays["job_of"]]
    _, _, D = link_loads(instance, wrack, ps_rack, server, d)              # line 25
    if R < 2 or D.sum() == 0:
        return np.zeros((R, R), np.int64)
    Dp, sigma = stuff(D)                                                   # line 26
    terms = bvn_decompose(Dp, max_terms=max(4, 2 * (P // 2) + 2))         # line 27
    a = flow_coefficients(instance, server)
    _, _, A = link_loads(instance, wrack, ps_rack, server, a)
    if rounding == "terms":                                                # line 28, literal
        c = circuits_from_terms(terms, sigma, P, R)
        return _repair(c, np.maximum(A, A.T), P, literal=True)
    # line 28 per pair: sum_k theta_k / sigma * floor(P / 2) (P_k + P_k^T) rounded down
    frac = np.zeros((R, R))
    for theta, perm in terms:
        frac[np.arange(R), perm] += theta
    frac = (P // 2) * (frac + frac.T) / sigma
    np.fill_diagonal(frac, 0.0)
    c = np.floor(frac + 1e-9).astype(np.int64)
    return _repair(c, np.maximum(A, A.T), P)


def optimal_circuits(instance: Instance, wrack, ps_rack, server) -> np.ndarray:
    """Circuit counts maximising f for a placement (exact: bisection over candidate f)."""
    return _optimal(instance, wrack, ps_rack, server)[1]


def placement_f(instance: Instance, wrack, ps_rack, server) -> float:
    """The best f of a placement over every circuit configuration and bandwidth allocation."""
    return _optimal(instance, wrack, ps_rack, server, circuits=False)[0]


def _optimal(instance: Instance, wrack, ps_rack, server, circuits: bool = True
             ) -> tuple[float, np.ndarray | None]:
    """(best f, its repaired circuit counts); ``circuits=False`` skips the repair (which does
    not change f) and returns None for the counts."""
    R, P, B = instance.n_racks, instance.n_tor, instance.port_bw
    a = flow_coefficients(instance, server)
    wside, pside, A = link_loads(instance, wrack, ps_rack, server, a)
    need = np.maximum(A, A.T)
    cap = instance.capacity
    f_link = min([cap / x for x in np.concatenate([wside, pside]) if x > 0], default=math.inf)
    iu = np.triu_indices(R, 1)
    nd = need[iu]
    pos = nd > 0
    if not pos.any():
        return f_link, np.zeros((R, R), np.int64)
    cand = np.unique(np.concatenate([(B * np.arange(1, P + 1)[:, None] / nd[pos]).ravel(),
                                     [f_link] if math.isfinite(f_link) else []]))
    cand = cand[cand <= f_link * (1 + 1e-12)]

    def counts(f: float) -> np.ndarray:
        c = np.zeros((R, R))
        c[iu] = np.ceil(f * nd / B - 1e-9)
        return c + c.T

    def ok(f: float) -> bool:
        v = np.ceil(f * nd / B - 1e-9)       # per-rack port sums of counts(f), without (R, R)
        return bool((np.bincount(iu[0], v, R) + np.bincount(iu[1], v, R) <= P).all())

    lo, hi, best = 0, cand.size - 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        if ok(cand[mid]):
            best, lo = cand[mid], mid + 1
        else:
            hi = mid - 1
    if not circuits:
        return (0.0 if best is None else float(best)), None
    if best is None:
        return 0.0, _repair(np.zeros((R, R), np.int64), need, P)
    return float(best), _repair(counts(best).astype(np.int64), need, P)


def _bandwidth(instance: Instance, wrack, ps_rack, server, c, mode: str) -> np.ndarray:
    A = instance.arrays
    if mode == "optimal":
        f = best_f(instance, wrack, ps_rack, server, c)
        return flow_coefficients(instance, server) * (0.0 if math.isinf(f) else f)
    d = A["data"][A["job_of"]]                                             # line 29
    wside, pside, mat = link_loads(instance, wrack, ps_rack, server, d)
    cap = instance.capacity
    prack = ps_rack[A["job_of"]]
    srv = server[A["job_of"]] == 1
    b = cap * d / wside[wrack]
    b = np.where(srv, np.minimum(b, cap * d / np.where(srv, pside[prack], 1)), b)
    inter = wrack != prack
    load = mat[wrack, prack]
    share = instance.port_bw * c[wrack, prack] * d / np.where(inter, load, 1)
    return np.where(inter, np.minimum(b, share), b)
