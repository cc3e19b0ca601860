"""Heuristics for INC/OXC job scheduling (paper 002): WCG (Algorithm 1), SWG and RWP (IV-A).

All share Algorithm 1's PS placement (lines 7-24), OXC configuration (lines 25-28, BvN, see
:mod:`dmlopt.heuristics.inc_oxc.bvn`) and bandwidth allocation (line 29); they differ in the
worker placement (lines 1-6):

* ``wcg``: Algorithm 1 with our definition of the rack choice of line 5, which balances the pool
  links and OXC ports of the racks for a target f (:mod:`dmlopt.heuristics.inc_oxc.place`, where
  every rule and deviation is listed); the PS step takes the rack the rack choice reserved for the
  PS (the "anchor") first, then line 9's order.
* ``wcg-literal``: the strictly literal Algorithm 1 of the previous version: the workers of a job
  form one cluster; clusters sorted by |W_i| d_i (descending) are cut into groups of |R_s| and
  each group is spread over distinct racks: a cluster goes to the rack, not yet used by its group,
  that can hold the whole cluster and has the smallest data transfer size placed so far (ties: the
  largest smallest free-resource fraction). A cluster that fits no rack is split: as many workers
  as fit go to the rack that can hold the most of them (same tie-breaks), and so on. Its circuits
  use the literal rounding ("terms", below).
* ``swg`` (single worker grouping): the literal rule with single workers instead of clusters
  (workers sorted by data size, groups of |R_s| workers, one per rack).
* ``rwp`` (random worker placement): every worker goes to a uniformly random rack with room (a
  draw that strands a worker is redrawn).

PS placement (lines 7-24): jobs by data size (descending); the racks holding the job's workers
by worker count (descending): first a free PDP switch slot among them, then a server with room
among them. Deviation: if neither exists the paper says nothing; we take any free PDP slot, then
any server with room (the rack with the most free resources).

Bandwidth (line 29): each link (worker-side pool link, PS-side pool link, circuit direction)
shares its capacity among its flows in proportion to their data size; a flow gets the smallest
share along its path. (We keep the paper's data-size weights: on the benchmark instances the
longest JCT equals the one of the best bandwidth for the same circuits, ``bandwidth="optimal"``,
once the placement is balanced.)

OXC (lines 25-28): D[s, t] = data of the workers in s whose PS is in t; stuffed to a perfect
matrix D' (sigma its line sum) and decomposed, D' = sum_k theta_k P_k. A permutation copy uses 2
ports per ToR, so floor(N_ToR / 2) copies fit. Rounding (free in the paper, which only says "in
proportion to the coefficients"):

* ``"pairs"`` (wcg, swg, rwp): the proportional allocation per rack pair,
  floor(N_ToR / 2) sum_k theta_k / sigma (P_k + P_k^T)_st = floor(N_ToR / 2) (D' + D'^T)_st /
  sigma, rounded down; then the repair below, then *rebalancing*: while a port can be moved to
  the bottleneck pair (smallest circuits / demand) from pairs at its two racks that keep a larger
  ratio with one circuit less, it is moved.
* ``"terms"`` (wcg-literal): whole permutation copies go to the terms in proportion to theta_k
  (largest remainder), then the repair.

Repair (needed because the selected circuits need not cover every pair that has traffic and so
would leave flows at zero bandwidth): circuits on pairs without traffic are released, every pair
with traffic and no circuit gets one (largest demand first; a port is taken from the
least-loaded multi-circuit pair at a full rack if needed), and leftover ports go one by one to the
pair with the largest demand per circuit (demand / c; "terms": demand / (c + 1)).

Time-shared OXC (ours, section III's BvN read as a schedule): if a rack pair with traffic is left
without a circuit anyway (at 64 racks SWG and RWP spread a job over more racks than a ToR has 12
OXC ports, so no static single-hop configuration can serve them and the longest JCT would be
infinite, while the paper's Fig. 5 reports finite values), the heuristic returns a time-shared
configuration instead (``Solution.oxc_schedule``): the OXC cycles through the configurations
"floor(N_ToR / 2) copies of P_k" for the time share theta_k / sigma of the full decomposition
(reconfiguration time neglected), so pair (s, t) gets on average floor(N_ToR / 2) (D' + D'^T)_st
/ sigma circuits, positive wherever there is traffic; the bandwidth rule uses these averages.
This favours the baselines (a static configuration is a special case); WCG keeps static circuits
on every benchmark instance.

Options (every heuristic): ``circuits="bvn"`` (the paper) or ``"optimal"`` (the best circuit
counts for the placement: bisection on f over the candidate values B c / load), and
``bandwidth="proportional"`` (the paper) or ``"optimal"`` (the closed form b_ij = a_ij f*).
``wcg-opt`` is ``wcg-literal``'s placement with both set to ``"optimal"`` (ours: it isolates what
the literal placement costs). ``wcg-ls`` (ours) starts from ``wcg``'s placement and
runs an iterated local search for ``time_limit`` seconds over placements, each scored exactly by
the best f over all circuit configurations (:func:`placement_f`): moves relocate a worker, swap
two workers of different jobs, relocate a PS (switch slot or server), swap two PS locations, and
"gather" (a PS to rack k plus as many of its workers as fit there); kicks move 3 random workers.
The result carries the optimal circuits and bandwidth of the best placement found.
"""

from __future__ import annotations

import math
import time
from typing import Literal

import numpy as np
import pydantic

from dmlopt.contract import Heuristic, NoOptions, Options, Size
from dmlopt.heuristics.inc_oxc.bvn import bvn_decompose, circuits_from_terms, stuff
from dmlopt.heuristics.inc_oxc.place import workers_balanced, workers_target
from dmlopt.models.inc_oxc import (
    Instance,
    Solution,
    best_f,
    flow_coefficients,
    link_loads,
    ports_from_circuits,
)

_EPS = 1e-9
#: neighbourhoods above this size are scanned bottleneck jobs first (wcg-ls)
_BIG_NEIGHBOURHOOD = 20_000
#: wcg: up to this many racks the target-f placement, above it the one-pass balancing rule
_TARGET_RACKS = 16


class _State:
    """Free resources, placed data size and free PDP slots per rack."""

    def __init__(self, instance: Instance):
        A = instance.arrays
        self.cap = A["cap"]
        self.free = A["cap"].copy()
        self.dload = np.zeros(instance.n_racks)
        self.slots = A["slots"].copy()

    def how_many(self, need: np.ndarray) -> np.ndarray:
        """Per rack, how many copies of ``need`` fit."""
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.where(need > 0, (self.free + _EPS) / np.where(need > 0, need, 1), np.inf)
        return np.floor(q.min(axis=1)).clip(0, 10**9)

    def balance_key(self, racks: np.ndarray) -> np.ndarray:
        """Sort key of the resource-balancing rule: (placed data, -smallest free fraction)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            frac = np.where(self.cap > 0, self.free / np.where(self.cap > 0, self.cap, 1), 1)
        return np.lexsort((-frac[racks].min(axis=1), self.dload[racks]))

    def put(self, k: int, need: np.ndarray, count: int, data: float) -> None:
        self.free[k] -= need * count
        self.dload[k] += data * count


def _place_cluster(st: _State, members: list[int], need: np.ndarray, data: float,
                   wrack: np.ndarray, avoid: set[int]) -> int | None:
    """Place identical workers ``members`` by the balancing rule; the rack of the first piece."""
    left = list(members)
    first = None
    while left:
        fit = st.how_many(need)
        whole = np.flatnonzero(fit >= len(left))
        pref = np.array([k for k in whole if k not in avoid], np.int64)
        cands = pref if pref.size else whole
        if cands.size:
            k = int(cands[st.balance_key(cands)[0]])
            n = len(left)
        else:
            some = np.flatnonzero(fit >= 1)
            if not some.size:  # nothing fits anywhere: leave it to the evaluator to flag
                some = np.arange(len(fit))
                fit = np.ones(len(fit))
            most = some[fit[some] == fit[some].max()]
            k = int(most[st.balance_key(most)[0]])
            n = int(min(len(left), fit[k]))
        for j in left[:n]:
            wrack[j] = k
        st.put(k, need, n, data)
        left = left[n:]
        first = k if first is None else first
    return first


def _classes(instance: Instance, i: int, offset: int) -> list[tuple[list[int], np.ndarray]]:
    return [([offset + j for j in cls], instance.arrays["wdem"][offset + cls[0]])
            for cls in instance.worker_classes(i)]


def _workers_wcg(instance: Instance, st: _State, rng: np.random.Generator) -> np.ndarray:
    A = instance.arrays
    offs = np.concatenate([[0], np.cumsum(A["size"])])
    wrack = np.zeros(int(offs[-1]), np.int64)
    order = np.argsort(-(A["size"] * A["data"]), kind="stable")          # line 2
    R = instance.n_racks
    for g in range(0, len(order), R):                                      # line 3
        used: set[int] = set()
        for i in order[g:g + R]:                                           # lines 4-5
            for members, need in _classes(instance, int(i), int(offs[i])):
                k = _place_cluster(st, members, need, A["data"][i], wrack, used)
                if k is not None:
                    used.add(k)
    return wrack


def _workers_balanced(instance: Instance, st: _State, rng: np.random.Generator) -> np.ndarray:
    """The load-balancing rule; if it strands a worker, the literal rule from scratch."""
    wrack = None
    if instance.n_racks <= _TARGET_RACKS:
        wrack = workers_target(instance, st, rng)
    if wrack is None:
        st.__init__(instance)
        wrack = workers_balanced(instance, st, rng)
    if wrack is None:
        st.__init__(instance)
        wrack = _workers_wcg(instance, st, rng)
    return wrack


def _workers_swg(instance: Instance, st: _State, rng: np.random.Generator) -> np.ndarray:
    A = instance.arrays
    d = A["data"][A["job_of"]]
    wrack = np.zeros(d.size, np.int64)
    order = np.argsort(-d, kind="stable")
    R = instance.n_racks
    for g in range(0, len(order), R):
        used: set[int] = set()
        for n in order[g:g + R]:
            k = _place_cluster(st, [int(n)], A["wdem"][n], d[n], wrack, used)
            used.add(k)
    return wrack


def _workers_rwp(instance: Instance, st: _State, rng: np.random.Generator,
                 attempts: int = 100) -> np.ndarray:
    """Every worker to a uniformly random rack with room; a draw that strands a worker (no rack
    with room left) is redrawn, up to ``attempts`` times (then the last draw is returned)."""
    A = instance.arrays
    start = (st.free.copy(), st.dload.copy())
    for _ in range(attempts):
        st.free[:], st.dload[:] = start[0], start[1]
        wrack = np.zeros(A["job_of"].size, np.int64)
        stranded = False
        for n in range(wrack.size):
            ok = np.flatnonzero(st.how_many(A["wdem"][n]) >= 1)
            stranded |= not ok.size
            k = int(rng.choice(ok)) if ok.size else int(rng.integers(instance.n_racks))
            wrack[n] = k
            st.put(k, A["wdem"][n], 1, A["data"][A["job_of"][n]])
        if not stranded:
            break
    return wrack


def _place_ps(instance: Instance, st: _State, wrack: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1, lines 7-24 (plus the fallback of the module docstring)."""
    A = instance.arrays
    J = len(instance.jobs)
    ps_rack = np.zeros(J, np.int64)
    server = np.zeros(J)
    job_of = A["job_of"]
    for i in np.argsort(-(A["size"] * A["data"]), kind="stable"):           # line 7
        counts = np.bincount(wrack[job_of == i], minlength=instance.n_racks)
        racks = np.flatnonzero(counts)
        racks = racks[np.argsort(-counts[racks], kind="stable")]           # line 9
        t = int(getattr(st, "anchor", np.full(J, -1))[i])
        if t >= 0:  # wcg: the anchor promised by the rack choice comes first
            racks = np.concatenate([[t], racks[racks != t]])
        need = A["psdem"][i]
        sw = [k for k in racks if st.slots[k] > 0]                          # lines 10-15
        if sw:
            ps_rack[i] = sw[0]
            st.slots[sw[0]] -= 1
            continue
        srv = [k for k in racks if st.how_many(need)[k] >= 1]               # lines 16-23
        if not srv:
            anysw = np.flatnonzero(st.slots > 0)
            if anysw.size:
                k = int(anysw[np.argmax(st.slots[anysw])])
                ps_rack[i] = k
                st.slots[k] -= 1
                continue
            ok = np.flatnonzero(st.how_many(need) >= 1)
            srv = [int(ok[st.balance_key(ok)[0]])] if ok.size else [int(racks[0])]
        ps_rack[i], server[i] = srv[0], 1.0
        st.put(srv[0], need, 1, 0.0)
    return ps_rack, server


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
    return _optimal(instance, wrack, ps_rack, server)[0]


def _optimal(instance: Instance, wrack, ps_rack, server) -> tuple[float, np.ndarray]:
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
        return bool((counts(f).sum(axis=1) <= P).all())

    lo, hi, best = 0, cand.size - 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        if ok(cand[mid]):
            best, lo = cand[mid], mid + 1
        else:
            hi = mid - 1
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


def _schedule(instance: Instance, placer, seed: int, circuits: str, bandwidth: str,
              search: tuple[float, int] | None = None, rounding: str = "pairs") -> Solution:
    if circuits not in ("bvn", "optimal"):
        from dmlopt.errors import InstanceError

        raise InstanceError("circuits", circuits, "must be 'bvn' or 'optimal'")
    if bandwidth not in ("proportional", "optimal"):
        from dmlopt.errors import InstanceError

        raise InstanceError("bandwidth", bandwidth, "must be 'proportional' or 'optimal'")
    rng = np.random.default_rng(seed)
    st = _State(instance)
    wrack = placer(instance, st, rng)
    ps_rack, server = _place_ps(instance, st, wrack)
    if search is not None:
        _iterated_search(instance, wrack, ps_rack, server, rng, *search)
    if circuits == "bvn":
        c = _circuits_bvn(instance, wrack, ps_rack, server, rounding)
    else:
        c = optimal_circuits(instance, wrack, ps_rack, server)
    schedule = []
    if not _covered(instance, wrack, ps_rack, server, c):
        schedule = _time_shared(instance, wrack, ps_rack, server)
        c = sum(share * cs for share, cs, _ in schedule)
    b = _bandwidth(instance, wrack, ps_rack, server, c, bandwidth)
    offs = np.concatenate([[0], np.cumsum(instance.arrays["size"])])
    return Solution(
        workers=[wrack[offs[i]:offs[i + 1]].tolist() for i in range(len(instance.jobs))],
        ps=[(int(k), "server" if s else "switch") for k, s in zip(ps_rack, server, strict=True)],
        oxc=[] if schedule else ports_from_circuits(instance, c),
        bandwidth=[b[offs[i]:offs[i + 1]].tolist() for i in range(len(instance.jobs))],
        oxc_schedule=[(share, pairs) for share, _, pairs in schedule],
    )


def _covered(instance: Instance, wrack, ps_rack, server, c) -> bool:
    """Every rack pair with inter-rack traffic has a circuit."""
    _, _, D = link_loads(instance, wrack, ps_rack, server, np.ones(wrack.size))
    return bool((c[(D + D.T) > 0] > 0).all())


def _time_shared(instance: Instance, wrack, ps_rack, server) -> list:
    """The time-shared BvN schedule (module docstring): configuration k = floor(N_ToR / 2)
    copies of permutation P_k for a time share theta_k / sigma; [(share, c^k, port pairs)]."""
    R, P = instance.n_racks, instance.n_tor
    d = instance.arrays["data"][instance.arrays["job_of"]]
    _, _, D = link_loads(instance, wrack, ps_rack, server, d)              # line 25
    Dp, sigma = stuff(D)                                                   # line 26
    out = []
    for theta, perm in bvn_decompose(Dp):                                  # line 27
        ck = np.zeros((R, R), np.int64)
        for s_ in range(R):
            t_ = int(perm[s_])
            if t_ != s_:
                ck[s_, t_] += P // 2
                ck[t_, s_] += P // 2
        out.append((float(theta / sigma), ck, ports_from_circuits(instance, ck)))
    return out


def _local_search(instance: Instance, wrack: np.ndarray, ps_rack: np.ndarray,
                  server: np.ndarray, rng: np.random.Generator, time_limit: float,
                  max_rounds: int) -> tuple[float, float]:
    """First-improvement search on (f, -sum of squared pool-link utilisations), in place.

    Moves: one worker to another rack, one PS to another switch slot or server, two workers
    of different jobs swap racks. f of a placement is exact (:func:`placement_f`).
    """
    A = instance.arrays
    R, cap = instance.n_racks, instance.capacity
    job_of = A["job_of"]
    free = A["cap"].copy()
    np.subtract.at(free, wrack, A["wdem"])
    np.subtract.at(free, ps_rack[server == 1], A["psdem"][server == 1])
    slots = A["slots"] - np.bincount(ps_rack[server == 0], minlength=R)

    def score() -> tuple[float, float]:
        f = placement_f(instance, wrack, ps_rack, server)
        a = flow_coefficients(instance, server)
        ws, ps_, _ = link_loads(instance, wrack, ps_rack, server, a)
        return f, -float(((ws / cap) ** 2).sum() + ((ps_ / cap) ** 2).sum())

    best = score()
    t_end = time.perf_counter() + time_limit
    W, J = wrack.size, len(instance.jobs)
    for _ in range(max_rounds):
        improved = False
        moves = [("w", n, k) for n in range(W) for k in range(R)]
        moves += [("p", i, k, sv) for i in range(J) for k in range(R) for sv in (0.0, 1.0)]
        moves += [("x", n, q) for n in range(W) for q in range(n + 1, W)
                  if job_of[n] != job_of[q]]
        moves += [("s", i, i2) for i in range(J) for i2 in range(i + 1, J)]
        moves += [("g", i, k) for i in range(J) for k in range(R)]
        order = rng.permutation(len(moves))
        if len(moves) > _BIG_NEIGHBOURHOOD:  # large instances: bottleneck jobs' moves first
            crit = _critical_jobs(instance, wrack, ps_rack, server)
            hot = np.array([crit[job_of[m[1]]] if m[0] in "wx" else crit[m[1]] for m in moves],
                           bool)
            for m_i, m in enumerate(moves):
                if m[0] in "xs" and not hot[m_i]:
                    hot[m_i] = crit[job_of[m[2]]] if m[0] == "x" else crit[m[2]]
            order = order[np.argsort(~hot[order], kind="stable")]
        for mi in order:
            if time.perf_counter() > t_end:
                return best
            mv = moves[mi]
            if mv[0] == "w":
                _, n, k = mv
                old = wrack[n]
                if k == old or (free[k] < A["wdem"][n] - _EPS).any():
                    continue
                wrack[n] = k
                new = score()
                if new > best:
                    free[old] += A["wdem"][n]
                    free[k] -= A["wdem"][n]
                    best, improved = new, True
                else:
                    wrack[n] = old
            elif mv[0] == "p":
                _, i, k, sv = mv
                ok_, os_ = ps_rack[i], server[i]
                if (k, sv) == (ok_, os_):
                    continue
                need = A["psdem"][i]
                if sv == 0.0 and slots[k] - (1 if (ok_ == k and os_ == 0) else 0) < 1:
                    continue
                back = need if (os_ == 1 and ok_ == k) else 0
                if sv == 1.0 and (free[k] + back < need - _EPS).any():
                    continue
                ps_rack[i], server[i] = k, sv
                new = score()
                if new > best:
                    if os_ == 1:
                        free[ok_] += need
                    else:
                        slots[ok_] += 1
                    if sv == 1:
                        free[k] -= need
                    else:
                        slots[k] -= 1
                    best, improved = new, True
                else:
                    ps_rack[i], server[i] = ok_, os_
            elif mv[0] == "g":
                # gather: the PS of job i to rack k (switch if a slot is free, else server),
                # then as many of its workers as fit into k
                _, i, k = mv
                snap = (wrack.copy(), ps_rack.copy(), server.copy(), free.copy(), slots.copy())
                if server[i] == 1:
                    free[ps_rack[i]] += A["psdem"][i]
                else:
                    slots[ps_rack[i]] += 1
                if slots[k] > 0:
                    ps_rack[i], server[i] = k, 0.0
                    slots[k] -= 1
                elif (free[k] >= A["psdem"][i] - _EPS).all():
                    ps_rack[i], server[i] = k, 1.0
                    free[k] -= A["psdem"][i]
                else:
                    wrack[:], ps_rack[:], server[:], free[:], slots[:] = snap
                    continue
                for n in np.flatnonzero((job_of == i) & (wrack != k)):
                    if (free[k] >= A["wdem"][n] - _EPS).all():
                        free[wrack[n]] += A["wdem"][n]
                        free[k] -= A["wdem"][n]
                        wrack[n] = k
                new = score()
                if new > best:
                    best, improved = new, True
                else:
                    wrack[:], ps_rack[:], server[:], free[:], slots[:] = snap
            elif mv[0] == "s":
                _, i, i2 = mv
                loc1, loc2 = (ps_rack[i], server[i]), (ps_rack[i2], server[i2])
                if loc1 == loc2:
                    continue
                f2 = free.copy()
                for (k, sv), out, into in ((loc1, i, i2), (loc2, i2, i)):
                    if sv == 1:
                        f2[k] += A["psdem"][out] - A["psdem"][into]
                if (f2 < -_EPS).any():
                    continue
                ps_rack[i], server[i] = loc2
                ps_rack[i2], server[i2] = loc1
                new = score()
                if new > best:
                    free[:] = f2
                    best, improved = new, True
                else:
                    ps_rack[i], server[i] = loc1
                    ps_rack[i2], server[i2] = loc2
            else:
                _, n, q = mv
                kn, kq = wrack[n], wrack[q]
                if kn == kq:
                    continue
                dn, dq = A["wdem"][n], A["wdem"][q]
                if (free[kn] + dn - dq < -_EPS).any() or (free[kq] + dq - dn < -_EPS).any():
                    continue
                wrack[n], wrack[q] = kq, kn
                new = score()
                if new > best:
                    free[kn] += dn - dq
                    free[kq] += dq - dn
                    best, improved = new, True
                else:
                    wrack[n], wrack[q] = kn, kq
        if not improved:
            break
    return best


def _critical_jobs(instance: Instance, wrack, ps_rack, server) -> np.ndarray:
    """Jobs with a flow on a bottleneck link (optimal circuits): only moving them, or flows
    sharing their links, can raise f."""
    A = instance.arrays
    job_of = A["job_of"]
    f, c = _optimal(instance, wrack, ps_rack, server)
    a = flow_coefficients(instance, server)
    ws, pss, mat = link_loads(instance, wrack, ps_rack, server, a)
    tight = f * (1 + 1e-9)
    cap = instance.capacity
    with np.errstate(divide="ignore"):
        bad_w = (ws > 0) & (cap / np.where(ws > 0, ws, 1) <= tight)
        bad_p = (pss > 0) & (cap / np.where(pss > 0, pss, 1) <= tight)
        need = np.maximum(mat, mat.T)
        bad_c = (need > 0) & (instance.port_bw * c / np.where(need > 0, need, 1) <= tight)
    prack = ps_rack[job_of]
    hit = bad_w[wrack] | (bad_p[prack] & (server[job_of] == 1)) | bad_c[wrack, prack]
    crit = np.zeros(len(instance.jobs), bool)
    crit[job_of[hit]] = True
    return crit


def _iterated_search(instance: Instance, wrack: np.ndarray, ps_rack: np.ndarray,
                     server: np.ndarray, rng: np.random.Generator, time_limit: float,
                     max_rounds: int, kick: int = 3) -> None:
    """Local search, then kicks (``kick`` random feasible worker moves) and local search again
    until ``time_limit``; the best placement is left in the arrays."""
    A = instance.arrays
    t_end = time.perf_counter() + time_limit
    best = _local_search(instance, wrack, ps_rack, server, rng, time_limit, max_rounds)
    keep = (wrack.copy(), ps_rack.copy(), server.copy())
    while time.perf_counter() < t_end and wrack.size > 1:
        w, p, sv = keep[0].copy(), keep[1].copy(), keep[2].copy()
        free = A["cap"].copy()
        np.subtract.at(free, w, A["wdem"])
        np.subtract.at(free, p[sv == 1], A["psdem"][sv == 1])
        for n in rng.choice(w.size, min(kick, w.size), replace=False):
            ok = np.flatnonzero((free >= A["wdem"][n] - _EPS).all(axis=1))
            if ok.size:
                k = int(rng.choice(ok))
                free[w[n]] += A["wdem"][n]
                free[k] -= A["wdem"][n]
                w[n] = k
        left = t_end - time.perf_counter()
        if left <= 0:
            break
        new = _local_search(instance, w, p, sv, rng, left, max_rounds)
        if new > best:
            best, keep = new, (w, p, sv)
    wrack[:], ps_rack[:], server[:] = keep


def wcg(instance: Instance, *, seed: int = 0, circuits: str = "bvn",
        bandwidth: str = "proportional") -> Solution:
    """Algorithm 1 with the load-balancing rack choice (``place``); deterministic."""
    return _schedule(instance, _workers_balanced, seed, circuits, bandwidth)


def wcg_literal(instance: Instance, *, seed: int = 0, circuits: str = "bvn",
                bandwidth: str = "proportional") -> Solution:
    """Algorithm 1 with the literal rack choice (least placed data); deterministic."""
    return _schedule(instance, _workers_wcg, seed, circuits, bandwidth, rounding="terms")


def swg(instance: Instance, *, seed: int = 0, circuits: str = "bvn",
        bandwidth: str = "proportional") -> Solution:
    """Single worker grouping (section IV-A baseline); deterministic."""
    return _schedule(instance, _workers_swg, seed, circuits, bandwidth)


def rwp(instance: Instance, *, seed: int = 0, circuits: str = "bvn",
        bandwidth: str = "proportional") -> Solution:
    """Random worker placement (section IV-A baseline), seeded."""
    return _schedule(instance, _workers_rwp, seed, circuits, bandwidth)


def wcg_opt(instance: Instance, *, seed: int = 0) -> Solution:
    """The literal WCG placement (``wcg-literal``) with optimal circuits and bandwidth (ours):
    isolates what the placement costs."""
    return _schedule(instance, _workers_wcg, seed, "optimal", "optimal")


def wcg_ls(instance: Instance, *, seed: int = 0, time_limit: float = 2.0,
           max_rounds: int = 50) -> Solution:
    """``wcg``'s placement, then iterated local search on the placement, optimal circuits and
    bandwidth (ours).

    Runs for ``time_limit`` seconds (``max_rounds`` bounds one descent); ``seed`` drives the move
    order and the kicks.
    """
    return _schedule(instance, _workers_balanced, seed, "optimal", "optimal",
                     search=(time_limit, max_rounds))


# --------------------------------------------------------------------------------------------
# options and size estimates (dmlopt.contract)


class ScheduleOptions(Options):
    """Options of wcg, wcg-literal, swg and rwp (module docstring, "Options")."""

    circuits: Literal["bvn", "optimal"] = pydantic.Field(
        default="bvn", description="OXC circuits: bvn (Algorithm 1, lines 25-28) or optimal "
        "(the best circuit counts for the placement)")
    bandwidth: Literal["proportional", "optimal"] = pydantic.Field(
        default="proportional", description="bandwidth: proportional to the data size (line "
        "29) or optimal (closed form b = a f*)")


class SearchOptions(Options):
    """Options of wcg-ls (iterated local search over placements, ours)."""

    time_limit: float = pydantic.Field(default=2.0, gt=0, le=86_400,
                                       description="seconds of local search after wcg")
    max_rounds: int = pydantic.Field(default=50, ge=1, le=1_000_000,
                                     description="improvement rounds of one descent")


def schedule_estimate(instance: Instance, options: Options) -> Size:
    """Size of Algorithm 1 on ``instance`` (any placement rule), from R, N_ToR, jobs and
    workers alone.

    Work: the placement (wcg's target-f scan up to 16 racks: 18 variants x 48 targets x 8
    anchors per worker and rack), the BvN decomposition (at most min(R^2, W + 2R) terms, each a
    bottleneck assignment of O(R^3 log R^2)), the time-shared schedule (R N_ToR / 2 port pairs
    per term), the repair and rebalancing of the circuits (O(R^3 N_ToR)) and the optimal
    circuits (N_ToR R^2 candidate values). Memory: a few dozen (R, R) matrices, the
    N_ToR R^2 / 2 candidates and the schedule's port pairs.
    """
    del options
    R, P = float(instance.n_racks), float(instance.n_tor)
    W = float(sum(len(j.workers) for j in instance.jobs))
    J = float(len(instance.jobs))
    terms = min(R * R, W + 2 * R)
    log_r = math.log2(R * R + 1) + 1
    place = 7000.0 * (W + J) * R
    bvn = terms * (R ** 3 * log_r + R * R + R * P)
    circuits = 10.0 * R ** 3 * P + P * R * R * log_r
    memory = 8.0 * (48 * R * R + P * R * R + 8 * (W + J) * R) + 64.0 * terms * R * P
    return Size(memory, place + bvn + circuits)


HEURISTICS: dict[str, Heuristic] = {
    "wcg": Heuristic(wcg, ScheduleOptions, schedule_estimate,
                     "Algorithm 1 with the load-balancing rack choice (deterministic)"),
    "wcg-literal": Heuristic(wcg_literal, ScheduleOptions, schedule_estimate,
                             "Algorithm 1 with the literal rack choice (least placed data)"),
    "swg": Heuristic(swg, ScheduleOptions, schedule_estimate,
                     "single worker grouping (section IV-A baseline)"),
    "rwp": Heuristic(rwp, ScheduleOptions, schedule_estimate,
                     "random worker placement (section IV-A baseline), seeded"),
    "wcg-opt": Heuristic(wcg_opt, NoOptions, schedule_estimate,
                         "ours: wcg-literal's placement, optimal circuits and bandwidth"),
    "wcg-ls": Heuristic(wcg_ls, SearchOptions, schedule_estimate,
                        "ours: wcg, then iterated local search for time_limit seconds"),
}
