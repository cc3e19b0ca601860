"""Generic dual bounds built from a problem's own exact formulations.

A problem lists its bound methods in ``BOUNDS`` (:class:`dmlopt.contract.Bound`). Two of them
need nothing but a linear formulation and come from here:

* :func:`lp_relaxation`: the formulation with every integer variable relaxed, solved to
  optimality by HiGHS (one thread). Valid whenever the formulation is exact.
* :func:`mip_bound`: the formulation solved by HiGHS's branch and bound for ``time_limit``
  seconds; its dual bound is valid at any stop and its incumbent is reported (evaluated).

Both shift the solver's value by :data:`SAFETY` (relative) towards the weak side, so a value
computed within the solver's feasibility tolerances is never stronger than the true bound.
Problem-specific bounds (Lagrangian, column generation, combinatorial) live in the problem's
own ``bounds`` module.
"""

from __future__ import annotations

import math
import time
from typing import Any

import pydantic

from dmlopt import registry, solvers
from dmlopt.contract import Bound, BoundValue, Options, Size
from dmlopt.errors import SolverError

#: relative safety margin applied to a solver's bound value (towards the weak side)
SAFETY = 1e-6

#: seconds a MIP bound runs when no time limit is given
MIP_SECONDS = 60.0

#: bytes per model entry (variable or constraint) in the size estimate
_BYTES_PER_ENTRY = 2_000.0

#: operations (nanoseconds) per model entry to build a Pyomo model and pass it to HiGHS: the
#: middle of 10-60 microseconds measured on the formulations of every problem (Nara's offline
#: model at 1,000 requests: 200)
_OPS_PER_ENTRY = 40_000.0



class LPOptions(Options):
    """Options of the LP relaxation bound."""

    threads: int = pydantic.Field(1, ge=1, le=solvers.MAX_THREADS,
                                  description="HiGHS threads")


def safe(value: float, sense: str) -> float:
    """``value`` moved by :data:`SAFETY` (relative, at least absolute 1e-9) to the weak side:
    down for a minimisation (a lower bound), up for a maximisation (an upper bound)."""
    margin = SAFETY * max(1.0, abs(value))
    return value - margin if sense == "min" else value + margin


def _estimate(formulation: str) -> Any:
    def estimate(instance: Any, _options: Any) -> Size:
        entry = registry.of(instance).formulation(formulation)
        n_vars, n_cons = entry.estimate_size(instance)
        entries = float(n_vars + n_cons)
        return Size(entries * _BYTES_PER_ENTRY, entries * _OPS_PER_ENTRY)

    return estimate


def _solve(instance: Any, formulation: str, *, relax: bool, time_limit: float | None,
           threads: int) -> tuple[Any, Any, Any]:
    """Build ``formulation``, optionally relax integrality, solve with HiGHS."""
    problem = registry.of(instance)
    entry = problem.formulation(formulation)
    t0 = time.perf_counter()
    model = entry.build(instance)
    built = time.perf_counter() - t0
    solvers.check_pass_time(built, time_limit, f"bound: the {formulation!r} model",
                            problem.name)
    if relax:
        import pyomo.environ as pyo

        pyo.TransformationFactory("core.relax_integer_vars").apply_to(model)
    run = solvers.run(model, "highs", time_limit=time_limit, threads=threads)
    if run.status == "interrupted" and (relax or run.bound is None
                                        or not math.isfinite(run.bound)):
        raise KeyboardInterrupt  # Ctrl-C before a valid bound: the command stops (exit 130)
    return problem, entry, (model, run)


def lp_relaxation(formulation: str, description: str = "") -> Bound:
    """The LP relaxation of ``formulation`` as a :class:`~dmlopt.contract.Bound`.

    Parameters
    ----------
    formulation : str
        A linear formulation of the problem (its ``FORMULATIONS`` key).
    description : str
        The line ``dmlopt list`` shows; default names the formulation.

    Returns
    -------
    Bound
        Its function raises :class:`~dmlopt.errors.SolverError` when the LP does not reach
        optimality within the time limit (an unfinished simplex gives no valid bound).

    References
    ----------
    Wolsey, *Integer Programming* (2nd ed., 2020), section 2.2: relaxations give bounds.
    """

    def function(instance: Any, *, time_limit: float | None = None,
                 threads: int = 1) -> BoundValue:
        """The LP relaxation's optimum: a dual bound (lower for ``min``, upper for ``max``).

        Parameters
        ----------
        instance : Instance
            An instance of the problem the formulation belongs to.
        time_limit : float or None, optional
            Seconds (wall clock) HiGHS may spend on the LP; None (default): no limit. An LP
            stopped before optimality gives no bound (:class:`~dmlopt.errors.SolverError`).
        threads : int, optional
            HiGHS threads (default 1).

        Returns
        -------
        BoundValue
            The LP optimum moved by :data:`SAFETY` (relative) to the weak side; metric
            ``lp_value``: the solver's value before that shift. No solution.

        References
        ----------
        Wolsey, *Integer Programming* (2nd ed., 2020), section 2.2: the optimum of a relaxation
        bounds the optimum of the integer program.
        """
        problem, _, (model, run) = _solve(instance, formulation, relax=True,
                                          time_limit=time_limit, threads=threads)
        if run.status != "optimal" or run.objective is None or not math.isfinite(run.objective):
            raise SolverError(f"bound: the LP relaxation of {formulation!r} ended "
                              f"{run.status} ({run.message}): no bound"
                              + (f" within {time_limit:g} s" if time_limit else ""))
        value = float(run.objective)
        return BoundValue(safe(value, problem.sense),
                          metrics={"lp_value": value})

    return Bound(function=function, Options=LPOptions, estimate=_estimate(formulation),
                 description=description or f"LP relaxation of the {formulation!r} "
                 "formulation (HiGHS)", formulation=formulation)


def mip_bound(formulation: str, description: str = "") -> Bound:
    """The dual bound of HiGHS's branch and bound on ``formulation`` after ``time_limit``
    seconds (default :data:`MIP_SECONDS`), with its incumbent as the solution found on the way.

    Parameters
    ----------
    formulation : str
        A linear formulation of the problem.
    description : str
        The line ``dmlopt list`` shows.

    Returns
    -------
    Bound
        Its value after Ctrl-C is the dual bound reached so far (metric ``interrupted``; the
        API raises :class:`~dmlopt.errors.Interrupted` carrying it). Proves the optimum when
        the search finishes (the bound then equals the incumbent up to
        :data:`SAFETY` and the solver's gap).

    References
    ----------
    Achterberg, *Constraint Integer Programming* (2007), chapter 2: the dual bound of a
    branch-and-bound tree is the smallest bound over its open nodes.
    """

    def function(instance: Any, *, time_limit: float | None = None,
                 threads: int = 1) -> BoundValue:
        """HiGHS's branch-and-bound dual bound after ``time_limit`` seconds, with its incumbent.

        Parameters
        ----------
        instance : Instance
            An instance of the problem the formulation belongs to.
        time_limit : float or None, optional
            Seconds (wall clock) of branch and bound; None (default): :data:`MIP_SECONDS`.
        threads : int, optional
            HiGHS threads (default 1).

        Returns
        -------
        BoundValue
            The best bound over the open nodes moved by :data:`SAFETY` (relative) to the weak
            side; the incumbent decoded by the formulation's decoder (None when HiGHS found
            none: the core evaluates it); metrics ``mip_bound`` (the solver's value),
            ``proven_optimal`` (1.0 when the search finished) and, after Ctrl-C,
            ``interrupted`` (1.0: the tree's dual bound so far, still valid).

        References
        ----------
        Achterberg, *Constraint Integer Programming* (2007), chapter 2: the dual bound of a
        branch-and-bound tree is the smallest bound over its open nodes.
        """
        problem, entry, (model, run) = _solve(instance, formulation, relax=False,
                                              time_limit=time_limit or MIP_SECONDS,
                                              threads=threads)
        if run.bound is None or not math.isfinite(run.bound):
            raise SolverError(f"bound: HiGHS gave no dual bound on {formulation!r} "
                              f"({run.status}: {run.message})")
        solution = None
        if run.has_solution:
            solution = (entry.decode or problem.model.decode)(model, instance)
        metrics = {"mip_bound": float(run.bound),
                   "proven_optimal": float(run.status == "optimal")}
        if run.status == "interrupted":  # Ctrl-C: the tree's dual bound so far still holds
            metrics["interrupted"] = 1.0
        return BoundValue(safe(float(run.bound), problem.sense), solution=solution,
                          metrics=metrics)

    return Bound(function=function, Options=LPOptions, estimate=_estimate(formulation),
                 description=description or f"branch-and-bound dual bound of the "
                 f"{formulation!r} formulation after the time limit (HiGHS)",
                 formulation=formulation)
