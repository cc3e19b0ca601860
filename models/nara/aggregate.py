"""Nara (paper 001): the ``aggregate`` and ``aggregate-lp`` upper bounds on the accepted
requests: a 0-1 program (and its LP relaxation) in the acceptance variables only, with the
per-step rows of :func:`aggregate_rows` (derived in :mod:`dmlopt.models.nara.bounds`, whose
registry holds these bounds)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pydantic

from dmlopt import solvers
from dmlopt.bounds import safe
from dmlopt.contract import BoundValue, Options, Size
from dmlopt.errors import SolverError
from dmlopt.models.nara.constants import BW_TOL, NAME, SENSE
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


#: the primal heuristic of the bounds that return a solution (their ``Bound.heuristics``)
PRIMAL = "netfit"


def heuristic(name: str) -> Callable[..., Any]:
    """The function of the Nara heuristic ``name``, one a bound declares in its
    ``Bound.heuristics`` (tests/nara/test_bound_heuristics.py checks that each bound's solution
    is its declared heuristic's).

    Parameters
    ----------
    name : str
        A name in ``dmlopt.heuristics.nara.HEURISTICS``.

    Returns
    -------
    callable
        ``function(instance, **options) -> Solution``, resolved at call time through the
        registry: a model module imports no heuristics module (heuristics build on the models;
        tests/core/test_house.py).

    References
    ----------
    Ours (docs/architecture.md, the BOUNDS row of the contract table).
    """
    from dmlopt import registry

    return registry.get(NAME).heuristic(name).function


def _primal(instance: Instance) -> Any:
    """The solution of the declared primal heuristic :data:`PRIMAL` on ``instance`` (the core
    evaluates it)."""
    return heuristic(PRIMAL)(instance)


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
