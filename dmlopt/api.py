"""The public entry points: ``solve``, ``heuristic``, ``evaluate``, ``export``, ``generate``.

They are problem-agnostic: the registry finds the problem of an instance from its ``problem``
field and every objective reported is re-computed by that problem's evaluator.
"""

from __future__ import annotations

import inspect
import os
import time
from pathlib import Path
from typing import Any

from dmlopt import registry, solvers
from dmlopt.errors import (
    InstanceError,
    ModelTooLargeError,
    ObjectiveMismatchError,
    SolverError,
    UnknownNameError,
)
from dmlopt.evaluation import Evaluation
from dmlopt.io import atomic_path, load_solution
from dmlopt.result import Result, relative_gap

#: default size guard (variables, constraints); override per call or with DMLOPT_SIZE_LIMIT="V,C"
DEFAULT_SIZE_LIMIT = (1_000_000, 2_000_000)

#: relative tolerance between a solver's objective and the evaluator's
OBJECTIVE_TOL = 1e-5


def size_limit_from_env() -> tuple[int, int]:
    raw = os.environ.get("DMLOPT_SIZE_LIMIT")
    if not raw:
        return DEFAULT_SIZE_LIMIT
    try:
        v, c = (int(x) for x in raw.split(","))
    except ValueError:
        raise InstanceError("DMLOPT_SIZE_LIMIT", raw, "must be two integers 'V,C'") from None
    return v, c


def default_formulation(problem: registry.Problem, solver: str | None = None) -> str:
    """The paper's formulation when ``solver`` can solve it, else the first one it can.

    A problem without a ``"paper"`` formulation (or whose paper model needs another solver, as
    TAP's quadratic MINLP) thus still solves with ``dmlopt.solve(instance)``.
    """
    names = problem.formulations
    if not names:
        raise UnknownNameError(
            f"formulation: {problem.name} has no exact formulation (use a heuristic: "
            f"{', '.join(sorted(problem.heuristics))})"
        )
    usable = [f for f in names if solver is None or solver_allowed(problem, f, solver)]
    candidates = usable or names
    return "paper" if "paper" in candidates else candidates[0]


def solver_allowed(problem: registry.Problem, formulation: str, solver: str) -> bool:
    allowed = getattr(problem.model, "SOLVERS", {}).get(formulation)
    return not allowed or solver in allowed or solvers.ALIASES.get(solver) in allowed


def _formulation(problem: registry.Problem, formulation: str) -> None:
    if formulation not in problem.model.FORMULATIONS:
        raise UnknownNameError(
            f"formulation: {formulation!r} is not a {problem.name} formulation "
            f"(available: {', '.join(problem.formulations) or 'none, use a heuristic'})"
        )


def check_size(
    instance: Any, formulation: str | None = None, size_limit: tuple[int, int] | None = None
) -> tuple[int, int]:
    """Estimate the model size and refuse it above the limit (before anything is built)."""
    problem = registry.of(instance)
    formulation = formulation or default_formulation(problem)
    _formulation(problem, formulation)
    n_vars, n_cons = problem.model.estimate_size(instance, formulation)
    max_v, max_c = size_limit or size_limit_from_env()
    if n_vars > max_v or n_cons > max_c:
        raise ModelTooLargeError(
            f"model too large: the {formulation!r} formulation of this {problem.name} instance "
            f"has about {n_vars:,} variables and {n_cons:,} constraints, above the limit "
            f"{max_v:,} / {max_c:,}; pass size_limit=(V, C) (CLI: --size-limit V,C, or "
            "DMLOPT_SIZE_LIMIT=V,C) to build it anyway"
        )
    return n_vars, n_cons


def build(instance: Any, formulation: str | None = None,
          size_limit: tuple[int, int] | None = None) -> Any:
    """The Pyomo model of ``instance`` in ``formulation`` (default: the paper's), after the
    size guard."""
    problem = registry.of(instance)
    formulation = formulation or default_formulation(problem)
    check_size(instance, formulation, size_limit)
    return problem.model.build(instance, formulation)


def evaluate(instance: Any, solution: Any) -> Evaluation:
    """Score a solution (object, dict or JSON path) with the problem's evaluator."""
    problem = registry.of(instance)
    if not isinstance(solution, problem.model.Solution):
        solution = load_solution(instance, solution)
    return problem.model.evaluate(instance, solution)


def _resolve_start(instance: Any, warm_start: Any) -> Any:
    problem = registry.of(instance)
    if isinstance(warm_start, str):
        return problem.heuristic(warm_start)(instance, seed=0)
    if isinstance(warm_start, problem.model.Solution):
        return warm_start
    return load_solution(instance, warm_start)


def solve(
    instance: Any,
    solver: str = "highs",
    *,
    time_limit: float | None = None,
    mip_gap: float | None = None,
    threads: int | None = None,
    formulation: str | None = None,
    warm_start: Any = None,
    size_limit: tuple[int, int] | None = None,
    tee: bool = False,
    solver_options: dict[str, Any] | None = None,
) -> Result:
    """Solve ``instance`` exactly with a Pyomo solver and return the evaluated :class:`Result`.

    Parameters
    ----------
    solver : "highs" (default), "scip", or any name Pyomo's SolverFactory knows.
    time_limit, mip_gap, threads : passed to the solver (seconds, relative gap, threads).
    formulation : one of the problem's ``FORMULATIONS``; default: "paper" (the paper's model)
        when ``solver`` can solve it, else the first formulation it can.
    warm_start : a Solution, a solution dict/path, or a heuristic name whose solution seeds
        the solver. A solver stopped before it produced an incumbent returns the (re-evaluated,
        feasible) start instead, so a warm-started run is never worse than its start.
    size_limit : (variables, constraints) above which the model is refused before building.

    Raises
    ------
    SolverError, UnknownNameError, ModelTooLargeError, InstanceError
        On bad input (the CLI exits 2 on them).
    ObjectiveMismatchError
        If the solver's objective and the evaluator's disagree: a modelling bug.
    """
    problem = registry.of(instance)
    solvers.check(solver)
    formulation = formulation or default_formulation(problem, solver)
    check_size(instance, formulation, size_limit)
    _check_solver(problem, formulation, solver)
    start = _resolve_start(instance, warm_start) if warm_start is not None else None
    t0 = time.perf_counter()
    model = problem.model.build(instance, formulation)
    if start is not None:
        problem.model.warm_start(model, instance, start)
    t_build = time.perf_counter() - t0
    run = solvers.run(model, solver, time_limit=time_limit, mip_gap=mip_gap, threads=threads,
                      warm=start is not None, tee=tee, options=solver_options)
    seconds = time.perf_counter() - t0
    method = f"{solver}:{formulation}"
    opts = {k: v for k, v in (("time_limit", time_limit), ("mip_gap", mip_gap),
                              ("threads", threads)) if v is not None}
    res = Result(problem=problem.name, method=method, status=run.status, bound=run.bound,
                 seconds=seconds, message="" if run.status == "optimal" else run.message,
                 solver_objective=run.objective, options=opts, build_seconds=t_build)
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
    solution = problem.model.decode(model, instance)
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
    return res


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


def _check_solver(problem: registry.Problem, formulation: str, solver: str) -> None:
    """Refuse a solver that cannot solve ``formulation``: a problem module may declare
    ``SOLVERS = {formulation: (solver, ...)}`` (e.g. a nonconvex quadratic model: SCIP only)."""
    if not solver_allowed(problem, formulation, solver):
        allowed = problem.model.SOLVERS[formulation]
        raise SolverError(
            f"solver: {solver!r} cannot solve the {problem.name} {formulation!r} formulation "
            f"(use {' or '.join(allowed)}, or another formulation: "
            f"{', '.join(f for f in problem.formulations if f != formulation)})"
        )


def _fill(res: Result, solution: Any, ev: Evaluation) -> None:
    res.solution = solution
    res.objective = ev.objective
    res.feasible = ev.feasible
    res.violations = ev.violations
    res.metrics = dict(ev.metrics)


def _check_options(name: str, fn: Any, options: dict[str, Any]) -> None:
    params = inspect.signature(fn).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return
    allowed = [p for p, v in params.items() if v.kind is inspect.Parameter.KEYWORD_ONLY]
    for key in options:
        if key not in allowed:
            raise UnknownNameError(
                f"option: {key!r} is not an option of {name} (options: {', '.join(allowed)})"
            )


def heuristic(instance: Any, name: str, *, seed: int = 0, **options: Any) -> Result:
    """Run the heuristic ``name`` and return the evaluated :class:`Result`.

    A heuristic whose solution fails the evaluator gives status ``error`` with the first
    violated rule as the message (its objective is still reported).
    """
    problem = registry.of(instance)
    fn = problem.heuristic(name)
    _check_options(name, fn, {"seed": seed, **options})
    t0 = time.perf_counter()
    solution = fn(instance, seed=seed, **options)
    seconds = time.perf_counter() - t0
    ev = problem.model.evaluate(instance, solution)
    res = Result(problem=problem.name, method=name, status="feasible" if ev.feasible else "error",
                 seconds=seconds, options={"seed": seed, **options})
    _fill(res, solution, ev)
    if not ev.feasible:
        res.message = f"infeasible heuristic solution: {ev.violations[0]}"
    return res


def export(instance: Any, path: str | Path, formulation: str | None = None,
           size_limit: tuple[int, int] | None = None) -> Path:
    """Write the model as LP or MPS (by the extension) with readable, symbolic names."""
    path = Path(path)
    if path.suffix not in (".lp", ".mps"):
        raise InstanceError("path", str(path), "must end in .lp or .mps")
    model = build(instance, formulation, size_limit)
    with atomic_path(path) as tmp:
        model.write(str(tmp), io_options={"symbolic_solver_labels": True})
    return path


def generate(problem: str, spec: dict[str, Any] | None = None, seed: int = 0) -> Any:
    """An instance from a problem's generator: ``spec = {"generator": name, **params}``.

    Deterministic for a seed.
    """
    prob = registry.get(problem)
    spec = dict(spec or {})
    gen_name = spec.pop("generator", None) or next(iter(prob.model.GENERATORS))
    try:
        gen = prob.model.GENERATORS[gen_name]
    except KeyError:
        raise UnknownNameError(
            f"generator: {gen_name!r} is not a {problem} generator "
            f"(available: {', '.join(prob.generators)})"
        ) from None
    _check_options(gen_name, gen, {"seed": seed, **spec})
    return gen(seed=seed, **spec)
