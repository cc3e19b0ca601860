"""Upper bounds on the accepted requests of a Nara episode (paper 001), all requests known.

Every online allocator, and the offline optimum of formulation ``"offline"``, accepts at most
what these bounds say.

``"aggregate"`` (the default, the strongest that scales): a 0-1 program in the acceptance
variables only (one per request), solved by HiGHS's branch and bound. At every step (section
3.2: request j arrives at step j; the requests with i <= j < i + t_i hold their resources) the
accepted active requests must fit the data centre *as a whole*:

* CPU and memory: sum c_i <= total CPU, sum m_i <= total memory (constraints 1-2 of section
  3.1 summed over the servers);
* server access links: a request that no single server can hold uses at least
  need_i = max(ceil(c_i / max CPU), ceil(m_i / max memory)) servers and charges b_i on the
  access link of each (constraint 3, charging rule of :mod:`dmlopt.models.nara`). On one server
  the charges sum to at most its capacity, so for every dual-feasible function f (a function
  f: [0, 1] -> [0, 1] with sum f(x_k) <= 1 whenever sum x_k <= 1) the sum over accepted active
  requests of need_i f(b_i / capacity) is at most the number of servers (Fekete and Schepers'
  f_0^eps and u^(k); f(x) = x gives the plain bandwidth row);
* rack uplinks: a request larger than any rack (CPU or memory) uses at least
  ceil(c_i / max rack CPU) (or memory) racks and charges b_i on at least one uplink of each
  (a link of the rack switch that does not go to a server): sum of racks_i b_i <= the summed
  uplink capacity.

Relaxed: which server holds what, migration over time (a request may "move" between steps),
paths. Valid at any stop: HiGHS's dual bound of the 0-1 program is an upper bound on its
optimum, which is an upper bound on the episode's. Objective values are integers, so the bound
is rounded down after the safety margin of :func:`dmlopt.bounds.safe`.

``"cover"``: the same 0-1 program with cover cuts, sum of acc_i over S <= |S| - 1 for sets S of
its selection's active requests that are proven not to fit the empty data centre at once; it is
solved again until no set of the selection is proven infeasible or the time is spent
(:mod:`dmlopt.models.nara.fitcuts`). Never above ``"aggregate"`` (its first round).
``"aggregate-lp"``: the LP relaxation of the same rows (no branching; weaker, milliseconds).
``"mip"`` and ``"lp"``: the generic dual bound and LP relaxation of formulation ``"offline"``
(:mod:`dmlopt.bounds`); the MILP grows with requests x servers x candidate paths and is only
practical for short episodes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pydantic

from dmlopt import solvers
from dmlopt.bounds import lp_relaxation, mip_bound, safe
from dmlopt.contract import Bound, BoundValue, Options, Size
from dmlopt.errors import SolverError
from dmlopt.models.nara.constants import BW_TOL, NAME, SENSE
from dmlopt.models.nara.fitcuts import cover_bound
from dmlopt.models.nara.instance import Instance

#: bandwidth slack per link in the rows (the evaluator allows BW_TOL; twice that, to be safe)
_SLACK = 2 * BW_TOL

#: seconds the aggregate 0-1 program runs when no time limit is given
AGGREGATE_SECONDS = 60.0

#: nonzeros of the aggregate rows above which only every k-th step keeps its rows
MAX_TERMS = 4_000_000

#: shift of a scaled bandwidth before a dual-feasible function is applied (downwards: a smaller
#: coefficient only weakens a row, so rounding can never make it invalid)
_SHIFT = 1e-9


def _f0(eps: float) -> Callable[[float], float]:
    """Fekete-Schepers f_0^eps: 1 above 1 - eps, x on [eps, 1 - eps], 0 below eps."""

    def f(x: float) -> float:
        if x > 1 - eps:
            return 1.0
        return x if x >= eps else 0.0

    return f


def _uk(k: int) -> Callable[[float], float]:
    """Fekete-Schepers u^(k): x if (k + 1) x is an integer, else floor((k + 1) x) / k."""

    def f(x: float) -> float:
        y = (k + 1) * x
        return x if y == math.floor(y) else math.floor(y) / k

    return f


#: the dual-feasible functions whose access-link rows are added (f(x) = x first)
DFFS: tuple[Callable[[float], float], ...] = (
    (lambda x: x),
    *(_f0(e) for e in (0.1, 0.2, 0.3, 0.4, 0.5)),
    *(_uk(k) for k in (1, 2, 3)),
)


def aggregate_rows(instance: Instance, dffs: tuple[Callable[[float], float], ...] = DFFS,
                   max_terms: int = 0) -> tuple[list[list[int]], list[list[float]], list[float]]:
    """The rows of the aggregate relaxation (module docstring) in the acceptance variables.

    Parameters
    ----------
    instance : Instance
        A Nara episode.
    dffs : tuple of callables
        Dual-feasible functions of the access-link rows; f(x) = x is the plain bandwidth row.
    max_terms : int
        At most about this many nonzeros (0: :data:`MAX_TERMS`): above it only every k-th
        step keeps its rows (any subset of the rows is still a relaxation, a weaker one).

    Returns
    -------
    (index, coef, rhs)
        Row k reads sum_q coef[k][q] * acc[index[k][q]] <= rhs[k]; only the rows of the steps
        whose active set is not contained in the next step's (the others are implied), thinned
        to ``max_terms``.

    References
    ----------
    Paper 001 (Shabka, Zervas), section 3.1 (constraints 1-3) and 3.2 (time); S. P. Fekete and
    J. Schepers, "New classes of fast lower bounds for bin packing problems", Math. Program.
    91 (2001) 11-31 (dual-feasible functions f_0^eps and u^(k)).
    """
    max_terms = max_terms or MAX_TERMS
    net = instance.net
    reqs = instance.requests
    S = net.n_servers
    max_c, max_m = max(int(net.cpu.max()), 1), max(int(net.mem.max()), 1)
    need = [max(-(-r.c // max_c), -(-r.m // max_m), 1) for r in reqs]
    # access links: scale by the largest capacity (a smaller one only holds less)
    acc_cap = np.array([float(net.cap[int(net.access[s])]) for s in range(S)])
    unit = float(acc_cap.max()) + _SLACK
    n_srv = float(np.count_nonzero(acc_cap > 0))
    plain_rhs = float(np.sum(np.where(acc_cap > 0, acc_cap + _SLACK, 0.0))) / unit
    # racks: uplinks are the links of a rack switch that do not go to a server
    rack_of = {int(v): r for r, v in enumerate(net.rack_node)}
    server_links = {int(e) for e in net.access}
    up_cap = np.zeros(net.n_racks)
    for e, (a, b) in enumerate(zip(net.link_u.tolist(), net.link_v.tolist(), strict=True)):
        if e in server_links:
            continue
        for node in (a, b):
            if node in rack_of:
                up_cap[rack_of[node]] += float(net.cap[e]) + _SLACK
    rack_c = max(max(int(net.cpu[s].sum()) for s in net.rack_servers), 1)
    rack_m = max(max(int(net.mem[s].sum()) for s in net.rack_servers), 1)
    racks = [max(-(-r.c // rack_c), -(-r.m // rack_m), 1) for r in reqs]

    active = instance.active_sets()
    index: list[list[int]] = []
    coef: list[list[float]] = []
    rhs: list[float] = []
    n = len(reqs)
    steps = [j for j, act in enumerate(active)
             if act and not (j + 1 < n and set(act) <= set(active[j + 1]))]
    terms = sum(len(active[j]) for j in steps) * (3 + len(dffs))
    stride = max(1, -(-terms // max_terms))
    for j in steps[::stride]:
        act = active[j]
        index += [list(act), list(act)]
        coef += [[float(reqs[i].c) for i in act], [float(reqs[i].m) for i in act]]
        rhs += [float(net.cpu.sum()), float(net.mem.sum())]
        multi = [i for i in act if need[i] >= 2 and reqs[i].b > 0]
        for q, f in enumerate(dffs):
            if not multi:
                break
            vals = [need[i] * f(max(0.0, reqs[i].b / unit - _SHIFT)) for i in multi]
            if q > 0 and max(vals) <= 0:
                continue
            index.append(multi)
            coef.append(vals)
            rhs.append(plain_rhs if q == 0 else n_srv)
        wide = [i for i in act if racks[i] >= 2 and reqs[i].b > 0]
        if wide:
            index.append(wide)
            coef.append([racks[i] * reqs[i].b for i in wide])
            rhs.append(float(up_cap.sum()))
    # a request whose coefficient is above a row's right-hand side is rejected by that row
    # whatever the coefficient (all are >= 0); rhs + 1 keeps the 0-1 program's feasible set,
    # only loosens its LP, and keeps HiGHS from refusing coefficients of 1e15 or more
    coef = [[min(v, r + 1.0) for v in row] for row, r in zip(coef, rhs, strict=True)]
    return index, coef, rhs


def binary_program(n: int, rows: tuple[list[list[int]], list[list[float]], list[float]], *,
                   time_limit: float, threads: int, integer: bool = True,
                   cost: np.ndarray | None = None, sense: str = "max",
                   lower: list[float] | None = None) -> Any:
    """Build and run, with HiGHS, the program over n variables in [0, 1] (0-1 when
    ``integer``) with the sparse rows ``lower <= sum coef x <= rhs``.

    Parameters
    ----------
    n : int
        Number of variables (one per request).
    rows : tuple
        (column indices per row, coefficients per row, right-hand sides).
    time_limit : float
        Seconds (at least 1 ms is asked).
    threads : int
        HiGHS threads.
    integer : bool, optional
        0-1 variables (default) or their LP relaxation.
    cost : numpy.ndarray or None, optional
        Objective coefficients (default: all ones).
    sense : {"max", "min"}, optional
        Direction of the objective (default "max").
    lower : list of float or None, optional
        Left-hand sides per row (default: none).

    Returns
    -------
    highspy.Highs
        The model after the run (status, solution and dual bound to read).

    References
    ----------
    Ours.
    """
    import highspy

    index, coef, rhs = rows
    h = solvers.highspy_model()
    solvers.prepare_highs(threads)
    h.setOptionValue("threads", threads)
    h.setOptionValue("time_limit", float(max(time_limit, 1e-3)))
    lp = highspy.HighsLp()
    lp.num_col_ = n
    lp.num_row_ = len(rhs)
    lp.col_cost_ = np.ones(n) if cost is None else np.asarray(cost, dtype=float)
    lp.col_lower_ = np.zeros(n)
    lp.col_upper_ = np.ones(n)
    lp.row_lower_ = (np.full(len(rhs), -highspy.kHighsInf) if lower is None
                     else np.asarray(lower, dtype=float))
    lp.row_upper_ = np.asarray(rhs, dtype=float)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.cumsum([0] + [len(r) for r in index]).astype(np.int32)
    lp.a_matrix_.index_ = np.asarray([i for r in index for i in r], dtype=np.int32)
    lp.a_matrix_.value_ = np.asarray([v for r in coef for v in r], dtype=float)
    lp.sense_ = highspy.ObjSense.kMaximize if sense == "max" else highspy.ObjSense.kMinimize
    if integer:
        lp.integrality_ = [highspy.HighsVarType.kInteger] * n
    solvers.pass_model(h, lp)
    solvers.run_highspy(h)
    return h


def _solve_rows(n: int, rows: tuple[list[list[int]], list[list[float]], list[float]], *,
                integer: bool, time_limit: float, threads: int,
                cost: np.ndarray | None = None) -> tuple[str, float, float]:
    """Maximise sum acc (or cost' acc) over the rows with HiGHS; (status, objective, dual
    bound)."""
    h = binary_program(n, rows, time_limit=time_limit, threads=threads, integer=integer,
                       cost=cost)
    status = h.modelStatusToString(h.getModelStatus())
    info = h.getInfo()
    if integer:
        return status, float(info.objective_function_value), float(info.mip_dual_bound)
    return status, float(info.objective_function_value), float(info.objective_function_value)


class AggregateOptions(Options):
    """Options of the aggregate bounds."""

    threads: int = pydantic.Field(1, ge=1, le=solvers.MAX_THREADS, description="HiGHS threads")
    primal: bool = pydantic.Field(
        True, description="also run the netfit allocator and return its solution (the core "
        "evaluates it: the result then has an objective and a gap)")
    max_terms: int = pydantic.Field(
        MAX_TERMS, ge=1000, le=10**9, description="nonzeros of the rows; above it only every "
        "k-th step keeps its rows (a weaker, still valid bound)")


def _allocator(name: str) -> Callable[[Instance], Any]:
    """The Nara heuristic ``name`` (an online allocator, a primal solution), found through the
    registry: the model modules import no heuristics module."""
    from dmlopt import registry

    return registry.get(NAME).heuristic(name).function


def _primal(instance: Instance) -> Any:
    return _allocator("netfit")(instance)


def _count_bound(instance: Instance) -> int:
    """Requests that fit the empty data centre's total CPU and memory (a trivial bound)."""
    net = instance.net
    c, m = int(net.cpu.sum()), int(net.mem.sum())
    return sum(1 for r in instance.requests if r.c <= c and r.m <= m)


def aggregate_bound(instance: Instance, *, time_limit: float | None = None, threads: int = 1,
                    primal: bool = True, max_terms: int = MAX_TERMS) -> BoundValue:
    """Upper bound on the accepted requests: the aggregate 0-1 program (module docstring).

    Parameters
    ----------
    instance : Instance
        A Nara episode.
    time_limit : float, optional
        Seconds for HiGHS (default :data:`AGGREGATE_SECONDS`); a stopped search still gives its
        dual bound.
    threads : int
        HiGHS threads.
    primal : bool
        Also return netfit's allocation as the solution found on the way.
    max_terms : int
        Nonzeros of the rows (see :func:`aggregate_rows`).

    Returns
    -------
    BoundValue
        ``bound``: floor of the safe dual bound (objective values are integers), at most the
        number of requests that fit the empty data centre; metrics ``dual_bound``,
        ``incumbent`` (the 0-1 program's, not an allocation), ``proven`` (1 when the 0-1
        program was solved), ``rows``.

    References
    ----------
    Paper 001 (Shabka, Zervas), sections 3.1-3.2; Fekete and Schepers, Math. Program. 91 (2001)
    (dual-feasible functions); Wolsey, *Integer Programming* (2nd ed., 2020), section 2.2
    (relaxations give bounds).
    """
    rows = aggregate_rows(instance, max_terms=max_terms)
    n = len(instance.requests)
    trivial = float(_count_bound(instance))
    status, obj, dual = _solve_rows(n, rows, integer=True,
                                    time_limit=time_limit or AGGREGATE_SECONDS, threads=threads)
    value = trivial
    if math.isfinite(dual) and status in solvers.DUAL_BOUND_STATUSES:
        value = min(trivial, math.floor(safe(dual, SENSE)))
    metrics = {"dual_bound": dual if math.isfinite(dual) else trivial,
               "incumbent": obj if math.isfinite(obj) else 0.0,
               "proven": float(status == "Optimal"), "rows": float(len(rows[2]))}
    return BoundValue(float(value), solution=_primal(instance) if primal else None,
                      metrics=metrics)


def aggregate_lp_bound(instance: Instance, *, time_limit: float | None = None,
                       threads: int = 1, primal: bool = True,
                       max_terms: int = MAX_TERMS) -> BoundValue:
    """Upper bound on the accepted requests: the LP relaxation of :func:`aggregate_bound`.

    Parameters
    ----------
    instance : Instance
        A Nara episode.
    time_limit : float, optional
        Seconds for HiGHS's simplex (default :data:`AGGREGATE_SECONDS`).
    threads : int
        HiGHS threads.
    primal : bool
        Also return netfit's allocation as the solution found on the way.
    max_terms : int
        Nonzeros of the rows (see :func:`aggregate_rows`).

    Returns
    -------
    BoundValue
        ``bound``: floor of the safe LP optimum; metric ``lp_value``.

    Raises
    ------
    SolverError
        When the LP is not solved to optimality (no bound).

    References
    ----------
    Paper 001 (Shabka, Zervas), sections 3.1-3.2; Wolsey, *Integer Programming* (2nd ed.,
    2020), section 2.2.
    """
    rows = aggregate_rows(instance, max_terms=max_terms)
    n = len(instance.requests)
    status, obj, _ = _solve_rows(n, rows, integer=False,
                                 time_limit=time_limit or AGGREGATE_SECONDS, threads=threads)
    if status != "Optimal" or not math.isfinite(obj):
        raise SolverError(f"bound: the aggregate LP ended {status!r}: no bound")
    value = min(float(_count_bound(instance)), math.floor(safe(obj, SENSE)))
    return BoundValue(float(value), solution=_primal(instance) if primal else None,
                      metrics={"lp_value": obj, "rows": float(len(rows[2]))})


def _aggregate_estimate(instance: Instance, options: Any) -> Size:
    # rows: about (3 + len(DFFS)) per step, each over the requests active then, capped
    n = len(instance.requests)
    terms = float(sum(min(r.t, n) for r in instance.requests)) * (3 + len(DFFS))
    terms = min(terms, float(getattr(options, "max_terms", MAX_TERMS)))
    return Size(memory=100.0 * terms + 1000.0 * n, work=500.0 * terms + 1e4 * n)


# --------------------------------------------------------------------------------------------
# per-server schedules: Dantzig-Wolfe column generation


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
    for allocate in map(_allocator, ("netfit", "tetris", "nalb")):
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


class CoverOptions(AggregateOptions):
    """Options of the cover bound (:mod:`dmlopt.models.nara.fitcuts`)."""

    fit_seconds: float = pydantic.Field(
        5.0, gt=0, le=3600, description="seconds of one fit proof (the schedule bound of the "
        "one-step episode of a set; a stopped proof only proves less)")
    shrink: bool = pydantic.Field(
        True, description="shrink every set proven not to fit to a minimal cover (deletion "
        "filter) before its cut is added")


def _cover_estimate(instance: Instance, options: Any) -> Size:
    # rounds of the aggregate 0-1 program plus one small schedule bound per set checked
    base = _aggregate_estimate(instance, options)
    n = float(len(instance.requests))
    return Size(memory=base.memory + 2000.0 * n * n, work=20.0 * base.work + 1e5 * n * n)


#: the bound methods, strongest first (module docstring)
BOUNDS: dict[str, Bound] = {
    "aggregate": Bound(aggregate_bound, AggregateOptions, _aggregate_estimate,
                       "0-1 program in the acceptances: per-step total CPU, memory, access-link "
                       "(dual-feasible functions) and rack-uplink rows (HiGHS)"),
    "schedule": Bound(schedule_bound, ScheduleOptions, _schedule_estimate,
                      "per-server schedules over time (Dantzig-Wolfe column generation, "
                      "Lagrangian bound at any stop) with the aggregate rows (HiGHS)"),
    "cover": Bound(cover_bound, CoverOptions, _cover_estimate,
                   "aggregate with cover cuts of the selected sets proven not to fit the data "
                   "centre at once (fit proofs by the schedule bound of a one-step episode)"),
    "mip": mip_bound("offline"),
    "lp": lp_relaxation("offline"),
    "aggregate-lp": Bound(aggregate_lp_bound, AggregateOptions, _aggregate_estimate,
                          "LP relaxation of the aggregate bound's rows (HiGHS)"),
}
