"""Nara (paper 001): the ``schedule`` upper bound on the accepted requests: per-server
schedules over time by Dantzig-Wolfe column generation (a Lagrangian bound at any stop), with
the aggregate rows of :mod:`dmlopt.models.nara.aggregate`. Registered in
:data:`dmlopt.models.nara.bounds.BOUNDS`."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pydantic

from dmlopt import solvers
from dmlopt.bounds import safe
from dmlopt.contract import BoundValue, Size
from dmlopt.models.nara.aggregate import (
    _SLACK,
    MAX_TERMS,
    AggregateOptions,
    _aggregate_estimate,
    _primal,
    _solve_rows,
    aggregate_bound,
    aggregate_rows,
    heuristic,
)
from dmlopt.models.nara.constants import SENSE
from dmlopt.models.nara.instance import Instance

#: the heuristics the schedule bound runs for its first columns, netfit's solution returned
SCHEDULE_HEURISTICS = ("netfit", "tetris", "nalb")

#: seconds the schedule bound runs when no time limit is given
SCHEDULE_SECONDS = 300.0


def _server_types(instance: Instance) -> list[tuple[int, int, float, int]]:
    """(CPU, memory, access-link capacity, number of servers) of each kind of server."""
    net = instance.net
    kinds: dict[tuple[int, int, float], int] = {}
    for s in range(net.n_servers):
        key = (int(net.cpu[s]), int(net.mem[s]), float(net.cap[int(net.access[s])]))
        kinds[key] = kinds.get(key, 0) + 1
    return [(c, m, b, k) for (c, m, b), k in sorted(kinds.items())]


def _maximal_steps(instance: Instance) -> list[list[int]]:
    """The active sets not contained in the next step's (the others give implied rows)."""
    active = instance.active_sets()
    n = len(active)
    return [act for j, act in enumerate(active)
            if act and not (j + 1 < n and set(act) <= set(active[j + 1]))]


def _price(instance: Instance, steps: list[list[int]], kind: tuple[int, int, float, int],
           pi: np.ndarray, rho: np.ndarray, nu: np.ndarray, *, time_limit: float,
           threads: int, integral: bool = False
           ) -> tuple[float, float, dict[int, tuple[float, float, bool]], bool]:
    """The best schedule of one server of ``kind`` for the prices (pi, rho, nu).

    A schedule gives every request i a piece: nothing, all of it with no bandwidth (a request
    that fits the server, held by it alone), or (c', m') with c' + m' >= 1 and b_i charged on
    the access link (a request spread over several servers). At every step the pieces of the
    active requests fit the server's CPU, memory and access link. Value: sum of
    pi_i c' + rho_i m' + nu_i over the pieces.

    Parameters
    ----------
    instance : Instance
        A Nara episode.
    steps : list of list of int
        The active sets whose rows are kept (:func:`_maximal_steps`).
    kind : (CPU, memory, access capacity, count)
        The server kind.
    pi, rho, nu : numpy.ndarray
        Prices of a unit of CPU, of memory and of a piece, per request (>= 0).
    time_limit : float
        Seconds for HiGHS; a stopped search still gives its dual bound.
    threads : int
        HiGHS threads.
    integral : bool
        Integer pieces (the episode's rule); False relaxes them to real amounts (a relaxation:
        its optimum is an upper bound on the integer one, and faster to prove).

    Returns
    -------
    (value, upper, pieces, optimal)
        The value of the schedule found, an upper bound on the best value (HiGHS's dual bound,
        moved up by a relative 1e-7), the pieces {request: (c', m', single)}, and whether
        HiGHS proved the optimum.

    References
    ----------
    Paper 001 (Shabka, Zervas), section 3.1 (constraints 1-3, per server).
    """
    import highspy

    C, M, B, _ = kind
    reqs = instance.requests
    cand = [i for i in range(len(reqs)) if pi[i] > 0 or rho[i] > 0 or nu[i] > 0]
    if not cand:
        return 0.0, 0.0, {}, True
    pos = {i: q for q, i in enumerate(cand)}
    k = len(cand)
    # columns: x (multi piece), c', m', y (whole, single) per candidate
    cost, lo, hi = [], [], []
    for i in cand:
        r = reqs[i]
        single = r.c <= C and r.m <= M
        cost += [nu[i], pi[i], rho[i], (pi[i] * r.c + rho[i] * r.m + nu[i]) if single else 0.0]
        lo += [0.0] * 4
        hi += [1.0 if r.b <= B + _SLACK else 0.0, float(min(r.c, C)), float(min(r.m, M)),
               1.0 if single else 0.0]
    n_col = 4 * k
    rows_lo: list[float] = []
    rows_hi: list[float] = []
    starts: list[int] = []
    idx: list[int] = []
    val: list[float] = []

    def row(cols: list[int], coefs: list[float], low: float, up: float) -> None:
        starts.append(len(idx))
        idx.extend(cols)
        val.extend(coefs)
        rows_lo.append(low)
        rows_hi.append(up)

    inf = highspy.kHighsInf
    for q, i in enumerate(cand):
        r = reqs[i]
        row([4 * q + 1, 4 * q], [1.0, -float(min(r.c, C))], -inf, 0.0)
        row([4 * q + 2, 4 * q], [1.0, -float(min(r.m, M))], -inf, 0.0)
        row([4 * q + 1, 4 * q + 2, 4 * q], [1.0, 1.0, -1.0], 0.0, inf)
        row([4 * q, 4 * q + 3], [1.0, 1.0], -inf, 1.0)
    seen: set[tuple[int, ...]] = set()
    for act in steps:
        key = tuple(i for i in act if i in pos)
        if len(key) < 2 or key in seen:
            continue
        seen.add(key)
        qs = [pos[i] for i in key]
        row([4 * q + 1 for q in qs] + [4 * q + 3 for q in qs],
            [1.0] * len(qs) + [float(reqs[cand[q]].c) for q in qs], -inf, float(C))
        row([4 * q + 2 for q in qs] + [4 * q + 3 for q in qs],
            [1.0] * len(qs) + [float(reqs[cand[q]].m) for q in qs], -inf, float(M))
        bw = [q for q in qs if reqs[cand[q]].b > 0]
        if sum(reqs[cand[q]].b for q in bw) > B + _SLACK:
            row([4 * q for q in bw], [reqs[cand[q]].b for q in bw], -inf, B + _SLACK)
    h = solvers.highspy_model()
    h.setOptionValue("output_flag", False)
    solvers.prepare_highs(threads)
    h.setOptionValue("threads", threads)
    h.setOptionValue("time_limit", max(float(time_limit), 1e-3))
    h.setOptionValue("mip_rel_gap", 1e-6)
    lp = highspy.HighsLp()
    lp.num_col_ = n_col
    lp.num_row_ = len(rows_lo)
    lp.col_cost_ = np.asarray(cost, dtype=float)
    lp.col_lower_ = np.asarray(lo, dtype=float)
    lp.col_upper_ = np.asarray(hi, dtype=float)
    lp.row_lower_ = np.asarray(rows_lo, dtype=float)
    lp.row_upper_ = np.asarray(rows_hi, dtype=float)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.asarray(starts + [len(idx)], dtype=np.int32)
    lp.a_matrix_.index_ = np.asarray(idx, dtype=np.int32)
    lp.a_matrix_.value_ = np.asarray(val, dtype=float)
    lp.sense_ = highspy.ObjSense.kMaximize
    cont = highspy.HighsVarType.kInteger if integral else highspy.HighsVarType.kContinuous
    lp.integrality_ = [highspy.HighsVarType.kInteger, cont, cont,
                       highspy.HighsVarType.kInteger] * k
    solvers.pass_model(h, lp)
    solvers.run_highspy(h)
    info = h.getInfo()
    upper = float(info.mip_dual_bound)
    if (not math.isfinite(upper)
            or h.modelStatusToString(h.getModelStatus()) not in solvers.DUAL_BOUND_STATUSES):
        # stopped before the root (or no bound to read): every piece at its largest (each
        # price term on its own)
        upper = float(sum(max(0.0, c) * u for c, u in zip(cost, hi, strict=True)))
    pieces: dict[int, tuple[int, int, bool]] = {}
    value = 0.0
    if info.primal_solution_status == 2:
        x = h.getSolution().col_value
        for q, i in enumerate(cand):
            if x[4 * q + 3] > 0.5:
                pieces[i] = (reqs[i].c, reqs[i].m, True)
            elif x[4 * q] > 0.5:
                pieces[i] = (float(x[4 * q + 1]), float(x[4 * q + 2]), False)
        value = sum(pi[i] * c + rho[i] * m + nu[i] for i, (c, m, _) in pieces.items())
    upper = max(upper, value)
    optimal = h.modelStatusToString(h.getModelStatus()) == "Optimal"
    return value, upper + 1e-7 * max(1.0, abs(upper)), pieces, optimal


def _allocation_columns(instance: Instance, solution: Any,
                        kinds: list[tuple[int, int, float, int]]
                        ) -> list[tuple[int, dict[int, tuple[int, int, bool]]]]:
    """The schedules of the servers in a feasible allocation: (kind index, pieces)."""
    net = instance.net
    by_server: dict[int, dict[int, tuple[int, int, bool]]] = {}
    for i, al in enumerate(solution.allocations):
        if al is None:
            continue
        single = len(al.servers) == 1
        for s, c, m in zip(al.servers, al.cpu, al.mem, strict=True):
            by_server.setdefault(s, {})[i] = (int(c), int(m), single)
    index = {(c, m, b): k for k, (c, m, b, _) in enumerate(kinds)}
    out = []
    for s, pieces in sorted(by_server.items()):
        key = (int(net.cpu[s]), int(net.mem[s]), float(net.cap[int(net.access[s])]))
        out.append((index[key], pieces))
    return out


def _spans(instance: Instance) -> np.ndarray:
    """End (exclusive) of the steps each request holds: request i is active on [i, end_i)."""
    active = instance.active_sets()
    end = np.arange(len(active)) + 1
    for j, act in enumerate(active):
        for i in act:
            end[i] = max(end[i], j + 1)
    return end


def _greedy_schedules(instance: Instance, end: np.ndarray, kind: tuple[int, int, float, int],
                      pi: np.ndarray, rho: np.ndarray, nu: np.ndarray, rng: np.random.Generator,
                      rounds: int) -> list[tuple[float, dict[int, tuple[int, int, bool]]]]:
    """Schedules of one server built greedily, requests in ``rounds`` randomised orders of
    value per resource-time (the first order unperturbed); (value, pieces) of each."""
    C, M, B, _ = kind
    reqs = instance.requests
    n = len(reqs)
    cand = [i for i in range(n) if pi[i] > 0 or rho[i] > 0 or nu[i] > 0]
    if not cand:
        return []
    score = np.array([
        (pi[i] * min(reqs[i].c, C) + rho[i] * min(reqs[i].m, M) + nu[i])
        / ((end[i] - i) * (min(reqs[i].c, C) / max(C, 1) + min(reqs[i].m, M) / max(M, 1)
                           + (reqs[i].b / B if B > 0 else 0.0) + 1e-3))
        for i in cand])
    out = []
    for r in range(rounds):
        noise = np.ones(len(cand)) if r == 0 else rng.uniform(0.3, 1.7, len(cand))
        order = [cand[q] for q in np.argsort(-score * noise, kind="stable")]
        fc = np.full(n, C, dtype=np.int64)
        fm = np.full(n, M, dtype=np.int64)
        fb = np.full(n, B + _SLACK)
        pieces: dict[int, tuple[int, int, bool]] = {}
        value = 0.0
        for i in order:
            q = reqs[i]
            sl = slice(i, int(end[i]))
            c_free, m_free, b_free = int(fc[sl].min()), int(fm[sl].min()), float(fb[sl].min())
            best, piece = 0.0, None
            if q.c <= C and q.m <= M and q.c <= c_free and q.m <= m_free:
                best, piece = pi[i] * q.c + rho[i] * q.m + nu[i], (q.c, q.m, True)
            if q.b <= b_free:
                c = min(q.c, c_free) if pi[i] > 0 else 0
                m = min(q.m, m_free) if rho[i] > 0 else 0
                if c + m == 0:  # a piece gives at least one unit
                    if q.c >= 1 and c_free >= 1 and (pi[i] <= rho[i] or q.m < 1 or m_free < 1):
                        c = 1
                    elif q.m >= 1 and m_free >= 1:
                        m = 1
                v = pi[i] * c + rho[i] * m + nu[i]
                if c + m > 0 and v > best + 1e-12:
                    best, piece = v, (c, m, False)
            if piece is None or best <= 0:
                continue
            pieces[i] = piece
            value += best
            fc[sl] -= piece[0]
            fm[sl] -= piece[1]
            if not piece[2]:
                fb[sl] -= q.b
        out.append((value, pieces))
    return out


class _Master:
    """The restricted master LP of the schedule bound (see :func:`schedule_bound`).

    Columns: a_i in [0, 1] (request i accepted), then one lambda_p >= 0 per schedule p of a
    server kind t. Rows (all <=): CPU_i: c_i a_i - sum_p c_ip lambda_p <= 0; MEM_i (memory,
    the same); CNT_i: need_i a_i - sum_p [i in p] lambda_p <= 0; SRV_t: sum of the lambdas of
    kind t <= number of servers of kind t; and the aggregate rows (:func:`aggregate_rows`) in
    the a_i.
    """

    def __init__(self, instance: Instance, kinds: list[tuple[int, int, float, int]],
                 need: list[int], agg: tuple[list[list[int]], list[list[float]], list[float]],
                 threads: int) -> None:
        import highspy

        self.n = n = len(instance.requests)
        self.T = T = len(kinds)
        self.h = h = solvers.highspy_model()
        h.setOptionValue("output_flag", False)
        solvers.prepare_highs(threads)
        h.setOptionValue("threads", threads)
        inf = highspy.kHighsInf
        aidx, acoef, arhs = agg
        n_row = 3 * n + T + len(arhs)
        upper = np.zeros(n_row)
        upper[3 * n:3 * n + T] = [float(k[3]) for k in kinds]
        upper[3 * n + T:] = arhs
        h.addRows(n_row, np.full(n_row, -inf), upper, 0, np.zeros(0, np.int32),
                  np.zeros(0, np.int32), np.zeros(0))
        cols: list[tuple[list[int], list[float]]] = [
            ([i, n + i, 2 * n + i], [float(r.c), float(r.m), float(need[i])])
            for i, r in enumerate(instance.requests)]
        for k, (ix, cf) in enumerate(zip(aidx, acoef, strict=True)):
            for i, v in zip(ix, cf, strict=True):
                cols[i][0].append(3 * n + T + k)
                cols[i][1].append(v)
        for ix, cf in cols:
            h.addCol(1.0, 0.0, 1.0, len(ix), np.asarray(ix, np.int32), np.asarray(cf))
        h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        self.inf = inf
        self.seen: set[tuple[Any, ...]] = set()

    def add(self, t: int, pieces: dict[int, tuple[float, float, bool]]) -> bool:
        """Add the schedule ``pieces`` of a server of kind ``t``; False if already there."""
        key = (t, tuple(sorted(pieces.items())))
        if key in self.seen:
            return False
        self.seen.add(key)
        n = self.n
        ix, cf = [3 * n + t], [1.0]
        for i, (c, m, _) in pieces.items():
            ix += [i, n + i, 2 * n + i]
            cf += [-float(c), -float(m), -1.0]
        self.h.addCol(0.0, 0.0, self.inf, len(ix), np.asarray(ix, np.int32), np.asarray(cf))
        return True

    def solve(self) -> tuple[float, np.ndarray]:
        """(LP value, row duals clipped at 0); the value is nan when the LP is not solved."""
        import highspy

        solvers.run_highspy(self.h)
        if self.h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return math.nan, np.zeros(self.h.getNumRow())
        y = np.asarray(self.h.getSolution().row_dual, dtype=float)
        return float(self.h.getInfo().objective_function_value), np.maximum(0.0, y)


class ScheduleOptions(AggregateOptions):
    """Options of the schedule bound."""

    greedy_rounds: int = pydantic.Field(
        30, ge=0, le=10_000, description="randomised greedy schedules tried per server kind "
        "before the exact pricing MIP (0: always the MIP)")
    price_seconds: float = pydantic.Field(
        20.0, gt=0, le=3600, description="seconds of one pricing MIP (a stopped MIP gives its "
        "dual bound: the Lagrangian bound stays valid, only weaker)")


def _lagrangian(u: np.ndarray, n: int, T: int, w0: np.ndarray, need: np.ndarray,
                cvec: np.ndarray, mvec: np.ndarray,
                agg: tuple[list[list[int]], list[list[float]], list[float]],
                kinds: list[tuple[int, int, float, int]], uppers: list[float]
                ) -> tuple[float, np.ndarray]:
    """The Lagrangian bound of :func:`schedule_bound` at multipliers u >= 0 (rows of
    :class:`_Master`), with the pricing upper bounds ``uppers``; and the request weights w."""
    pi, rho, nu = u[:n], u[n:2 * n], u[2 * n:3 * n]
    kap = u[3 * n + T:]
    w = w0 - pi * cvec - rho * mvec - nu * need
    red = w.copy()
    for k, (ix, cf) in enumerate(zip(agg[0], agg[1], strict=True)):
        if kap[k] > 0:
            red[ix] -= kap[k] * np.asarray(cf)
    value = float(np.maximum(red, 0.0).sum() + kap @ np.asarray(agg[2], dtype=float))
    value += sum(k[3] * max(0.0, ub) for k, ub in zip(kinds, uppers, strict=True))
    return value, w


def schedule_bound(instance: Instance, *, time_limit: float | None = None, threads: int = 1,
                   primal: bool = True, max_terms: int = MAX_TERMS, greedy_rounds: int = 30,
                   price_seconds: float = 20.0) -> BoundValue:
    """Upper bound on the accepted requests: per-server schedules (Dantzig-Wolfe).

    A *schedule* of a server is what it holds over the whole episode: for every request
    nothing, all of it (a request the server can hold alone: no bandwidth), or a piece
    (c', m') with c' + m' >= 1 of a request spread over several servers, which charges b on the
    server's access link for the request's whole holding period (no migration). At every step
    the pieces of the active requests fit the server's CPU, memory and access link. Pieces are
    relaxed to real amounts (a relaxation). Every allocation gives one schedule per server, so
    the program

        max sum_i a_i  s.t.  c_i a_i <= sum_p c_ip lambda_p,  m_i a_i <= sum_p m_ip lambda_p,
        need_i a_i <= sum_p [i in p] lambda_p,  sum_{p of kind t} lambda_p <= S_t,
        the aggregate rows in a,  0 <= a <= 1,  lambda >= 0

    over all schedules p is a relaxation of the episode (servers of one kind share one set of
    schedules; S_t servers of kind t). It is solved by column generation: a restricted master
    LP (HiGHS), columns from the servers of netfit's, Tetris's and NALB's allocations, then from
    randomised greedy schedules, then from an exact pricing MIP per kind (HiGHS). With
    multipliers u >= 0 of the master's rows (its duals), the Lagrangian bound

        sum_i max(0, 1 - u_i' A_i) + u_agg' r_agg + sum_t S_t max(0, P_t(u))

    (A_i: the column of a_i, r_agg: the aggregate right-hand sides, P_t(u): the pricing
    problem's optimum, replaced by HiGHS's dual bound of the pricing MIP) bounds the program
    for *any* u >= 0, so a stop at any time is safe; it is evaluated after every exact pricing
    and the smallest is kept. At the end the multipliers of the smallest are used once more with
    the acceptances integral (the aggregate 0-1 program with weights 1 - u_i' A_i). The result
    is also capped by :func:`aggregate_bound`.

    Parameters
    ----------
    instance : Instance
        A Nara episode.
    time_limit : float, optional
        Seconds in all (default :data:`SCHEDULE_SECONDS`); about a fifth goes to the aggregate
        bound, the greedy phase stops at half the time.
    threads : int
        HiGHS threads.
    primal : bool
        Also return netfit's allocation as the solution found on the way.
    max_terms : int
        Nonzeros of the aggregate rows (see :func:`aggregate_rows`).
    greedy_rounds : int
        Randomised greedy schedules per kind and iteration (0: exact pricing only).
    price_seconds : float
        Time limit of one pricing MIP.

    Returns
    -------
    BoundValue
        ``bound``: floor of the safe smallest bound (objective values are integers);
        metrics ``lagrangian`` (the smallest Lagrangian value), ``master`` (the last
        restricted master LP value: not a bound unless ``converged``), ``aggregate`` (the
        aggregate bound), ``converged`` (1 when an exact pricing proved no column improves the
        master), ``columns``, ``iterations``, ``exact_pricings``.

    References
    ----------
    Paper 001 (Shabka, Zervas), sections 3.1-3.2; G. Desaulniers, J. Desrosiers and M. M.
    Solomon (eds.), *Column Generation*, Springer, 2005 (Dantzig-Wolfe decomposition, the
    Lagrangian bound at any iteration); M. E. Luebbecke and J. Desrosiers, "Selected topics in
    column generation", Oper. Res. 53 (2005) 1007-1023; A. M. Geoffrion, "Lagrangean
    relaxation for integer programming", Math. Program. Study 2 (1974) 82-114.
    """
    import time

    start = time.monotonic()
    budget = float(time_limit or SCHEDULE_SECONDS)
    deadline = start + budget
    reqs = instance.requests
    n = len(reqs)
    agg_res = aggregate_bound(instance, time_limit=max(0.2 * budget, 1e-6), threads=threads,
                              primal=False, max_terms=max_terms)
    best_value = float(agg_res.bound)
    kinds = _server_types(instance)
    T = len(kinds)
    steps = _maximal_steps(instance)
    end = _spans(instance)
    max_c = max(max(k[0] for k in kinds), 1)
    max_m = max(max(k[1] for k in kinds), 1)
    need = np.array([max(-(-r.c // max_c), -(-r.m // max_m), 1) for r in reqs], dtype=float)
    cvec = np.array([r.c for r in reqs], dtype=float)
    mvec = np.array([r.m for r in reqs], dtype=float)
    agg = aggregate_rows(instance, max_terms=max_terms)
    master = _Master(instance, kinds, [int(x) for x in need], agg, threads)
    netfit = None
    for allocate in map(heuristic, SCHEDULE_HEURISTICS):  # declared in BOUNDS["schedule"]
        if time.monotonic() > deadline:
            break
        sol = allocate(instance)
        netfit = sol if netfit is None else netfit
        for t, pieces in _allocation_columns(instance, sol, kinds):
            master.add(t, pieces)
    rng = np.random.default_rng(0)
    w0 = np.ones(n)
    lagr, best_u, best_ub = math.inf, None, None
    it = n_exact = 0
    converged = False
    mv = math.nan
    greedy_until = start + 0.5 * budget
    while time.monotonic() < deadline:
        it += 1
        mv, u = master.solve()
        if not math.isfinite(mv):
            break
        pi, rho, nu = u[:n], u[n:2 * n], u[2 * n:3 * n]
        sigma = u[3 * n:3 * n + T]
        added = 0
        if greedy_rounds and time.monotonic() < greedy_until:
            for t, kind in enumerate(kinds):
                found = _greedy_schedules(instance, end, kind, pi, rho, nu, rng, greedy_rounds)
                for val, pieces in sorted(found, key=lambda x: -x[0])[:5]:
                    if val > sigma[t] + 1e-7:
                        added += master.add(t, pieces)
        if added:
            continue
        uppers, proven = [], True
        n_exact += 1
        for t, kind in enumerate(kinds):
            left = deadline - time.monotonic()
            val, ub, pieces, optimal = _price(instance, steps, kind, pi, rho, nu,
                                              time_limit=min(price_seconds, max(left, 1e-3)),
                                              threads=threads)
            uppers.append(ub)
            proven = proven and optimal
            if val > sigma[t] + 1e-7:
                added += master.add(t, pieces)
        value, _ = _lagrangian(u, n, T, w0, need, cvec, mvec, agg, kinds, uppers)
        if value < lagr:
            lagr, best_u, best_ub = value, u.copy(), list(uppers)
        if not added and proven:
            converged = True
            break
        if not added and time.monotonic() < deadline:
            break  # a stopped pricing found nothing better: more time would not help here
    if best_u is not None and time.monotonic() < deadline:
        # the best multipliers once more, with the acceptances integral
        _, w = _lagrangian(best_u, n, T, w0, need, cvec, mvec, agg, kinds, best_ub)
        status, _, dual = _solve_rows(n, agg, integer=True, cost=w, threads=threads,
                                      time_limit=deadline - time.monotonic())
        if math.isfinite(dual) and status in solvers.DUAL_BOUND_STATUSES:
            value = dual + sum(k[3] * max(0.0, ub) for k, ub in zip(kinds, best_ub, strict=True))
            lagr = min(lagr, value)
    if math.isfinite(lagr):
        best_value = min(best_value, float(math.floor(safe(lagr, SENSE))))
    metrics = {"lagrangian": lagr if math.isfinite(lagr) else float(agg_res.bound),
               "master": mv if math.isfinite(mv) else 0.0, "aggregate": float(agg_res.bound),
               "converged": float(converged), "columns": float(len(master.seen)),
               "iterations": float(it), "exact_pricings": float(n_exact)}
    solution = (netfit if netfit is not None else _primal(instance)) if primal else None
    return BoundValue(best_value, solution=solution, metrics=metrics)


def _schedule_estimate(instance: Instance, options: Any) -> Size:
    # the aggregate bound, then a master of up to ~ columns x pieces and pricing MIPs of
    # 4 columns per request and 3 rows per step
    base = _aggregate_estimate(instance, options)
    n = float(len(instance.requests))
    steps = float(sum(min(r.t, n) for r in instance.requests))
    return Size(memory=base.memory + 2000.0 * n * n + 200.0 * steps,
                work=base.work + 1e5 * n * n + 1e4 * steps)
