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
from dmlopt.models.nara.constants import BW_TOL, SENSE
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
    return index, coef, rhs


def _solve_rows(n: int, rows: tuple[list[list[int]], list[list[float]], list[float]], *,
                integer: bool, time_limit: float, threads: int) -> tuple[str, float, float]:
    """Maximise sum acc over the rows with HiGHS; (status, objective, dual bound)."""
    import highspy

    index, coef, rhs = rows
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    solvers.prepare_highs(threads)
    h.setOptionValue("threads", threads)
    h.setOptionValue("time_limit", float(time_limit))
    lp = highspy.HighsLp()
    lp.num_col_ = n
    lp.num_row_ = len(rhs)
    lp.col_cost_ = np.ones(n)
    lp.col_lower_ = np.zeros(n)
    lp.col_upper_ = np.ones(n)
    lp.row_lower_ = np.full(len(rhs), -highspy.kHighsInf)
    lp.row_upper_ = np.asarray(rhs, dtype=float)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.cumsum([0] + [len(r) for r in index]).astype(np.int32)
    lp.a_matrix_.index_ = np.asarray([i for r in index for i in r], dtype=np.int32)
    lp.a_matrix_.value_ = np.asarray([v for r in coef for v in r], dtype=float)
    lp.sense_ = highspy.ObjSense.kMaximize
    if integer:
        lp.integrality_ = [highspy.HighsVarType.kInteger] * n
    h.passModel(lp)
    h.run()
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


def _primal(instance: Instance) -> Any:
    from dmlopt.heuristics.nara import allocate_netfit

    return allocate_netfit(instance)


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
    if math.isfinite(dual) and status not in ("Infeasible", "Not Set", "Load error",
                                              "Model error", "Solve error"):
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


#: the bound methods, strongest first (module docstring)
BOUNDS: dict[str, Bound] = {
    "aggregate": Bound(aggregate_bound, AggregateOptions, _aggregate_estimate,
                       "0-1 program in the acceptances: per-step total CPU, memory, access-link "
                       "(dual-feasible functions) and rack-uplink rows (HiGHS)"),
    "mip": mip_bound("offline"),
    "lp": lp_relaxation("offline"),
    "aggregate-lp": Bound(aggregate_lp_bound, AggregateOptions, _aggregate_estimate,
                          "LP relaxation of the aggregate bound's rows (HiGHS)"),
}
