"""INC/OXC (paper 002): the exact bisection ``bisection``, what ``dmlopt.solve`` runs by default.

At a fixed f every rate is a_i f, so "some static solution reaches f" is a feasibility MILP
(:func:`dmlopt.models.inc_oxc.bounds.fixed_f_model`); the optimum f* of the paper's model is the
largest f at which it is feasible. :func:`bisect_placements` searches f with these MILPs:

* a feasible MILP gives a placement and circuits; the evaluator's closed form (the best f of
  that placement, :func:`dmlopt.models.inc_oxc.evaluation.best_f`) is the lower end, usually
  above the f asked, and the next MILP asks just above it;
* an infeasible one (proven by HiGHS or SCIP) is the upper end; the search ends when the two
  are within ``precision`` (relative), and the lower end's solution is then optimal within it.

Under a time limit a MILP near f* can take most of the time either way (proving infeasibility
just above f*, or finding a placement just below it). The step just above the lower end (the
one that proves it optimal) may take all the time left; every other step (the ``jobs`` bound
itself, the steps down to a first placement, a geometric middle) gets a share ``probe`` of the
time limit, and one that stops undecided proves nothing: neither end moves, and its f becomes
the top of the range the next steps search below. When HiGHS has not decided the step just
above the lower end within its share, SCIP gets the time left for it (option ``fallback``):
on the hardest of these infeasibility proofs it needs about half HiGHS's time, while HiGHS is
faster on the easy ones. The upper end comes only from
infeasibility proofs (and the ``jobs`` bound it starts from), so the result is a valid bound at
any stop; the lower end only from evaluated placements.
"""

from __future__ import annotations

import math
import os
import time
from typing import Any, Literal

import pydantic

from dmlopt import solvers
from dmlopt.bounds import safe
from dmlopt.contract import Bound, BoundValue, Options, Size
from dmlopt.models.inc_oxc.bounds import BOUNDS as _BOUNDS
from dmlopt.models.inc_oxc.bounds import (
    _placements_estimate,
    _reached,
    fixed_f_model,
    jobs_bound,
)
from dmlopt.models.inc_oxc.constants import SENSE
from dmlopt.models.inc_oxc.instance import Instance

#: outcomes of one fixed-f MILP
FEASIBLE, INFEASIBLE, UNDECIDED = "feasible", "infeasible", "undecided"


class BisectionOptions(Options):
    """Options of the exact bisection (``bisection``)."""

    precision: float = pydantic.Field(
        default=1e-5, gt=0, le=0.5,
        description="relative width of the final bracket on f")
    probe: float = pydantic.Field(
        default=0.1, gt=0, le=1,
        description="share of the time limit one fixed-f MILP gets before it is set aside "
                    "undecided (the step just above the lower end gets all that is left)")
    fallback: Literal["scip", "none"] = pydantic.Field(
        default="scip",
        description="solver the step just above the lower end is handed to when HiGHS has "
                    "not decided it within its share ('none': HiGHS takes all the time left)")


def classify(h: Any) -> str:
    """The outcome of a fixed-f MILP HiGHS has run: ``"infeasible"`` only when HiGHS proved it,
    ``"feasible"`` when it holds a feasible point, else ``"undecided"`` (a time limit, an
    interrupt, a numerical failure: nothing is proven).

    Parameters
    ----------
    h : highspy.Highs
        A model after ``run``.

    Returns
    -------
    str
        One of :data:`FEASIBLE`, :data:`INFEASIBLE`, :data:`UNDECIDED`.

    References
    ----------
    Ours (HiGHS's model status and primal solution status).
    """
    if h.modelStatusToString(h.getModelStatus()) == "Infeasible":
        return INFEASIBLE
    if h.getInfo().primal_solution_status == 2:
        return FEASIBLE
    return UNDECIDED


def scip_copy(h: Any) -> tuple[Any, list]:
    """The MILP held by a HiGHS model, rebuilt in SCIP (one thread, no output).

    Parameters
    ----------
    h : highspy.Highs
        A model whose LP (bounds, matrix, integrality, costs) is set.

    Returns
    -------
    tuple
        (pyscipopt.Model, its variables in HiGHS's column order).

    References
    ----------
    Ours.
    """
    import highspy
    import pyscipopt

    lp = h.getLp()
    inf = highspy.kHighsInf
    m = pyscipopt.Model()
    m.hideOutput(True)
    m.setParam("parallel/maxnthreads", 1)
    integ = list(lp.integrality_) or [highspy.HighsVarType.kContinuous] * lp.num_col_

    def bound(v: float) -> float | None:
        return None if abs(v) >= inf else float(v)

    xs = [m.addVar(lb=bound(lp.col_lower_[j]), ub=bound(lp.col_upper_[j]),
                   vtype="I" if integ[j] == highspy.HighsVarType.kInteger else "C",
                   obj=float(lp.col_cost_[j])) for j in range(lp.num_col_)]
    rows: list[list[tuple[int, float]]] = [[] for _ in range(lp.num_row_)]
    a = lp.a_matrix_
    if a.format_ == highspy.MatrixFormat.kColwise:
        for j in range(lp.num_col_):
            for k in range(a.start_[j], a.start_[j + 1]):
                rows[a.index_[k]].append((j, float(a.value_[k])))
    else:
        for r in range(lp.num_row_):
            rows[r] = [(int(a.index_[k]), float(a.value_[k]))
                       for k in range(a.start_[r], a.start_[r + 1])]
    for r, entries in enumerate(rows):
        expr = pyscipopt.quicksum(v * xs[j] for j, v in entries)
        lo, hi = bound(lp.row_lower_[r]), bound(lp.row_upper_[r])
        if lo is not None:
            m.addCons(expr >= lo)
        if hi is not None:
            m.addCons(expr <= hi)
    return m, xs


class _Values:
    """A solved SCIP copy's point, read as :func:`_reached` reads a HiGHS model's."""

    def __init__(self, values: list[float]) -> None:
        self.col_value = values

    def getSolution(self) -> _Values:  # noqa: N802 (HiGHS's name)
        return self


def _run_scip(h: Any, budget: float | None) -> tuple[str, Any]:
    """Run the fixed-f MILP ``h`` with SCIP instead: (outcome, the point as ``_reached`` reads
    it, or None). Infeasible only on SCIP's proof; an interrupt is re-raised. SCIP runs in a
    forked child where there is one (``solvers.forked``): if it ends that process, the step
    stays undecided."""
    if not hasattr(os, "fork"):
        return _scip_step(h, budget)
    try:
        return solvers.forked(lambda: _scip_step(h, budget))
    except solvers.Crashed:
        return UNDECIDED, None


def _scip_step(h: Any, budget: float | None) -> tuple[str, Any]:
    m, xs = scip_copy(h)
    if budget is not None:
        m.setParam("limits/time", min(float(max(budget, 1e-3)), solvers.SCIP_MAX_SECONDS))
    m.optimize()
    status = m.getStatus()
    if status == "userinterrupt":
        raise KeyboardInterrupt
    if status == "infeasible":
        return INFEASIBLE, None
    if m.getNSols() > 0:
        best = m.getBestSol()
        return FEASIBLE, _Values([best[x] for x in xs])
    return UNDECIDED, None


def _run(instance: Instance, f: float, budget: float | None,
         solver: str = "highs") -> tuple[str, Any, list]:
    """Build and run the static fixed-f MILP at f within ``budget`` seconds (None: no limit)
    with HiGHS or SCIP."""
    h, layout = fixed_f_model(instance, f, static=True)
    if solver == "scip":
        outcome, point = _run_scip(h, budget)
        return outcome, point, layout
    if budget is not None:
        h.setOptionValue("time_limit", float(max(budget, 1e-3)))
    solvers.run_highspy(h)
    return classify(h), h, layout


def _decide(instance: Instance, f: float, budget: float | None, share: float | None,
            fallback: str, deadline: float | None) -> tuple[str, Any, list, int]:
    """Run the fixed-f MILP at f: HiGHS alone within ``budget``, or, when a ``share`` smaller
    than the budget is given and a ``fallback`` named, HiGHS within the share and then, if it
    has not decided, the fallback solver until the deadline. Returns the outcome, the solved
    model (or point), the layout and 1 when the fallback ran."""
    if fallback == "none" or share is None or budget is None or budget <= share:
        return (*_run(instance, f, budget), 0)
    outcome, h, layout = _run(instance, f, share)
    rest = None if deadline is None else deadline - time.perf_counter()
    if outcome != UNDECIDED or (rest is not None and rest <= 0):
        return outcome, h, layout, 0
    return (*_run(instance, f, rest, fallback), 1)


def _next_f(lo: float, hi: float, top: float, jumped: bool, first: bool,
            precision: float) -> tuple[float, bool]:
    """(the next f to ask, whether it may take all the time left: the step just above the
    lower end, which proves it optimal when infeasible).

    First the ``jobs`` bound itself (often reached: one MILP then proves it), then 20 % below
    the lowest f not known feasible until a placement is found (a MILP well below f* is
    solved in a fraction of a second, and each placement lifts the lower end to what it
    reaches), then just above the lower end when the last placement reached more than was
    asked, else the geometric middle of the open range."""
    if first:
        return hi * (1 - 0.5 * precision), False
    if lo <= 0:
        return 0.8 * top, False
    if jumped or top - lo <= precision * hi:
        return min(lo * (1 + 0.5 * precision), 0.5 * (lo + top)), True
    return math.sqrt(lo * top), False


def bisect_placements(instance: Instance, *, precision: float = 1e-5, probe: float = 0.1,
                      time_limit: float | None = None, start: Any = None,
                      fallback: str = "scip") -> tuple[float, dict[str, float], Any]:
    """Exact optimum of the paper's model (static port pairings) by a time-shared bisection
    on f over the fixed-f feasibility MILP.

    Parameters
    ----------
    instance : Instance
        The INC/OXC instance, every job's workers identical.
    precision : float
        Relative width of the final bracket on f (default 1e-5).
    probe : float
        Share of ``time_limit`` one MILP gets before it is set aside undecided (default 0.1);
        the step just above the lower end gets all the time left. Without a time limit every
        MILP runs to its end.
    time_limit : float or None
        Seconds (default None: no limit); when reached, the smallest f proven infeasible so far
        (or the ``jobs`` bound) is returned with the best solution found.
    start : Solution or None
        A solution to begin from: when the evaluator accepts it and it has static circuits,
        the f it reaches is the first lower end and it is the best solution until one beats it.
    fallback : {"scip", "none"}
        Under a time limit, the step just above the lower end runs HiGHS within its share
        ``probe`` first and, if HiGHS has not decided it, SCIP (default ``"scip"``) for the
        time left; ``"none"``: HiGHS takes all of it. SCIP proves the hardest of these
        infeasibility steps about twice as fast; HiGHS the easy ones.

    Returns
    -------
    tuple
        (bound on f before the safety margin, metrics ``bound_f``, ``reached_f`` (the best f a
        placement found reaches), ``milps``, ``fallback_milps`` (MILPs handed to the fallback
        solver), ``undecided`` (MILPs stopped by their share of the time),
        ``stopped_by_time_limit``, ``seconds`` (and ``interrupted`` after Ctrl-C),
        the best static solution found (evaluated feasible) or None).

    References
    ----------
    Paper 002, section II-B, eqs. (1)-(17) (the model the fixed-f MILP fixes f in). Ours: the
    bisection whose lower end jumps to what a placement reaches, and the time shares that keep
    one hard MILP from taking the whole limit while the bracket holds only proven ends.
    """
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    hi, _ = jobs_bound(instance, static=True, time_limit=time_limit)
    lo, unknown = 0.0, math.inf
    best_obj, best_sol = -math.inf, None
    first, jumped = True, True
    counts = {"milps": 0.0, "fallback_milps": 0.0, "undecided": 0.0,
              "stopped_by_time_limit": 0.0}
    interrupted = 0.0
    if start is not None and not start.oxc_schedule:
        from dmlopt.models.inc_oxc.evaluation import evaluate

        ev = evaluate(instance, start)
        if ev.feasible and ev.objective > 0:
            best_obj, best_sol = ev.objective, start
            lo, first = min(hi, ev.objective), False
    while hi - lo > precision * hi:
        if unknown <= lo:
            unknown = math.inf
        f, last = _next_f(lo, hi, min(hi, unknown), jumped, first, precision)
        first = False
        left = None if deadline is None else deadline - time.perf_counter()
        if left is not None and left <= 0:
            counts["stopped_by_time_limit"] = 1.0
            break
        budget = left if (left is None or last) else min(left, probe * time_limit)
        share = None if time_limit is None else probe * time_limit
        try:
            outcome, h, layout, handed = _decide(instance, f, budget, share, fallback,
                                                 deadline)
        except KeyboardInterrupt:  # Ctrl-C: the bracket so far holds
            interrupted = 1.0
            break
        counts["milps"] += 1
        counts["fallback_milps"] += handed
        if outcome == INFEASIBLE:
            hi = f
        elif outcome == FEASIBLE:
            reached, sol = _reached(instance, h, layout, True)
            if sol is not None and reached > best_obj:
                best_obj, best_sol = reached, sol
            reached = min(hi, reached)
            jumped = reached > f * (1 + precision)
            lo = max(lo, f, reached)
        else:
            counts["undecided"] += 1
            unknown = min(unknown, f)
            if last or budget is None:
                counts["stopped_by_time_limit"] = 1.0
                break
    metrics = {"bound_f": hi, "longest_jct_lower": 1.0 / hi if hi > 0 else math.inf,
               "reached_f": lo, **counts, "seconds": time.perf_counter() - t0}
    if interrupted:
        metrics["interrupted"] = interrupted
    return hi, {k: v for k, v in metrics.items() if math.isfinite(v)}, best_sol


def bisection_function(instance: Instance, *, time_limit: float | None = None,
                       precision: float = 1e-5, probe: float = 0.1, fallback: str = "scip",
                       start: Any = None) -> BoundValue:
    """The ``bisection`` bound: :func:`bisect_placements`, exact for ``paper`` and ``strong``.

    Parameters
    ----------
    instance : Instance
        The INC/OXC instance, every job's workers identical.
    time_limit : float or None, optional
        Seconds (default None: no limit); the bound stays valid at any stop.
    precision : float, optional
        Relative width of the final bracket on f (default 1e-5).
    probe : float, optional
        Share of the time limit one fixed-f MILP gets before it is set aside (default 0.1).
    fallback : {"scip", "none"}, optional
        Solver the final step is handed to when HiGHS has not decided it within its share
        (default ``"scip"``).
    start : Solution or None, optional
        A solution to begin from (``dmlopt.solve``'s warm start, default None).

    Returns
    -------
    BoundValue
        The bound on f (1/s) moved by :func:`dmlopt.bounds.safe`, the best static solution
        found (the core evaluates it) and the metrics of :func:`bisect_placements`.

    References
    ----------
    Paper 002, section II-B, eqs. (1)-(17); ours: the time-shared bisection of this module.
    """
    value, metrics, sol = bisect_placements(instance, precision=precision, probe=probe,
                                            time_limit=time_limit, start=start,
                                            fallback=fallback)
    return BoundValue(safe(value, SENSE), solution=sol, metrics=metrics)


def _estimate(instance: Instance, options: Any) -> Size:
    """As ``placements-static``: one fixed-f MILP of 2 J R (R + 1) + R^2 columns at a time."""
    return _placements_estimate(instance, options)


#: the share of dmlopt.solve's time limit the bisection gets before the ``strong`` MIP: on the
#: 8-rack instances where the bisection needs long (``fig4-r8-s1``, seed 5) the MIP's bound
#: stays at the pool links summed after 600 s, so the MIP is kept only as a fallback
SHARE = 0.9

#: the exact method dmlopt.solve runs first (``Bound.exact``)
BISECTION = Bound(bisection_function, BisectionOptions, _estimate,
                  "exact for static port pairings (the paper's model): bisection on f over "
                  "the fixed-f MILP with integer circuits, each MILP within a share of the time, "
                  "SCIP taking over the last step HiGHS leaves undecided (dmlopt.solve runs "
                  "it first)", exact=("paper", "strong"), share=SHARE)

#: every bound method of the problem, strongest first: those of
#: :mod:`dmlopt.models.inc_oxc.bounds` with ``bisection`` before ``placements-static`` (the
#: default solve runs the first method declared exact)
BOUNDS: dict[str, Bound] = {}
for _name, _entry in _BOUNDS.items():
    if _name == "placements-static":
        BOUNDS["bisection"] = BISECTION
    BOUNDS[_name] = _entry
