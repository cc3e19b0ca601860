"""The public entry points: ``solve``, ``heuristic``, ``bound``, ``evaluate``, ``export``,
``generate``. The exact stage ``solve`` ends in (the MIP, and a problem's exact bound method
before it) is :mod:`dmlopt.exact`.

They are problem-agnostic: the registry finds the problem of an instance from its ``problem``
field and every objective reported is re-computed by that problem's evaluator.
"""

from __future__ import annotations

import functools
import inspect
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pydantic

from dmlopt import registry, solvers
from dmlopt.arguments import (  # noqa: F401 (check_option_names, OWN_ARGUMENTS: public names)
    OWN_ARGUMENTS,
    check_huge,
    check_name,
    check_option_names,
)
from dmlopt.contract import (
    DEFAULT_LIMITS,
    Limits,
    Options,
    Size,
    check_run_size,
    limits_from,
    limits_in_force,
)
from dmlopt.errors import (
    InstanceError,
    Interrupted,
    ModelTooLargeError,
    ObjectiveMismatchError,
    SolverError,
    UnknownNameError,
)
from dmlopt.evaluation import Evaluation
from dmlopt.exact import (  # noqa: F401 (OBJECTIVE_TOL, EXACT_SHARE, ...: public api names)
    BUILD_SECONDS_PER_ROW,
    EXACT_SHARE,
    OBJECTIVE_TOL,
    _build_estimate,
    _fill,
    _interruptible,
    _solve_exact,
    _solve_mip,
    build_fits,
    proven,
)
from dmlopt.io import atomic_path, load_solution
from dmlopt.result import Result, relative_gap
from dmlopt.validation import error_from_pydantic

#: default size guard (variables, constraints) of models; see :class:`dmlopt.contract.Limits`
DEFAULT_SIZE_LIMIT = (DEFAULT_LIMITS.variables, DEFAULT_LIMITS.constraints)

#: the largest seed accepted (seeds are stored as SQLite integers)
MAX_SEED = 2**63 - 1


def _with_limits(fn: Any) -> Any:
    """Run an entry point with its ``size_limit`` argument in force for the code it calls
    (:func:`dmlopt.contract.limits_in_force`): a problem that builds something large lazily
    checks it against the limits the user passed, not only against the environment."""
    sig = inspect.signature(fn)

    positional = [name for name, p in sig.parameters.items()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        twice = [k for k in positional[: len(args)] if k in kwargs]
        if twice:  # f(inst, "rts", name="x"): an option named like the call's own argument
            raise InstanceError(twice[0], kwargs[twice[0]],
                                f"is given twice: {twice[0]} is an argument of "
                                f"dmlopt.{fn.__name__}, given by position already, and cannot "
                                "be an option")
        bound = sig.bind_partial(*args, **kwargs)
        with limits_in_force(limits_from(bound.arguments.get("size_limit"))):
            return fn(*args, **kwargs)

    return wrapper


def as_instance(instance: Any) -> Any:
    """An instance object as is; a path, a shipped name (``"tabgp/er12-p03-tau1-s0"``), a
    reference library id (``"tap/qaplib-nug12"``) or a dict loaded and validated
    (:func:`dmlopt.loading.load`), as the command line takes them."""
    from dmlopt import loading

    if isinstance(instance, str | Path | dict):
        return loading.load(instance)
    return instance


def size_limit_from_env() -> tuple[int, int]:
    """The (variables, constraints) limit of models in force (``DMLOPT_SIZE_LIMIT``)."""
    lim = limits_from(None)
    return lim.variables, lim.constraints


def default_formulation(problem: registry.Problem, solver: str | None = None) -> str:
    """The formulation ``dmlopt.solve`` uses when none is named.

    The problem's ``DEFAULT_FORMULATION`` (its fastest formulation that the tests prove equal
    to the paper's) when ``solver`` can solve it; else the paper's when it can; else the first
    one it can. A problem whose paper model needs another solver (TAP's quadratic MINLP) thus
    still solves with ``dmlopt.solve(instance)``.
    """
    names = problem.formulations
    if not names:
        raise UnknownNameError(
            f"formulation: {problem.name} has no exact formulation (use a heuristic: "
            f"{', '.join(sorted(problem.heuristics))})"
        )
    usable = [f for f in names if solver is None or solver_allowed(problem, f, solver)]
    candidates = usable or names
    for preferred in (getattr(problem.model, "DEFAULT_FORMULATION", None), "paper"):
        if preferred in candidates:
            return preferred
    return candidates[0]


def solver_allowed(problem: registry.Problem, formulation: str, solver: str) -> bool:
    """Whether ``solver`` can solve ``formulation`` (a formulation may name its solvers)."""
    allowed = problem.formulation(formulation).solvers
    return not allowed or solver in allowed or solvers.ALIASES.get(solver) in allowed


def check_seed(seed: Any) -> int:
    """A seed is an integer in [0, 2**63 - 1]."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or \
            not 0 <= int(seed) <= MAX_SEED:
        raise InstanceError("seed", seed, f"must be an integer in [0, {MAX_SEED}]")
    return int(seed)


def check_size(
    instance: Any, formulation: str | None = None, size_limit: Any = None
) -> tuple[int, int]:
    """Estimate the model size and refuse it above the limit (before anything is built)."""
    problem = registry.of(instance)
    formulation = formulation or default_formulation(problem)
    entry = problem.formulation(formulation)
    n_vars, n_cons = entry.estimate_size(instance)
    lim = limits_from(size_limit)
    if n_vars > lim.variables or n_cons > lim.constraints:
        raise ModelTooLargeError(
            f"model too large: the {formulation!r} formulation of this {problem.name} instance "
            f"has about {n_vars:,} variables and {n_cons:,} constraints, above the limit "
            f"{lim.variables:,} / {lim.constraints:,}; pass size_limit=(V, C) (CLI: "
            "--size-limit V,C, or DMLOPT_SIZE_LIMIT=V,C) to build it anyway"
        )
    return n_vars, n_cons


@_with_limits
def build(instance: Any, formulation: str | None = None, size_limit: Any = None) -> Any:
    """The Pyomo model of ``instance`` in ``formulation`` (default: the one :func:`solve` uses,
    :func:`default_formulation`), after the size guard."""
    instance = as_instance(instance)
    problem = registry.of(instance)
    formulation = formulation or default_formulation(problem)
    check_size(instance, formulation, size_limit)
    return problem.formulation(formulation).build(instance)


@_with_limits
def evaluate(instance: Any, solution: Any, size_limit: Any = None) -> Evaluation:
    """Score a solution (object, dict or JSON path) with the problem's evaluator."""
    instance = as_instance(instance)
    problem = registry.of(instance)
    if not isinstance(solution, problem.model.Solution):
        solution = load_solution(instance, solution)
    return problem.model.evaluate(instance, solution)


def _resolve_start(instance: Any, warm_start: Any, size_limit: Any = None) -> Any:
    """A warm start: a heuristic name, a Solution, a solution dict, or a solution file path;
    it must pass the evaluator (a formulation's start writer may index by its values)."""
    start = _start_of(instance, warm_start, size_limit)
    ev = registry.of(instance).model.evaluate(instance, start)
    if not ev.feasible:
        raise InstanceError("warm_start", ev.violations[0], "is not a feasible start")
    return start


def _start_of(instance: Any, warm_start: Any, size_limit: Any = None) -> Any:
    """The solution ``warm_start`` names (see :func:`_resolve_start`), not yet evaluated."""
    problem = registry.of(instance)
    if isinstance(warm_start, problem.model.Solution):
        return warm_start
    if isinstance(warm_start, str) and warm_start in problem.heuristics:
        return run_heuristic(instance, warm_start, seed=0, size_limit=size_limit)
    if isinstance(warm_start, str | Path) and (
        Path(warm_start).exists() or str(warm_start).endswith(".json") or "/" in str(warm_start)
    ):
        if not Path(warm_start).exists():
            raise InstanceError("warm_start", str(warm_start), "does not exist (a solution "
                                "file or a heuristic name)")
        return load_solution(instance, warm_start)
    if isinstance(warm_start, str):
        raise UnknownNameError(
            f"warm_start: {warm_start!r} is neither a solution file nor a {problem.name} "
            f"heuristic (heuristics: {', '.join(sorted(problem.heuristics))})"
        )
    return load_solution(instance, warm_start)


@_with_limits
def solve(
    instance: Any,
    solver: str = "highs",
    *,
    time_limit: float | None = None,
    mip_gap: float | None = None,
    threads: int | None = None,
    formulation: str | None = None,
    warm_start: Any = None,
    size_limit: Any = None,
    tee: bool = False,
    solver_options: dict[str, Any] | None = None,
    progress: float | None = None,
) -> Result:
    """Solve ``instance`` exactly with a Pyomo solver and return the evaluated :class:`Result`.

    Parameters
    ----------
    solver : "highs" (default), "scip", or any name Pyomo's SolverFactory knows.
    time_limit, mip_gap, threads : passed to the solver (seconds, relative gap, threads).
    formulation : one of the problem's ``FORMULATIONS``; default: the problem's fastest
        formulation proven equal to the paper's (``DEFAULT_FORMULATION``, ``dmlopt list
        PROBLEM`` marks it), else "paper" when ``solver`` can solve it, else the first it can.
    warm_start : a Solution, a solution dict/path, or a heuristic name whose solution seeds
        the solver; it must be feasible (:class:`InstanceError` naming its first violation
        otherwise). A solver stopped before it produced an incumbent returns the (re-evaluated,
        feasible) start instead, so a warm-started run is never worse than its start.
    size_limit : (variables, constraints) above which the model is refused before building.
    progress : seconds between progress lines on stderr (HiGHS: incumbent, bound, gap and
        elapsed time); None (default) for none.

    With HiGHS and no formulation named, a bound method the problem declares exact for the
    default formulation (:class:`dmlopt.contract.Bound` ``exact``; INC/OXC's
    ``bisection``) runs first with its ``share`` of ``time_limit`` (default
    :data:`EXACT_SHARE`; until it ends when there is none): its solution is ``optimal`` when
    the evaluated objective meets its bound (:func:`proven`); otherwise the MIP gets the rest
    of the time, warm-started from it, and is graded against the tighter of the two bounds.
    The message names the method.

    Ctrl-C stops the solver within seconds and raises :class:`dmlopt.errors.Interrupted`
    carrying the incumbent, evaluated (``exc.result``, status ``interrupted``).

    Raises
    ------
    SolverError, UnknownNameError, ModelTooLargeError, InstanceError
        On bad input (the CLI exits 2 on them).
    ObjectiveMismatchError
        If the solver's objective and the evaluator's disagree: a modelling bug.
    """
    instance = as_instance(instance)
    problem = registry.of(instance)
    solvers.check(solver)
    check_huge(time_limit=time_limit, mip_gap=mip_gap)
    solvers.check_settings(time_limit, mip_gap, threads)
    solvers.check_options(solver, solver_options)
    if progress is not None and (isinstance(progress, bool) or not isinstance(
            progress, int | float) or not 0 < progress < float("inf")):
        raise InstanceError("progress", progress, "must be a number of seconds > 0")
    named = formulation is not None
    formulation = formulation or default_formulation(problem, solver)
    check_size(instance, formulation, size_limit)
    _check_solver(problem, formulation, solver)
    start = _resolve_start(instance, warm_start, size_limit) if warm_start is not None else None
    mip = functools.partial(_solve_mip, problem, instance, formulation=formulation,
                            solver=solver, mip_gap=mip_gap, threads=threads, tee=tee,
                            solver_options=solver_options, progress=progress)
    exact = None if named else _exact_bound(problem, instance, formulation, solver,
                                            limits_from(size_limit))
    if exact is None:
        build_fits(problem, instance, formulation, time_limit)
        return mip(time_limit=time_limit, start=start)
    return _solve_exact(problem, instance, exact, mip, time_limit=time_limit, start=start)



#: the share of ``solve``'s time limit an exact bound method (``Bound.exact``) gets before the MIP

def _exact_bound(problem: Any, instance: Any, formulation: str, solver: str,
                 limits: Limits) -> str | None:
    """The first bound method declared exact for ``formulation`` (``Bound.exact``) that fits
    the size limits, when ``solver`` is HiGHS (the solver such methods drive); else None."""
    if solvers.ALIASES.get(solver) != "highs":
        return None
    for name, entry in problem.bound_entries.items():
        if formulation not in entry.exact:
            continue
        try:
            _fits(instance, entry, entry.Options(), limits, name)
        except ModelTooLargeError:
            continue
        return name
    return None



def _check_solver(problem: registry.Problem, formulation: str, solver: str) -> None:
    """Refuse a solver that cannot solve ``formulation``: a :class:`~dmlopt.contract.Formulation`
    may name the solvers that can (``solvers``; e.g. a nonconvex quadratic model: SCIP only)."""
    if not solver_allowed(problem, formulation, solver):
        allowed = problem.formulation(formulation).solvers or ()
        raise SolverError(
            f"solver: {solver!r} cannot solve the {problem.name} {formulation!r} formulation "
            f"(use {' or '.join(allowed)}, or another formulation: "
            f"{', '.join(f for f in problem.formulations if f != formulation)})"
        )




def validate_options(model: type[Options], values: Any, owner: str, kind: str = "option",
                     where: str = "") -> Options:
    """Validate ``values`` into the options (or parameters) model of ``owner``.

    One :class:`InstanceError` naming the key, the value and the rule; an unknown key lists the
    valid ones, e.g. ``depth: 2 is not an option of random (options: none)``.
    """
    prefix = f"{where}." if where else ""
    if not isinstance(values, dict):
        raise InstanceError(where or f"{kind}s", values, "must be a mapping of name = value")
    known = ", ".join(model.model_fields) or "none"
    article = "a parameter" if kind == "param" else "an option"
    for key, value in values.items():
        if key not in model.model_fields:
            raise UnknownNameError(f"{prefix}{key}: {_shown(value)} is not {article} of {owner} "
                                   f"({kind}s: {known})")
    try:
        return model.model_validate(values)
    except pydantic.ValidationError as exc:
        raise error_from_pydantic(exc, where) from None


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def run_heuristic(instance: Any, name: str, *, seed: int = 0, size_limit: Any = None,
                  **options: Any) -> Any:
    """The Solution of heuristic ``name`` after the boundary checks (not evaluated).

    Parameters
    ----------
    instance : the problem instance (validated).
    name : a heuristic of the instance's problem (registered, or added as a plain function).
    seed : integer seed in [0, 2^63 - 1].
    size_limit : limits the heuristic's estimated memory and work are checked against.
    **options : the heuristic's options, checked against its options model.

    Returns
    -------
    Solution
        An instance of the problem's Solution class.

    Raises
    ------
    InstanceError
        A bad seed or option, or a heuristic that returned anything but its problem's
        Solution (a dict, None, another problem's Solution): the message names the type
        returned and the class expected.
    """
    problem = registry.of(instance)
    entry = problem.heuristic(name)
    seed = check_seed(seed)
    opts = validate_options(entry.Options, options, name)
    check_run_size(f"the {name} heuristic on this {problem.name} instance",
                   Size(*entry.estimate(instance, opts)), limits_from(size_limit))
    solution = _interruptible(entry.function, instance, seed=seed, **_kwargs(opts, options))
    return _checked_solution(problem, name, solution)




def _checked_solution(problem: Any, name: str, solution: Any) -> Any:
    """``solution`` if it is an instance of the problem's Solution class; otherwise an
    :class:`InstanceError` naming what heuristic ``name`` returned and the class expected, e.g.
    ``heuristic mine returned dict, not a dmlopt.models.tabgp.Solution``."""
    expected = problem.model.Solution
    if isinstance(solution, expected):
        return solution
    message = (f"heuristic {name} returned {_type_name(solution)}, not a "
               f"{problem.model.__name__}.{expected.__name__} (a heuristic returns its "
               "problem's Solution)")
    raise InstanceError(name, type(solution).__name__, message=message)


def _type_name(value: Any) -> str:
    """A short public name of ``value``'s type: ``dict``, ``None``, or a problem's Solution as
    ``dmlopt.models.<problem>.Solution`` (the module it is exported from)."""
    if value is None:
        return "None"
    cls = type(value)
    if cls.__module__ == "builtins":
        return cls.__qualname__
    parts = cls.__module__.split(".")
    if parts[:2] == ["dmlopt", "models"] and len(parts) > 2:
        package = ".".join(parts[:3])
        if getattr(sys.modules.get(package), cls.__name__, None) is cls:
            return f"{package}.{cls.__name__}"
    return f"{cls.__module__}.{cls.__qualname__}"


def _kwargs(model: Options, given: dict[str, Any]) -> dict[str, Any]:
    """The validated values to call with: every field of a declared options model; only the
    keys given for a model derived from the function's signature (its own defaults apply)."""
    names = given if getattr(type(model), "derived", False) else type(model).model_fields
    return {k: getattr(model, k) for k in names}


@_with_limits
def heuristic(instance: Any, name: Any = None, *, seed: int = 0, size_limit: Any = None,
              **options: Any) -> Result:
    """Run the heuristic ``name`` and return the evaluated :class:`Result`.

    Parameters
    ----------
    instance : an instance object, a path, a shipped name or a dict (:func:`as_instance`).
    name : a heuristic of the instance's problem; default: the problem's recommended heuristic
        for this instance (its heuristics module's ``RECOMMENDED``; ``dmlopt list`` marks it).
        A function of one's own, ``f(instance, *, seed=0, **options) -> Solution``, runs
        through the same checks (:func:`dmlopt.own_function.run`); an exception inside it is a
        :class:`dmlopt.errors.UserFunctionError` naming it.
    seed : integer seed in [0, 2^63 - 1].
    size_limit : limits the heuristic's estimated memory and work are checked against before
        it starts (see :class:`dmlopt.contract.Limits`).
    **options : the heuristic's options, checked against its options model (``dmlopt list
        PROBLEM`` lists them); an option named like an argument above is refused by name.

    Returns
    -------
    Result
        Status ``feasible``, or ``error`` with the first violated rule as the message when the
        evaluator refuses the solution (its objective is still reported).

    References
    ----------
    Each heuristic's own docstring; the recommended one per problem: docs/<problem>.md.
    """
    instance = as_instance(instance)
    if name is not None and not isinstance(name, str):
        from dmlopt import own_function  # a function of one's own (else refused there)

        return own_function.run(instance, name, seed=seed, size_limit=size_limit, **options)
    problem = registry.of(instance)
    if name is None:
        name = problem.recommended_heuristic_for(instance)
    t0 = time.perf_counter()
    try:
        solution = run_heuristic(instance, name, seed=seed, size_limit=size_limit, **options)
    except Interrupted as exc:  # Ctrl-C: the best solution so far, evaluated, rides along
        exc.result = _heuristic_result(problem, instance, name, seed, options, exc.solution,
                                       time.perf_counter() - t0)
        if exc.result.status == "feasible":
            exc.result.status = "interrupted"
        exc.result.message = ("interrupted (Ctrl-C): the best solution found so far"
                              + (f"; {exc.result.message}" if exc.result.message else ""))
        raise
    return _heuristic_result(problem, instance, name, seed, options, solution,
                             time.perf_counter() - t0)


def _heuristic_result(problem: Any, instance: Any, name: str, seed: int,
                      options: dict[str, Any], solution: Any, seconds: float) -> Result:
    """The evaluated :class:`Result` of a heuristic's solution."""
    ev = problem.model.evaluate(instance, solution)
    res = Result(problem=problem.name, method=name, status="feasible" if ev.feasible else "error",
                 seconds=seconds, options={"seed": seed, **options})
    _fill(res, solution, ev)
    if not ev.feasible:
        res.message = f"infeasible heuristic solution: {ev.violations[0]}"
    return res


@_with_limits
def export(instance: Any, path: str | Path, formulation: str | None = None,
           size_limit: Any = None) -> Path:
    """Write the model as LP or MPS (by the extension) with readable, symbolic names."""
    instance = as_instance(instance)
    path = _export_path(path)
    write_model(build(instance, formulation, size_limit), path)
    return path


def _export_path(path: str | Path) -> Path:
    path = Path(path)
    if path.suffix not in (".lp", ".mps"):
        raise InstanceError("path", str(path), "must end in .lp or .mps")
    return path


def write_model(model: Any, path: str | Path, counts: bool = True) -> dict[str, int]:
    """Write a built Pyomo model as LP or MPS (symbolic names, atomically); return its true
    counts: ``variables`` (of which ``integer``), ``constraints``, ``quadratic`` (constraints or
    objective terms with products, as in TAP's MINLP); ``{}`` with ``counts=False`` (a walk
    over every constraint: a fifth of the writing time)."""
    import pyomo.environ as pyo

    path = _export_path(path)
    with atomic_path(path) as tmp:
        model.write(str(tmp), io_options={"symbolic_solver_labels": True})
    if not counts:
        return {}
    variables = [v for v in model.component_data_objects(pyo.Var, active=True)]
    cons = list(model.component_data_objects(pyo.Constraint, active=True))
    objs = list(model.component_data_objects(pyo.Objective, active=True))
    quadratic = sum(1 for c in cons if c.body.polynomial_degree() not in (0, 1, None))
    quadratic += sum(1 for o in objs if o.expr.polynomial_degree() not in (0, 1, None))
    return {"variables": len(variables),
            "integer": sum(1 for v in variables if not v.is_continuous()),
            "constraints": len(cons), "quadratic": quadratic}


@_with_limits
def generate(problem: str, spec: dict[str, Any] | None = None, seed: int = 0,
             size_limit: Any = None) -> Any:
    """An instance from a problem's generator: ``spec = {"generator": name, **params}``.

    Deterministic for a seed. The parameters are checked against the generator's parameter
    model and its estimated memory and work against the size limit before it starts.
    """
    prob = registry.get(problem)
    if spec is not None and not isinstance(spec, dict):
        raise InstanceError("spec", spec, "must be a mapping {generator: name, **params}")
    spec = dict(spec or {})
    gen_name = spec.pop("generator", None) or (prob.generators[0] if prob.generators else "")
    entry = prob.generator(gen_name)
    seed = check_seed(seed)
    params = validate_options(entry.Params, spec, gen_name, "param")
    check_run_size(f"the {problem} generator {gen_name!r} with these parameters",
                   Size(*entry.estimate(params)), limits_from(size_limit))
    try:
        return entry.function(seed=seed, **_kwargs(params, spec))
    except pydantic.ValidationError as exc:  # parameters whose instance breaks a rule
        raise InstanceError("spec", message=f"spec: the {gen_name} generator's instance for "
                            f"these parameters breaks a rule: {error_from_pydantic(exc)}"
                            ) from None


def _fits(instance: Any, entry: Any, options: Options, limits: Limits, what: str) -> None:
    """Refuse a bound run above the limits: its model (when it relaxes a formulation) and its
    estimated memory and work."""
    if entry.formulation is not None:
        check_size(instance, entry.formulation, limits)
    check_run_size(what, Size(*entry.estimate(instance, options)), limits)


def _default_order(problem: registry.Problem, instance: Any) -> list[str]:
    """The bound methods in the order ``dmlopt.bound`` tries them when none is named: the exact
    algorithms listed before the recommended one (a ``Bound`` with ``exact``: on an instance
    small enough for them they give the optimum, as TABGP's ``enum``), the recommended one
    (``RECOMMENDED_BOUND``), then the others of ``BOUNDS``, strongest first."""
    names = list(problem.bound_entries)
    first = problem.recommended_bound_for(instance)
    if first not in names:
        return names
    exact = [n for n in names[:names.index(first)] if getattr(problem.bound(n), "exact", ())]
    head = [*exact, first]
    return head + [n for n in names if n not in head]


def _strongest(problem: registry.Problem, instance: Any, limits: Limits) -> str:
    """The first bound method (the recommended one, then ``BOUNDS``, strongest first) that fits
    the limits."""
    refused = []
    for name in _default_order(problem, instance):
        entry = problem.bound(name)
        try:
            _fits(instance, entry, entry.Options(), limits, name)
        except ModelTooLargeError:
            refused.append(name)
            continue
        return name
    raise ModelTooLargeError(
        f"bound: every {problem.name} bound method is above the size limit for this instance "
        f"({', '.join(refused)}); pass size_limit= (CLI --size-limit) to run one anyway")


def _first_bound(problem: registry.Problem, instance: Any, limits: Limits,
                 time_limit: float | None) -> tuple[str, Any, list[str]]:
    """The first bound method (the recommended one, then strongest first) that fits the
    limits and returns a bound; a
    method that gives none in time (a solver stopped before its first bound) is noted and the
    next one tried. Raises the first method's error when none gives a bound."""
    first = _strongest(problem, instance, limits)
    names = _default_order(problem, instance)
    fell: list[str] = []
    error: SolverError | None = None
    for name in names[names.index(first):]:
        entry = problem.bound(name)
        try:
            _fits(instance, entry, entry.Options(), limits, name)
            return name, _interruptible(entry.function, instance, time_limit=time_limit), fell
        except ModelTooLargeError:
            continue
        except SolverError as exc:
            error = error or exc
            fell.append(f"{name}: no bound ({' '.join(str(exc).split())[:160]})")
    assert error is not None
    raise error


@_with_limits
def bound(instance: Any, method: str | None = None, *, time_limit: float | None = None,
          size_limit: Any = None, **options: Any) -> Result:
    """A dual bound on the optimum of ``instance``: lower for a minimisation, upper for a
    maximisation.

    Parameters
    ----------
    instance : an instance of any registered problem with bound methods.
    method : one of the problem's ``BOUNDS`` (``dmlopt list PROBLEM`` shows them); default:
        the recommended one (``RECOMMENDED_BOUND``, marked by ``dmlopt list``) when it fits
        the size limits and gives a bound, else the strongest that does.
    time_limit : seconds for an iterative method (None: the method's own default); a method
        stopped by it still returns a valid bound.
    size_limit : see :func:`solve` and :class:`dmlopt.contract.Limits`.
    options : the method's options, checked against its options model.

    Returns
    -------
    Result
        ``status "bound"``, ``bound``, ``objective`` the evaluated value of a feasible solution
        found on the way (else None), ``gap`` between them, ``seconds``, ``metrics`` from the
        method.

    Raises
    ------
    ObjectiveMismatchError
        If a feasible solution beats the bound: the bound method is wrong (a bug).

    Examples
    --------
    >>> import dmlopt
    >>> inst = dmlopt.load("tabgp/er12-p03-tau1-s0")
    >>> res = dmlopt.bound(inst, "lp")
    >>> res.status, res.bound <= dmlopt.solve(inst).objective
    ('bound', True)
    """
    instance = as_instance(instance)
    problem = registry.of(instance)
    if not problem.bound_entries:
        raise UnknownNameError(f"bound: {problem.name} has no bound method (it has no "
                               "objective to bound, or none is implemented)")
    check_name("method", method, "bound method")
    if time_limit is not None:
        check_huge(time_limit=time_limit)
        solvers.check_settings(time_limit=time_limit)
    limits = limits_from(size_limit)
    if method is None and options:
        raise InstanceError("options", options, "need a bound method (method=NAME): options "
                            "differ between methods")
    t0 = time.perf_counter()
    if method is None:  # the strongest that fits and gives a bound within the time limit
        name, value, fell = _first_bound(problem, instance, limits, time_limit)
    else:
        name, fell = method, []
        entry = problem.bound(name)
        opts = validate_options(entry.Options, options, name)
        _fits(instance, entry, opts, limits, f"the {name} bound on this {problem.name} instance")
        value = _interruptible(entry.function, instance, time_limit=time_limit,
                               **_kwargs(opts, options))
    seconds = time.perf_counter() - t0
    b = float(value.bound)
    if not np.isfinite(b):
        raise ObjectiveMismatchError(f"bound {name}: returned the non-finite value {b!r}")
    res = Result(problem=problem.name, method=f"bound:{name}", status="bound", bound=b,
                 seconds=seconds, options={k: v for k, v in (("time_limit", time_limit),)
                                          if v is not None} | dict(options),
                 metrics=dict(value.metrics))
    if fell:
        res.message = "; ".join(fell)
    if value.solution is not None:
        ev = problem.model.evaluate(instance, value.solution)
        if ev.feasible:
            res.solution, res.objective, res.feasible = value.solution, ev.objective, True
            tol = OBJECTIVE_TOL * max(1.0, abs(ev.objective))
            sign = 1.0 if problem.sense == "min" else -1.0
            if sign * (b - ev.objective) > tol:
                raise ObjectiveMismatchError(
                    f"bound {name}: {b!r} is beaten by a feasible solution of objective "
                    f"{ev.objective!r}: the bound is invalid")
            res.gap = relative_gap(ev.objective, b)
    if value.metrics.get("interrupted"):  # Ctrl-C: the bound reached so far is the answer
        res.message = "; ".join([*fell, "interrupted: the bound reached so far"])
        raise Interrupted(res.solution, result=res)
    return res


def _formulation_of(instance: Any, formulation: str | None) -> tuple[Any, str]:
    problem = registry.of(instance)
    name = formulation or default_formulation(problem)
    problem.formulation(name)  # an unknown name lists the valid ones
    return problem, name


def decode(instance: Any, model: Any, formulation: str | None = None) -> Any:
    """The problem's Solution from the variable values of a solved Pyomo model.

    Parameters
    ----------
    instance : the instance the model was built for (:func:`build`).
    model : the Pyomo model, its variables holding values (after any solver, or set by hand).
    formulation : the formulation it was built in; default: the same default as :func:`build`
        and :func:`export` (the one :func:`solve` uses, :func:`default_formulation`).

    Returns
    -------
    Solution
        Decoded by the formulation's own decoder (or the problem's ``decode``); score it with
        :func:`evaluate`.

    References
    ----------
    The decoders follow each problem's formulation, docs/<problem>.md; docs/interop.md shows a
    model solved outside dmlopt and decoded.
    """
    problem, name = _formulation_of(instance, formulation)
    entry = problem.formulation(name)
    return (entry.decode or problem.model.decode)(model, instance)


@_with_limits
def read_solution(instance: Any, path: str | Path, formulation: str | None = None,
                  size_limit: Any = None) -> Any:
    """The Solution in a solution file another solver wrote for a model ``dmlopt export``
    wrote.

    The file's format is recognised by its content: HiGHS ``writeSolution`` (raw and pretty
    styles), SCIP ``.sol``, Gurobi ``.sol`` or plain ``name value`` lines, CPLEX XML ``.sol``
    (a dmlopt solution JSON is read as such). The model is built again for ``instance`` in
    ``formulation``, every name in the file is mapped to its variable (the symbolic names of
    the export, ``x(1_2)`` for ``x[1,2]``), every value checked against the variable's bounds
    and integrality, variables the file leaves out set to 0, and the values decoded by the
    formulation's decoder.

    Parameters
    ----------
    instance : the instance the model was exported for.
    path : the solution file (read with the bounded reader: a regular file, at most
        ``DMLOPT_MAX_FILE_BYTES``).
    formulation : the formulation exported; default: the same default as :func:`export`.
    size_limit : see :func:`solve`.

    Returns
    -------
    Solution
        The problem's solution; :func:`evaluate` scores it.

    Raises
    ------
    InstanceError
        A file in no known format (naming the formats expected), an unknown or missing
        variable, a non-finite, out-of-bounds or fractional integer value, a file naming none
        of the model's variables, or an objective reported in the file that the values do not
        give in this model (the file is for another instance).

    References
    ----------
    docs/interop.md; the formats are described in :mod:`dmlopt.solution_files`.
    """
    from dmlopt import solution_files

    instance = as_instance(instance)
    if solution_files.is_json(path):
        return load_solution(instance, path)
    parsed = solution_files.parse(path)
    problem, name = _formulation_of(instance, formulation)
    model = build(instance, name, size_limit)
    solution_files.assign(model, parsed, path)
    solution_files.check_objective(model, parsed, path, rel_tol=1e-4)
    try:
        return decode(instance, model, name)
    except InstanceError:
        raise
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        raise InstanceError("solution", str(path), f"does not decode to a {problem.name} "
                            f"solution in the {name!r} formulation ({type(exc).__name__}: "
                            f"{exc})") from None
