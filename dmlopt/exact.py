"""The exact stage of ``dmlopt.solve``: the MIP run and graded, and the bound-method-then-MIP
orchestration of a problem with an exact bound method (docs/architecture.md, "The contract").

:func:`dmlopt.api.solve` checks its arguments, picks the formulation and the exact bound method
(``Bound.exact``), then calls :func:`_solve_mip` (a named formulation, or no exact method) or
:func:`_solve_exact` (the method with its share of the time limit, then the MIP with the rest,
graded against the tighter of the two bounds). Every objective reported is the evaluator's;
``optimal`` only when it meets a bound (:func:`proven`).
"""

from __future__ import annotations

import contextlib
import logging
import signal
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from dmlopt import solvers
from dmlopt.errors import (
    InstanceError,
    Interrupted,
    ModelTooLargeError,
    ObjectiveMismatchError,
    SolverError,
    interrupt_of,
)
from dmlopt.evaluation import Evaluation
from dmlopt.pyomo_log import pyomo_to_stderr
from dmlopt.result import Result, relative_gap

#: relative tolerance between a solver's objective and the evaluator's
OBJECTIVE_TOL = 1e-5


def _solve_mip(problem: Any, instance: Any, *, formulation: str, solver: str,
               time_limit: float | None, mip_gap: float | None, threads: int | None,
               start: Any, tee: bool, solver_options: dict[str, Any] | None,
               progress: float | None, deadline: float | None = None) -> Result:
    """Build ``formulation``, solve it with ``solver`` (MIP start ``start``), evaluate the
    solution and grade the status (:func:`dmlopt.api.solve` after its checks); with ``deadline`` (a
    ``time.perf_counter`` value) the solver's time limit is what is left after the build."""
    entry = problem.formulation(formulation)
    t0 = time.perf_counter()
    until = deadline if deadline is not None else (
        None if time_limit is None else t0 + time_limit)
    stop = None if until is None else t0 + 2 * (until - t0) + 10  # build_fits's bound
    every = None if progress is None else max(progress, BUILD_PROGRESS_SECONDS)
    with solvers.build_deadline(until), build_watch(
            f"solve: the {formulation!r} model", stop, every,
            "raise the time limit or take a smaller formulation"):
        model = entry.build(instance)
    if start is not None:
        (entry.warm_start or problem.model.warm_start)(model, instance, start)
    t_build = time.perf_counter() - t0
    solvers.check_pass_time(t_build, None if until is None else until - t0,
                            f"solve: the {formulation!r} model", problem.name)
    if deadline is not None:
        time_limit = max(deadline - time.perf_counter(), 1e-2)
    own = (entry.solver_options or {}).get(solver, {})
    if own:  # the formulation's defaults for this solver, under the user's own options
        solver_options = {**own, **(solver_options or {})}
    run = solvers.run(model, solver, time_limit=time_limit, mip_gap=mip_gap, threads=threads,
                      warm=start is not None, tee=tee, options=solver_options,
                      progress=progress)
    seconds = time.perf_counter() - t0
    method = f"{solver}:{formulation}"
    opts = {k: v for k, v in (("time_limit", time_limit), ("mip_gap", mip_gap),
                              ("threads", threads)) if v is not None}
    opts["solver"] = solvers.version(solver)  # name and version, e.g. "gurobi 13.0.3"
    res = Result(problem=problem.name, method=method, status=run.status, bound=run.bound,
                 seconds=seconds, message="" if run.status == "optimal" else run.message,
                 solver_objective=run.objective, options=opts, build_seconds=t_build)
    if run.status == "interrupted":
        _interrupted(res, problem, instance, entry, model, run, start, mip_gap)
    if not run.has_solution:
        if start is not None and run.status in ("time_limit", "feasible"):
            # a solver stopped before it read the MIP start (SCIP completes a partial start
            # only after presolving): the start, re-evaluated, is still the best known solution
            ev = problem.model.evaluate(instance, start)
            if ev.feasible:
                _fill(res, start, ev)
                res.message = f"{run.message}; no incumbent from the solver: the warm start"
                res.gap = relative_gap(ev.objective, res.bound)
        return res
    own = _own_objective(model)
    if run.objective is not None and own is not None and not _close(run.objective, own):
        # the solver reports an objective its own solution does not have (HiGHS 1.16 after
        # some MIP starts): a solver fault, not a modelling one; its claims are not used
        fault = (f"{method}: the solver reported the objective {run.objective!r}, but its "
                 f"solution has {own!r} in the model")
        if start is None:
            raise SolverError(f"{fault}; no result is reported (a solver fault: try another "
                              "solver or formulation)")
        again = _solve_mip(problem, instance, formulation=formulation, solver=solver,
                           time_limit=time_limit, mip_gap=mip_gap, threads=threads, start=None,
                           tee=tee, solver_options=solver_options, progress=progress,
                           deadline=max(until, time.perf_counter() + 1.0)
                           if until is not None else None)
        note = f"{fault} after the MIP start; solved again without the start"
        again.message = f"{note}; {again.message}" if again.message else note
        return again
    solution = (entry.decode or problem.model.decode)(model, instance)
    ev = problem.model.evaluate(instance, solution)
    _fill(res, solution, ev)
    if not ev.feasible:
        raise ObjectiveMismatchError(
            f"{method}: the solver's solution fails the evaluator: {ev.violations[0]}"
        )
    _check_objective(method, problem.sense, ev.objective, run.objective, run.bound)
    if res.status == "optimal" and run.bound is None:
        res.bound = ev.objective
    res.gap = relative_gap(ev.objective, res.bound)
    if res.status == "optimal" and not proven(ev.objective, res.bound):
        # stopped at a looser gap (mip_gap, a solver option, a suite field or the solver's own
        # default): a solution, not a proof
        res.status = "feasible"
        asked = f" (the requested mip_gap {mip_gap:g})" if mip_gap else ""
        res.message = (f"the solver stopped at a relative gap of {res.gap:.3g}{asked}; optimal "
                       f"means proven at {solvers.OPTIMALITY_GAP:g}")
    return res


EXACT_SHARE = 0.5


def _better(problem: Any, instance: Any, *solutions: Any) -> tuple[Any, Any]:
    """The best feasible one of ``solutions`` (None skipped) and its evaluation, by the
    evaluator's objective; (None, None) when none is feasible."""
    best: tuple[Any, Any] = (None, None)
    sign = 1.0 if problem.sense == "max" else -1.0
    for sol in solutions:
        if sol is None:
            continue
        ev = problem.model.evaluate(instance, sol)
        if ev.feasible and (best[1] is None or sign * (ev.objective - best[1].objective) > 0):
            best = (sol, ev)
    return best


def _solve_exact(problem: Any, instance: Any, name: str, mip: Any, *,
                 time_limit: float | None, start: Any) -> Result:
    """The default exact solve of a problem with an exact bound method ``name``: the method
    first (its ``Bound.share`` of the time limit, default :data:`EXACT_SHARE`, or until it
    ends), its solution optimal when the evaluated objective meets its bound (:func:`proven`);
    else ``mip`` with the rest of the
    time, warm-started from the better of its solution and ``start``, and graded against the
    tighter of the two bounds. Never optimal unless an evaluated objective meets a bound."""
    t0 = time.perf_counter()
    part = problem.bound(name).share
    share = None if time_limit is None else (EXACT_SHARE if part is None else part) * time_limit
    method = f"{mip.keywords['solver']}:{mip.keywords['formulation']}"
    try:
        value = _interruptible(problem.bound(name).function, instance, time_limit=share,
                               start=start)
    except (InstanceError, SolverError) as exc:  # the method cannot run: the MIP alone
        res = mip(time_limit=time_limit, start=start)
        res.message = "; ".join(x for x in (res.message, f"bound {name} not run: {exc}") if x)
        return res
    b = float(value.bound)
    if not np.isfinite(b):
        raise ObjectiveMismatchError(f"bound {name}: returned the non-finite value {b!r}")
    # the user's start is the method's to judge (it may lie outside the formulation, e.g. a
    # time-shared schedule beyond a static model's bound): only the method's solution counts
    sol, ev = _better(problem, instance, value.solution)
    if ev is not None:
        _check_objective(f"{method} (bound {name})", problem.sense, ev.objective, None, b)
    metrics = {f"{k}_{name}": float(v) for k, v in value.metrics.items()} | {f"bound_{name}": b}
    res = Result(problem=problem.name, method=method, status="feasible", bound=b,
                 seconds=time.perf_counter() - t0,
                 options={} if time_limit is None else {"time_limit": time_limit})
    if sol is not None:
        _fill(res, sol, ev)
        res.gap = relative_gap(ev.objective, b)
    res.metrics.update(metrics)
    if value.metrics.get("interrupted"):
        res.status = "interrupted"
        res.message = f"interrupted (Ctrl-C) in the {name} bound: the best solution so far"
        raise Interrupted(sol, result=res)
    if sol is not None and proven(ev.objective, b):
        # the method label stays SOLVER:FORMULATION (the formulation whose optimum this is);
        # what proved it, and that the solver never ran, is said by the message and a metric
        res.status = "optimal"
        res.metrics[f"proved_by_{name}"] = 1.0
        res.message = (f"proven optimal by the {name} bound, an exact algorithm for the "
                       f"{mip.keywords['formulation']} formulation ({mip.keywords['solver']} "
                       "was not run)")
        return res
    deadline = None if time_limit is None else t0 + time_limit
    if deadline is not None:
        left, need = deadline - time.perf_counter(), _build_estimate(problem, instance, mip)
        if left < need:  # the MIP could not even be built in the time left: stop here
            res.status = "time_limit"
            res.message = (f"time limit: the {name} bound used its share; the {method} stage "
                           f"was not started ({left:.2g} s left, its build takes about "
                           f"{need:.2g} s)")
            res.seconds = time.perf_counter() - t0
            return res
    try:
        mres = mip(time_limit=None, deadline=deadline, start=sol if sol is not None else start)
    except Interrupted as exc:
        if exc.result is not None:
            _tighten(problem, exc.result, b, name, metrics)
            exc.result.seconds = time.perf_counter() - t0
        raise
    if sol is None and start is not None and mres.solution is start:
        # no incumbent but the user's start, which the exact method did not take: graded by the
        # MIP's own bound only
        mres.metrics.update(metrics)
        mres.seconds = time.perf_counter() - t0
        return mres
    best, best_ev = _better(problem, instance, mres.solution, sol)
    if best is not None and best is not mres.solution:  # the MIP lost its start's value
        _fill(mres, best, best_ev)
    _tighten(problem, mres, b, name, metrics)
    mres.seconds = time.perf_counter() - t0
    return mres


#: seconds per variable and constraint of building a model and handing it to HiGHS, an estimate
#: (Pyomo measures 7-120 us for the default formulations, more with a relaxation computed in
#: the build): the MIP stage is skipped when it would be spent building, not solving
BUILD_SECONDS_PER_ROW = 50e-6

#: seconds per nonzero of building a Pyomo model, for a formulation whose size estimate counts
#: its nonzeros (:class:`ModelSize`; RAR ``paper``: measured 2.4-4 us under load)
BUILD_SECONDS_PER_NONZERO = 5e-6

#: writing a built model as LP or MPS takes about this many times its build (measured 0.2-2.5
#: times on the formulations of every problem)
WRITE_PER_BUILD = 1.5


class ModelSize(tuple):
    """A formulation's size estimate ``(variables, constraints)`` that also counts its
    nonzeros (attribute ``nonzeros``): returned by ``estimate_size`` where a model's rows grow
    with the instance, so its build time is not proportional to its rows.

    Parameters
    ----------
    variables, constraints, nonzeros : int
        Upper bounds of the model's counts.

    Returns
    -------
    ModelSize
        A 2-tuple (unpacks as before) with ``nonzeros``.

    References
    ----------
    Ours.
    """

    nonzeros: int

    def __new__(cls, variables: int, constraints: int, nonzeros: int) -> ModelSize:
        self = super().__new__(cls, (int(variables), int(constraints)))
        self.nonzeros = int(nonzeros)
        return self

    def __getnewargs__(self) -> tuple[int, int, int]:  # pickle and copy keep ``nonzeros``
        return (self[0], self[1], self.nonzeros)


def build_estimate(problem: Any, instance: Any, formulation: str,
                   write: bool = False) -> tuple[float, str]:
    """Seconds building the model (and, with ``write``, writing it as LP or MPS) takes, from
    the formulation's size estimate: :data:`BUILD_SECONDS_PER_ROW` per variable and
    constraint, or :data:`BUILD_SECONDS_PER_NONZERO` per nonzero when the estimate counts them
    (:class:`ModelSize`) and that is more; times 1 + :data:`WRITE_PER_BUILD` with ``write``.

    Parameters
    ----------
    problem : the registry's problem.
    instance : the instance.
    formulation : the formulation to build.
    write : also the time to write the model (``dmlopt export``).

    Returns
    -------
    tuple[float, str]
        The seconds and the sizes they come from, in words (``"1,234 variables, ..."``).

    References
    ----------
    Ours; the rates measured on the formulations of every problem (docs/interop.md).
    """
    size = problem.formulation(formulation).estimate_size(instance)
    n_vars, n_cons = size
    nnz = getattr(size, "nonzeros", None)
    need = (n_vars + n_cons) * BUILD_SECONDS_PER_ROW
    words = f"{n_vars:,} variables and {n_cons:,} constraints"
    if nnz is not None:
        need = max(need, nnz * BUILD_SECONDS_PER_NONZERO)
        words = f"{n_vars:,} variables, {n_cons:,} constraints and {nnz:,} nonzeros"
    return need * (1 + WRITE_PER_BUILD if write else 1), words


def _build_estimate(problem: Any, instance: Any, mip: Any) -> float:
    """Seconds the MIP stage of ``mip`` (a :func:`_solve_mip` partial) needs before its solver
    starts (:func:`build_estimate`)."""
    return build_estimate(problem, instance, mip.keywords["formulation"])[0]


#: seconds between the progress lines of a long build (``dmlopt export``; ``dmlopt solve`` with
#: ``progress``, at this pace or its own if slower)
BUILD_PROGRESS_SECONDS = 10.0


@contextlib.contextmanager
def build_watch(what: str, stop: float | None, every: float | None, hint: str = "",
                estimate: float | None = None) -> Iterator[None]:
    """Within the block (a model's build, or its build and write), a line on stderr every
    ``every`` seconds saying it is still working, and a :class:`ModelTooLargeError` raised in
    the block once ``time.perf_counter()`` passes ``stop``: a limit that holds whatever the
    estimate said.

    Runs on ``SIGALRM`` (pure-Python work such as Pyomo's is interrupted between two
    bytecodes), so only in the main thread and only when no other ``SIGALRM`` handler is
    installed; elsewhere the block runs unwatched.

    Parameters
    ----------
    what : the command and model, for the lines (``"export: the 'paper' model"``).
    stop : a ``time.perf_counter`` value, or None (never stopped).
    every : seconds between progress lines, or None (none).
    hint : what the user can do, appended to the error.
    estimate : the estimated seconds, shown in the progress lines (None: not shown).

    Returns
    -------
    contextlib.AbstractContextManager
        The watched block.

    Raises
    ------
    ModelTooLargeError
        The block ran past ``stop``.

    References
    ----------
    POSIX ``setitimer(2)``; Python's ``signal`` module (handlers run between bytecodes).
    """
    if (stop is None and every is None) or threading.current_thread() \
            is not threading.main_thread() or signal.getsignal(signal.SIGALRM) \
            not in (signal.SIG_DFL, None):
        yield
        return
    t0 = time.perf_counter()
    span = 1.0 if stop is None else min(1.0, max(0.05, (stop - t0) / 10))
    tick = min(span, every) if every is not None else span
    said = "" if estimate is None else f" (estimated {estimate:.0f} s)"
    last, stopped = [t0], [False]

    def handler(signum: int, frame: Any) -> None:
        now = time.perf_counter()
        if stop is not None and now >= stop:
            # again in 1 s should code in the block swallow the error (the block's end stops
            # the timer; its clean-up takes far less)
            signal.setitimer(signal.ITIMER_REAL, 1.0, 1.0)
            stopped[0] = True
            raise ModelTooLargeError(
                f"{what}: the build ran past its limit of {stop - t0:.0f} s and was stopped, "
                f"nothing written" + (f"; {hint}" if hint else ""))
        if every is not None and now - last[0] >= every - 1e-3:
            last[0] = now
            print(f"dmlopt: {what}: still at work, {now - t0:.0f} s{said}", file=sys.stderr,
                  flush=True)

    previous = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, tick, tick)
    import pyomo.environ  # noqa: F401 (Pyomo installs its log handler on import: first)

    try:
        with pyomo_to_stderr():  # Pyomo's "Rule failed ..." of the stop itself: not shown
            for h in logging.getLogger("pyomo").handlers:
                h.addFilter(lambda record: not stopped[0])
            yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)


def _tighten(problem: Any, res: Result, b: float, name: str, metrics: dict[str, float]) -> None:
    """Grade a MIP result run after the exact bound method ``name`` against the tighter of the
    MIP's bound and ``b``: ``optimal`` only when the evaluated objective meets it."""
    res.metrics.update(metrics)
    sign = 1.0 if problem.sense == "max" else -1.0
    if res.bound is None or sign * (res.bound - b) > 0:
        res.bound = b
    note = f"the {name} bound ({b:.9g}) ran first with its share of the time"
    res.message = "; ".join(x for x in (res.message, note) if x)
    if res.objective is None:
        return
    _check_objective(f"{res.method} (bound {name})", problem.sense, res.objective, None,
                     res.bound)
    res.gap = relative_gap(res.objective, res.bound)
    if res.status in ("time_limit", "feasible") and proven(res.objective, res.bound):
        res.status = "optimal"
        res.message = f"proven optimal: the incumbent meets the tighter bound ({note})"
    elif res.status == "optimal" and not proven(res.objective, res.bound):
        res.status = "feasible"


def _interrupted(res: Result, problem: Any, instance: Any, entry: Any, model: Any, run: Any,
                 start: Any, mip_gap: Any) -> None:
    """Ctrl-C stopped the solver: raise :class:`Interrupted` carrying its incumbent (or the warm
    start), evaluated, with status ``interrupted`` and its gap."""
    solution = (entry.decode or problem.model.decode)(model, instance) if run.has_solution \
        else start
    res.message = "interrupted (Ctrl-C): the solver's best solution so far"
    if solution is not None:
        ev = problem.model.evaluate(instance, solution)
        if ev.feasible:
            _fill(res, solution, ev)
            res.gap = relative_gap(ev.objective, res.bound)
        else:
            solution = None
    raise Interrupted(solution, result=res)


def proven(objective: float | None, bound: float | None) -> bool:
    """Whether ``bound`` proves ``objective`` optimal: relative gap (recomputed from the two,
    :func:`dmlopt.result.relative_gap`) at most :data:`dmlopt.solvers.OPTIMALITY_GAP`, or an
    absolute difference at most :data:`dmlopt.solvers.OPTIMALITY_ABS_GAP` (an objective of 0)."""
    gap = relative_gap(objective, bound)
    if gap is None:
        return False
    return gap <= solvers.OPTIMALITY_GAP or \
        abs(objective - bound) <= solvers.OPTIMALITY_ABS_GAP  # type: ignore[operator]


def _own_objective(model: Any) -> float | None:
    """The value of the model's active objective at its variables' current values (the
    solver's loaded solution); None when it cannot be computed (a variable without a value)."""
    import pyomo.environ as pyo

    objs = list(model.component_data_objects(pyo.Objective, active=True))
    if len(objs) != 1:
        return None
    try:
        value = pyo.value(objs[0].expr, exception=False)
    except (ValueError, ZeroDivisionError, OverflowError):
        return None
    return None if value is None else float(value)


def _close(a: float, b: float) -> bool:
    """Equal within :data:`OBJECTIVE_TOL` (relative, at least absolute)."""
    return abs(a - b) <= OBJECTIVE_TOL * max(1.0, abs(a), abs(b))


def _check_objective(method: str, sense: str, evaluated: float, incumbent: float | None,
                     bound: float | None) -> None:
    """The evaluated objective must lie between the solver's bound and its incumbent.

    A model may price a solution above its true cost while auxiliary variables are not tight
    (an incumbent at a time limit), so the evaluator may find a better value than the solver
    reports, never a worse one; and no solution can beat the proven bound. Anything else is a
    modelling bug.
    """
    tol = OBJECTIVE_TOL * max(1.0, abs(evaluated))
    sign = 1.0 if sense == "min" else -1.0
    if incumbent is not None and sign * (evaluated - incumbent) > tol:
        raise ObjectiveMismatchError(
            f"{method}: evaluated objective {evaluated!r} is worse than the solver's "
            f"{incumbent!r}: the model under-prices this solution"
        )
    if bound is not None and sign * (bound - evaluated) > tol:
        raise ObjectiveMismatchError(
            f"{method}: evaluated objective {evaluated!r} beats the solver's proven bound "
            f"{bound!r}: the model over-prices solutions"
        )


def _fill(res: Result, solution: Any, ev: Evaluation) -> None:
    res.solution = solution
    res.objective = ev.objective
    res.feasible = ev.feasible
    res.violations = ev.violations
    res.metrics = dict(ev.metrics)


def _interruptible(function: Any, *args: Any, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)``, with Ctrl-C inside a numba kernel (a ``SystemError``
    caused by the interrupt) raised as the :class:`KeyboardInterrupt` it is."""
    try:
        return function(*args, **kwargs)
    except SystemError as exc:
        if interrupt_of(exc):
            raise KeyboardInterrupt from None
        raise


def build_fits(problem: Any, instance: Any, formulation: str, time_limit: float | None) -> None:
    """Refuse at once a model whose build alone (:func:`build_estimate`) would take far
    beyond the time limit (over twice it plus 10 s): it would run minutes on a limit of
    seconds, the solver never reached. The build itself is stopped at that bound too
    (:func:`build_watch` in :func:`_solve_mip`).

    Parameters
    ----------
    problem : the registry's problem.
    instance : the instance.
    formulation : the formulation to build.
    time_limit : seconds, or None (no limit: nothing refused).

    Returns
    -------
    None

    Raises
    ------
    SolverError
        Naming the time limit, the build estimate and the model's size.

    References
    ----------
    docs/architecture.md, "The contract" (the exact stage's build estimate).
    """
    if time_limit is None:
        return
    need, words = build_estimate(problem, instance, formulation)
    if need > 2 * time_limit + 10:
        raise SolverError(f"time_limit: {time_limit:g} s is far below the {formulation!r} model's "
                          f"build alone (about {need:.0f} s for {words}); raise the time limit "
                          "or take a smaller formulation")
