"""RAR (paper 003): ``rdda-lns``, a large neighbourhood search from ``rdda-pack`` (ours).

What
----
:func:`rdda_lns` starts from :func:`~dmlopt.heuristics.rar_schemes.rdda_pack`'s solution and,
until its time limit, repeats: pick a neighbourhood (at most ``size`` requests), keep every other
request exactly as it is (its CUs per node and slot and its wavelength load per link and slot
become fixed reductions of the capacities, the wavelengths it activates stay activated), and
solve an exact model of the free requests with HiGHS (rows built from the instance with numpy,
no Pyomo), warm-started from their current placements, with at most ``solve_limit`` seconds per
solve. The sub-model's solution is turned into a full solution (CU ids re-assigned by
:func:`dmlopt.models.rar.assign_cu_ids`) and re-scored by :func:`dmlopt.models.rar.evaluate`;
it replaces the current one only when the evaluator's eq. (4) drops. The sub-model's own value
is never used.

The sub-model is the ``config`` formulation (:mod:`dmlopt.models.rar.config`; equal optimum to
``aggregated``) on the free requests: one binary per free request and placement (ring, computing
nodes containing the source, k CUs on each, a window of exactly the duration d of k (eqs. 1, 2,
5) and the wavelength), at most one per request (eq. 7), CU capacity per node and slot against
what the fixed requests leave (eq. 8), wavelength load per link, wavelength and slot against rho
minus the fixed load (eq. 9; a row only where more free requests could use it than room is
left), and eq. (4)'s terms of the free requests: a blocked one costs 1 / |R| (plus alpha under
MaxR, Gamma = 0), MinT the end ratio, MaxR 1 - gamma of the ring, MinW the wavelengths and MinCU
the peaks above what the fixed requests already activate. Built on the ``aggregated`` modes
(:func:`dmlopt.models.rar.modes`: the fewest CUs per duration, which loses no optimum). Only
placements that fit alone in what the fixed requests leave are generated; with the
neighbourhood smaller than the instance, at most ``max_options`` of them are kept per free
request (fewest CU-slots first, MinT: earliest end first, ties at random) on at most
``max_wavelengths`` wavelengths (the least loaded on its candidate links, MinW: the most already
activated there). These restrictions only remove placements, so every solution of the
sub-model is feasible. The current placement of each free request is always offered, so the
warm start is feasible and the sub-model's optimum is never worse than it. A sub-model stops
once it cannot gain half of one blocked request's 1 / |R| (HiGHS's absolute gap).

Neighbourhoods (``seed``): while requests are blocked, half of the rounds take one blocked
request, one of its candidate rings at random, and ``size - 1`` deployed requests drawn at
random among the ``2 (size - 1)`` with the most CU-slots on that ring's nodes inside its window;
the other rounds take a random node and slot, and the requests computing on that node nearest
that slot together with the blocked requests whose candidate rings pass the node and whose
window holds the slot. With ``size`` at least the number of requests the neighbourhood is the
whole instance: every placement and every wavelength is offered, the sub-model is solved to
optimality (the search then stops), and the result is the optimum when HiGHS proves it within
``solve_limit``.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pydantic

from dmlopt.contract import Options, Size
from dmlopt.models.rar import (
    Assignment,
    Instance,
    Solution,
    assign_cu_ids,
    evaluate,
    modes,
)
from dmlopt.validation import time_limit_field

#: a deployed request's placement: ring index, computing nodes, CUs per node, start, end
#: (slots, 1-based, inclusive), wavelength
Place = tuple[int, tuple[int, ...], tuple[int, ...], int, int, int]


@dataclass
class LnsStats:
    """What :func:`rdda_lns_search` did.

    Attributes: ``rounds`` (sub-models solved), ``accepted`` (moves that lowered eq. 4),
    ``objective_before`` / ``objective_after`` and ``blocked_before`` / ``blocked_after``
    (``rdda-pack``'s solution and the result, as the evaluator scores them), ``build_seconds``
    and ``solve_seconds`` (wall time spent building and solving sub-models), ``trace`` (per
    accepted move: CPU and wall seconds since the search started, after ``rdda-pack``; eq. (4)
    and the blocked requests, both re-evaluated).
    """

    rounds: int = 0
    accepted: int = 0
    objective_before: float = 0.0
    objective_after: float = 0.0
    blocked_before: int = 0
    blocked_after: int = 0
    build_seconds: float = 0.0
    solve_seconds: float = 0.0
    trace: list[tuple[float, float, float, int]] = field(default_factory=list)


def _canon(nodes: list[int] | tuple[int, ...]) -> tuple[int, ...]:
    """The cyclic order of a ring's ``nodes`` as the instance's ring list stores it."""
    nodes = list(nodes)
    i = nodes.index(min(nodes))
    rot = nodes[i:] + nodes[:i]
    if rot[1] > rot[-1]:
        rot = [rot[0]] + rot[1:][::-1]
    return tuple(rot)


class _State:
    """The current solution as placements, with CU use, wavelength loads and activations."""

    def __init__(self, inst: Instance, solution: Solution) -> None:
        self.inst = inst
        index = {ring.nodes: k for k, ring in enumerate(inst.rings)}
        self.plans: list[Place | None] = []
        for a in solution.requests:
            if a is None:
                self.plans.append(None)
                continue
            self.plans.append((index[_canon(a.ring)], tuple(a.nodes),
                               tuple(len(c) for c in a.cus), a.start, a.end, a.wavelength))
        T = inst.slots
        self.caps = np.array([nd.cus for nd in inst.nodes], dtype=np.int64)
        self.w_max = max(lk.wavelengths for lk in inst.links)
        self.used = np.zeros((len(inst.nodes), T), dtype=np.int64)
        self.load = np.zeros((len(inst.links), self.w_max, T), dtype=np.int64)
        self.wcnt = np.zeros((len(inst.links), self.w_max), dtype=np.int64)
        for p in self.plans:
            if p is not None:
                self.add(p, 1)

    def add(self, p: Place, sign: int) -> None:
        """Add (sign 1) or remove (-1) placement ``p``'s CU use and wavelength load."""
        k, nodes, counts, s, e, b = p
        for v, c in zip(nodes, counts, strict=True):
            self.used[v, s - 1:e] += sign * c
        for li in self.inst.rings[k].links:
            self.load[li, b, s - 1:e] += sign
            self.wcnt[li, b] += sign

    def solution(self) -> Solution:
        """The Solution of the placements (CU ids by :func:`assign_cu_ids`)."""
        plans = [None if p is None else (list(p[1]), list(p[2]), p[3], p[4])
                 for p in self.plans]
        ids = assign_cu_ids(self.inst, plans)
        out: list[Assignment | None] = []
        for j, p in enumerate(self.plans):
            if p is None:
                out.append(None)
                continue
            out.append(Assignment(ring=list(self.inst.rings[p[0]].nodes), nodes=list(p[1]),
                                  cus=ids[j], wavelength=p[5], start=p[3], end=p[4]))
        return Solution(requests=out)


class _Model:
    """Columns and (row, column, value) entries of a sub-model, added as numpy blocks."""

    def __init__(self) -> None:
        self.lo: list[np.ndarray] = []
        self.hi: list[np.ndarray] = []
        self.cost: list[np.ndarray] = []
        self.integer: list[np.ndarray] = []
        self.ncol = 0
        self.r: list[np.ndarray] = []
        self.c: list[np.ndarray] = []
        self.v: list[np.ndarray] = []
        self.rlo: list[float] = []
        self.rhi: list[float] = []

    def cols(self, n: int, cost: Any = 0.0, integer: bool = True, lo: float = 0.0,
             hi: float = 1.0) -> np.ndarray:
        idx = np.arange(self.ncol, self.ncol + n)
        self.ncol += n
        self.lo.append(np.full(n, lo, dtype=float))
        self.hi.append(np.full(n, hi, dtype=float))
        self.cost.append(np.broadcast_to(np.asarray(cost, dtype=float), (n,)).copy())
        self.integer.append(np.full(n, integer))
        return idx

    def rows(self, n: int, lo: Any, hi: Any) -> np.ndarray:
        first = len(self.rlo)
        self.rlo += list(np.broadcast_to(np.asarray(lo, dtype=float), (n,)))
        self.rhi += list(np.broadcast_to(np.asarray(hi, dtype=float), (n,)))
        return np.arange(first, first + n)

    def put(self, r: Any, c: Any, v: Any) -> None:
        r = np.asarray(r, dtype=np.int64).ravel()
        c = np.asarray(c, dtype=np.int64).ravel()
        self.r.append(r)
        self.c.append(c)
        self.v.append(np.broadcast_to(np.asarray(v, dtype=float), r.shape).ravel().copy())

    def highs(self, time_limit: float, abs_gap: float) -> Any:
        import scipy.sparse as sp

        from dmlopt import solvers

        h = solvers.highspy_model()
        h.setOptionValue("threads", 1)
        h.setOptionValue("time_limit", max(float(time_limit), 0.01))
        h.setOptionValue("mip_rel_gap", 0.0)
        h.setOptionValue("mip_abs_gap", abs_gap)
        h.setOptionValue("presolve_rule_off", 32768)  # probing alone can take the whole limit
        cat = np.concatenate
        r, c = (cat(self.r) if self.r else np.zeros(0, np.int64),
                cat(self.c) if self.c else np.zeros(0, np.int64))
        v = cat(self.v) if self.v else np.zeros(0)
        mat = sp.csr_matrix((v, (r, c)), shape=(len(self.rlo), self.ncol))
        solvers.add_arrays(h, cat(self.lo), cat(self.hi), mat, np.array(self.rlo),
                           np.array(self.rhi), cost=cat(self.cost), integer=cat(self.integer))
        return h


@dataclass
class _Free:
    """One free request's placements offered to the sub-model and their columns."""

    j: int
    places: list[Place]
    x: np.ndarray


def _minres(res: np.ndarray) -> list[np.ndarray]:
    """minres[d - 1][n, s - 1]: the fewest CUs left on node n over slots s .. s + d - 1."""
    out = [res]
    cur = res
    for d in range(2, res.shape[1] + 1):
        cur = np.minimum(cur[:, :-1], res[:, d - 1:])
        out.append(cur)
    return out


def _wavelengths(inst: Instance, st: _State, j: int, links: list[int], load: np.ndarray,
                 wcnt: np.ndarray, claimed: np.ndarray, wl: int) -> list[int]:
    """The wavelengths offered to free request j: all (``wl`` 0), else the ``wl`` least loaded
    over its window on its candidate links by the fixed requests and the free requests offered
    them before (MinW: most already activated there first), and its current one."""
    if not wl:
        return list(range(st.w_max))
    r = inst.requests[j]
    lk = np.array(links)
    busy = load[lk, :, r.arrival - 1:r.deadline].max(axis=2) + claimed[lk]  # (links, W)
    worst = busy.max(axis=0)
    if inst.scheme == "MinW":
        key = np.lexsort((np.arange(st.w_max), worst, -(wcnt[lk] > 0).sum(axis=0)))
    else:
        key = np.lexsort((np.arange(st.w_max), worst))
    out = [int(b) for b in key[:wl]]
    p = st.plans[j]
    if p is not None and p[5] not in out:
        out.append(p[5])
    claimed[lk[:, None], np.array(out)[None, :]] += 1
    return sorted(out)


def _places(inst: Instance, st: _State, j: int, minres: list[np.ndarray], room: np.ndarray,
            bs: list[int], cap: int, rng: np.random.Generator, mode_cache: dict[int, list]
            ) -> list[Place]:
    """Free request j's placements (ring, node set, CUs, window, wavelength in ``bs``) that fit
    in what the fixed requests leave: ``minres`` (CUs per node over windows, :func:`_minres`)
    and ``room`` (requests per link, wavelength and slot), at most ``cap`` of them (0: all;
    fewest CU-slots first, MinT: earliest end first, ties at random), its current placement
    always among them (last)."""
    r = inst.requests[j]
    rings = inst.candidate_rings(j)
    if j not in mode_cache:
        mode_cache[j] = modes(inst, j, int(st.caps.max()))
    slots: list[tuple] = []  # (key, nn, k, d, ring, start, other nodes, wavelengths, count)
    for nn, k, d in mode_cache[j]:
        lo, hi = r.arrival, r.deadline - d + 1
        if hi < lo:
            continue
        for ki in rings:
            ring = inst.rings[ki]
            if ring.size < nn:
                continue
            nodes = np.array(ring.nodes)
            ok = minres[d - 1][nodes, lo - 1:hi] >= k  # (ring nodes, starts)
            src = ring.nodes.index(r.source)
            good = ok[src] & (ok.sum(axis=0) >= nn)
            if not good.any():
                continue
            lk = list(ring.links)
            # wavelength b free on every ring link over [s, s + d - 1]
            full = (room[lk][:, bs, :] <= 0).any(axis=0)  # (len(bs), T)
            csum = np.concatenate([np.zeros((len(bs), 1), np.int64),
                                   np.cumsum(full, axis=1)], axis=1)
            for i in np.flatnonzero(good):
                s = lo + int(i)
                wfree = [b for bi, b in enumerate(bs) if csum[bi, s + d - 1] == csum[bi, s - 1]]
                if not wfree:
                    continue
                others = [int(v) for v in nodes[ok[:, i]] if v != r.source]
                key = (s + d - 1, nn * k * d) if inst.scheme == "MinT" else (nn * k * d,)
                slots.append((key, nn, k, d, ki, s, others, wfree,
                              math.comb(len(others), nn - 1) * len(wfree)))
    if cap and sum(x[-1] for x in slots) > cap:
        tie = rng.random(len(slots))
        slots = [slots[i] for i in sorted(range(len(slots)),
                                          key=lambda i: (slots[i][0], tie[i]))]
    found: list[Place] = []
    for _, nn, k, d, ki, s, others, wfree, _ in slots:
        ring_nodes = inst.rings[ki].nodes
        for rest in itertools.combinations(others, nn - 1):
            vs = tuple(v for v in ring_nodes if v == r.source or v in rest)
            found += [(ki, vs, (k,) * nn, s, s + d - 1, b) for b in wfree]
        if cap and len(found) >= cap:
            found = found[:cap]
            break
    p = st.plans[j]
    if p is not None:
        if p in found:
            found.remove(p)
        found.append(p)
    return found


def _build(inst: Instance, st: _State, free: list[int], cap: int, rng: np.random.Generator,
           mode_cache: dict[int, list], max_wavelengths: int = 0
           ) -> tuple[_Model, list[_Free], np.ndarray]:
    """The sub-model of the free requests (module docstring) and its warm start."""
    nr = len(inst.requests)
    alpha = inst.alpha_of()
    scheme = inst.scheme
    for j in free:
        if st.plans[j] is not None:
            st.add(st.plans[j], -1)  # type: ignore[arg-type]
    try:
        res = st.caps[:, None] - st.used
        used = st.used.copy()
        room = inst.rho - st.load
        wcnt = st.wcnt.copy()
    finally:
        for j in free:
            if st.plans[j] is not None:
                st.add(st.plans[j], 1)  # type: ignore[arg-type]
    minres = _minres(res)
    m = _Model()
    block = 1.0 / nr + (alpha if scheme == "MaxR" else 0.0)
    claimed = np.zeros_like(wcnt)
    wl = 0 if len(free) >= nr else max_wavelengths
    frees: list[_Free] = []
    cu: list[tuple[int, int, int, int]] = []  # (node, slot, column, CUs)
    wave: dict[tuple[int, int, int], list[tuple[int, int]]] = {}  # (l, b, t) -> (j, column)
    wact: dict[tuple[int, int, int], list[int]] = {}  # MinW: (j, l, b) -> columns
    x0 = []
    for j in free:
        links = sorted({li for ki in inst.candidate_rings(j) for li in inst.rings[ki].links})
        bs = _wavelengths(inst, st, j, links, room, wcnt, claimed, wl) if links else []
        places = _places(inst, st, j, minres, room, bs, cap, rng, mode_cache)
        dl = inst.requests[j].deadline
        cost = [-block + (alpha * (1.0 - inst.rings[p[0]].reliability) if scheme == "MaxR"
                          else alpha * p[4] / dl if scheme == "MinT" else 0.0)
                for p in places]
        x = m.cols(len(places), cost)
        one = m.rows(1, -np.inf, 1.0)[0]  # one placement or blocked (eqs. 7, 24)
        m.put(np.full(len(places), one), x, 1.0)
        for c, (ki, vs, ks, s, e, b) in zip(x.tolist(), places, strict=True):
            for v, kk in zip(vs, ks, strict=True):
                cu += [(v, t, c, kk) for t in range(s, e + 1)]
            for li in inst.rings[ki].links:
                for t in range(s, e + 1):
                    wave.setdefault((li, b, t), []).append((j, c))
                if scheme == "MinW" and wcnt[li, b] == 0:
                    wact.setdefault((j, li, b), []).append(c)
        if st.plans[j] is not None:
            x0.append(int(x[-1]))
        frees.append(_Free(j, places, x))
    if cu:
        arr = np.array(cu, dtype=np.int64)
        key = arr[:, 0] * (inst.slots + 1) + arr[:, 1]
        uniq, inv = np.unique(key, return_inverse=True)
        un, ut = uniq // (inst.slots + 1), uniq % (inst.slots + 1)
        rows = m.rows(len(uniq), -np.inf, res[un, ut - 1])  # CUs per node and slot (eq. 8)
        m.put(rows[inv], arr[:, 2], arr[:, 3])
        if scheme == "MinCU":  # activated CUs above the fixed requests' peaks
            touched = np.unique(un)
            A = m.cols(len(touched), alpha, lo=0.0, hi=float(st.caps.max()))
            apos = np.searchsorted(touched, un)
            pk = m.rows(len(uniq), -np.inf, -used[un, ut - 1])
            m.put(pk[inv], arr[:, 2], arr[:, 3])
            m.put(pk, A[apos], -1.0)
            fl = m.rows(len(touched), used.max(axis=1)[touched], np.inf)
            m.put(fl, A, 1.0)
            x0 += [(int(c), float(st.used[n].max())) for c, n in zip(A, touched, strict=True)]
    for (li, b, t), cols in wave.items():  # requests per wavelength and slot (eq. 9)
        if len({j for j, _ in cols}) > room[li, b, t - 1]:
            rr = m.rows(1, -np.inf, float(room[li, b, t - 1]))[0]
            m.put(np.full(len(cols), rr), [c for _, c in cols], 1.0)
    if wact:  # MinW: wavelengths newly activated
        lb = sorted({(li, b) for _, li, b in wact})
        ow = dict(zip(lb, m.cols(len(lb), alpha, integer=False).tolist(), strict=True))
        cur = {c for c in x0 if isinstance(c, int)}
        for (_, li, b), cols in wact.items():
            rr = m.rows(1, -np.inf, 0.0)[0]
            m.put(np.full(len(cols) + 1, rr), cols + [ow[li, b]], [1.0] * len(cols) + [-1.0])
            if cur & set(cols):
                x0.append((ow[li, b], 1.0))
    start = np.zeros(m.ncol)
    for item in x0:
        c, v = item if isinstance(item, tuple) else (item, 1.0)
        start[c] = v
    return m, frees, start


def _decode(inst: Instance, x: np.ndarray, f: _Free) -> Place | None:
    """Free request ``f``'s placement in the sub-model's solution ``x``."""
    on = [i for i, c in enumerate(f.x.tolist()) if x[c] > 0.5]
    return f.places[on[0]] if on else None


def _neighbourhood(inst: Instance, st: _State, size: int, rng: np.random.Generator
                   ) -> list[int]:
    """The free requests of one round (module docstring)."""
    nr = len(inst.requests)
    if size >= nr:
        return list(range(nr))
    blocked = [j for j, p in enumerate(st.plans) if p is None]
    if blocked and rng.random() < 0.5:
        j0 = int(rng.choice(blocked))
        r0 = inst.requests[j0]
        rings = inst.candidate_rings(j0)
        if not rings:
            return [j0]
        ring_nodes = set(inst.rings[int(rng.choice(rings))].nodes)
        lo, hi = r0.arrival, r0.deadline
        scored = []
        for i, p in enumerate(st.plans):
            if p is None:
                continue
            _, nodes, counts, s, e, _ = p
            over = max(0, min(e, hi) - max(s, lo) + 1)
            mass = sum(c for v, c in zip(nodes, counts, strict=True) if v in ring_nodes) * over
            if mass > 0:
                scored.append((-mass, i))
        scored.sort()
        pool = [i for _, i in scored[:2 * (size - 1)]]
        pick = rng.permutation(len(pool))[:size - 1] if pool else []
        return sorted([j0] + [pool[i] for i in pick])
    v0 = int(rng.integers(len(inst.nodes)))
    t0 = int(rng.integers(1, inst.slots + 1))
    near = []
    for i, p in enumerate(st.plans):
        if p is not None and v0 in p[1]:
            near.append((abs((p[3] + p[4]) / 2 - t0), i))
        elif p is None and any(v0 in inst.rings[k].nodes for k in inst.candidate_rings(i)):
            r = inst.requests[i]
            if r.arrival <= t0 <= r.deadline:
                near.append((0.0, i))
    near.sort()
    return sorted(i for _, i in near[:size]) or [int(rng.integers(nr))]


def rdda_lns_search(instance: Instance, *, seed: int = 0, time_limit: float = 60.0,
                    size: int = 12, solve_limit: float = 3.0, max_options: int = 100,
                    max_wavelengths: int = 2, start: Solution | None = None
                    ) -> tuple[Solution, LnsStats]:
    """:func:`rdda_lns` with what it did (:class:`LnsStats`).

    Parameters
    ----------
    instance, seed, time_limit, size, solve_limit, max_options, max_wavelengths
        As :func:`rdda_lns`.
    start : Solution or None
        The solution to improve (feasible); default ``rdda-pack``'s.

    Returns
    -------
    (Solution, LnsStats)
        The best solution and the statistics of the search.

    References
    ----------
    Ours (module docstring), on paper 003's eq. (4) and the ``aggregated`` formulation.
    """
    from dmlopt.errors import InstanceError, Interrupted
    from dmlopt.heuristics.rar_schemes import pack_until

    for name, value, ok in (("time_limit", time_limit, time_limit > 0),
                            ("size", size, size >= 1), ("solve_limit", solve_limit,
                                                        solve_limit > 0),
                            ("max_options", max_options, max_options >= 0),
                            ("max_wavelengths", max_wavelengths, max_wavelengths >= 0)):
        if not ok:
            raise InstanceError(name, value, "must be positive" if not name.startswith("max")
                                else "must be at least 0 (0: all)")
    inst = instance
    nr = len(inst.requests)
    t0, c0 = time.perf_counter(), time.process_time()  # the search's clock, start included
    deadline = t0 + time_limit
    sol = pack_until(inst, deadline) if start is None else start
    ev = evaluate(inst, sol)
    if not ev.feasible or len(sol.requests) != nr:
        raise InstanceError("start", ev.violations[0], "must be a feasible solution")
    stats = LnsStats(objective_before=ev.objective,
                     blocked_before=nr - int(round(ev.metrics["deployed"])))
    best_obj = ev.objective
    st = _State(inst, sol)
    rng = np.random.default_rng(seed)
    mode_cache: dict[int, list] = {}
    # a sub-model stops once it cannot gain half a blocked request's 1 / |R| (whole instance:
    # solved to optimality)
    gap = 1e-9 if size >= nr else 0.5 / nr
    try:
        while time.perf_counter() < deadline:
            free = _neighbourhood(inst, st, size, rng)
            b0 = time.perf_counter()
            m, frees, x0 = _build(inst, st, free, max_options, rng, mode_cache, max_wavelengths)
            if m.ncol == 0:  # no free request fits anywhere: nothing to solve
                stats.rounds += 1
                if len(free) == nr:
                    break
                continue
            h = m.highs(min(solve_limit, max(deadline - time.perf_counter(), 0.01)), gap)
            b1 = time.perf_counter()
            stats.build_seconds += b1 - b0
            _solve(h, x0)
            stats.solve_seconds += time.perf_counter() - b1
            stats.rounds += 1
            x = _values(h)
            whole = len(free) == nr and h.getModelStatus() == _optimal()
            if x is None:
                if whole:
                    break
                continue
            old = {f.j: st.plans[f.j] for f in frees}
            new = {f.j: _decode(inst, x, f) for f in frees}
            if new == old:
                if whole:
                    break
                continue
            for j in free:
                st.plans[j] = new[j]
            cand = st.solution()
            ev2 = evaluate(inst, cand)
            if ev2.feasible and ev2.objective < best_obj - 1e-12:
                for j in free:
                    if old[j] is not None:
                        st.add(old[j], -1)  # type: ignore[arg-type]
                    if new[j] is not None:
                        st.add(new[j], 1)  # type: ignore[arg-type]
                best_obj = ev2.objective
                sol = cand
                stats.accepted += 1
                stats.trace.append((time.process_time() - c0, time.perf_counter() - t0, best_obj,
                                    nr - int(round(ev2.metrics["deployed"]))))
            else:
                for j in free:
                    st.plans[j] = old[j]
            if whole:
                break  # the whole instance solved to optimality: nothing left to find
    except KeyboardInterrupt:  # Ctrl-C: the best solution so far rides along
        raise Interrupted(sol) from None
    ev = evaluate(inst, sol)
    stats.objective_after = ev.objective
    stats.blocked_after = nr - int(round(ev.metrics["deployed"]))
    return sol, stats


def _optimal() -> Any:
    """HiGHS's model status "optimal"."""
    import highspy

    return highspy.HighsModelStatus.kOptimal


def _solve(h: Any, x0: np.ndarray) -> None:
    """Run the sub-model from the warm start ``x0``."""
    import highspy

    from dmlopt import solvers

    s = highspy.HighsSolution()
    s.col_value = list(x0)
    s.value_valid = True
    h.setSolution(s)
    solvers.run_highspy(h)


def _values(h: Any) -> np.ndarray | None:
    """The sub-model's incumbent, None if it has none."""
    info = h.getInfo()
    if info.primal_solution_status != 2:  # kSolutionStatusFeasible
        return None
    return np.asarray(h.getSolution().col_value)


def rdda_lns(instance: Instance, *, seed: int = 0, time_limit: float = 60.0, size: int = 12,
             solve_limit: float = 3.0, max_options: int = 100, max_wavelengths: int = 2
             ) -> Solution:
    """``rdda-pack``, then a large neighbourhood search re-solving ``aggregated`` on a few
    requests at a time while eq. (4) drops (ours).

    Parameters
    ----------
    instance : Instance
        A RAR instance, any scheme (meant for MaxR, MinT and MinW at paper scale, where
        ``rdda-pack`` blocks many requests).
    seed : int
        Seed of the neighbourhood choice and of the ties among options, default 0.
    time_limit : float
        Seconds (wall) of the whole run, ``rdda-pack``'s start included, default 60: the start
        checks it before each request it places (``rar_schemes.pack_until``), the search
        between sub-models, and a sub-model's solve is cut at it.
    size : int
        Free requests per neighbourhood, default 12; at least the number of requests: the
        whole instance, every placement offered, solved once to optimality.
    solve_limit : float
        Seconds (wall) per sub-model solve (HiGHS, one thread), default 3.
    max_options : int
        Placements offered per free request (fewest CU-slots first, MinT: earliest end
        first), default 100; 0 offers all. The current placement is always offered.
    max_wavelengths : int
        Wavelengths offered per free request besides its current one (the least loaded on its
        candidate links; MinW: the most already activated there), default 2; 0 offers all.

    Returns
    -------
    Solution
        The best solution found, as the evaluator scores it never worse than ``rdda-pack``'s
        when ``rdda-pack`` finishes within ``time_limit`` (a move is kept only when the
        re-evaluated eq. (4) drops); otherwise never worse than the start cut at the limit.

    References
    ----------
    Chen et al., JOCN 16(5), 2024 (paper 003): eq. (4), section 4.D. Ours: the search and its
    sub-model (module docstring), the ``config`` formulation on the ``aggregated`` modes.
    """
    return rdda_lns_search(instance, seed=seed, time_limit=time_limit, size=size,
                           solve_limit=solve_limit, max_options=max_options,
                           max_wavelengths=max_wavelengths)[0]


class RddaLnsOptions(Options):
    """Options of :func:`rdda_lns`."""

    time_limit: float = time_limit_field(
        60.0, "seconds (wall) of the whole run, rdda-pack's start included (checked before "
        "each request it places), then between sub-models; a sub-model's solve is cut at it")
    size: int = pydantic.Field(default=12, ge=1, le=10_000,
                               description="free requests per neighbourhood (at least the "
                               "number of requests: the whole instance, solved once)")
    solve_limit: float = pydantic.Field(default=3.0, gt=0, le=3600,
                                        description="seconds per sub-model solve (HiGHS, "
                                        "one thread)")
    max_options: int = pydantic.Field(default=100, ge=0, le=1_000_000,
                                      description="placements offered per free request "
                                      "(0: all)")
    max_wavelengths: int = pydantic.Field(default=2, ge=0, le=10_000,
                                          description="wavelengths offered per free request "
                                          "besides its current one (0: all)")


def rdda_lns_estimate(instance: Instance, options: RddaLnsOptions) -> Size:
    """What :func:`rdda_lns` allocates and computes before it can stop on its own.

    Parameters
    ----------
    instance : Instance
        The RAR instance.
    options : RddaLnsOptions
        The options of the run.

    Returns
    -------
    Size
        Bytes allocated and operations: ``rdda-pack``'s, plus one sub-model of ``size``
        requests with ``max_options`` placements each (all: |T|^2 starts and lengths, four
        node counts, ten node sets, every wavelength), each with (12 + |T|) nonzeros; the
        search stops at its time limit.

    References
    ----------
    Ours: the cost of :func:`dmlopt.heuristics.rar_schemes.rdda_pack_estimate` plus one
    sub-model.
    """
    from dmlopt.heuristics.rar_schemes import RddaPackOptions, rdda_pack_estimate

    pack = rdda_pack_estimate(instance, RddaPackOptions())
    free = min(options.size, len(instance.requests))
    w_max = max(lk.wavelengths for lk in instance.links)
    opts = options.max_options or instance.slots ** 2 * 4 * 10 * w_max
    sub = free * opts * (12 + instance.slots) * 64.0
    return Size(pack.memory + sub, pack.work + 10.0 * sub)
