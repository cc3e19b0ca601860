"""A heuristic of one's own, given as a Python function: ``dmlopt.heuristic(instance,
function)``.

The function has the shape the benchmark suites' ``"module:function"`` heuristics have::

    f(instance, *, seed=0, **options) -> Solution

and runs through the boundary of a shipped heuristic: the seed checked, its keyword-only
parameters typed by their annotations and checked like a shipped heuristic's options (a
function that also takes ``**options`` receives the others as given), the call timed, what it
returns refused unless it is the problem's ``Solution``, the solution scored by the problem's
evaluator. An exception inside the function is the user's: :class:`UserFunctionError` names the
function and the exception (chained, so the traceback is kept), never dmlopt's "internal
error".
"""

from __future__ import annotations

import functools
import inspect
import time
from typing import Any

from dmlopt import api, registry
from dmlopt.contract import Size, check_run_size, limits_from
from dmlopt.errors import InstanceError, UserFunctionError

#: the documented shape, quoted in refusals
SHAPE = "f(instance, *, seed=0, **options) -> Solution"


def function_name(function: Any) -> str:
    """The name a function runs under (the Result's ``method``): ``module:qualname`` as a
    suite names it (``mine:mine``), the bare qualified name for a script's own function.

    Parameters
    ----------
    function : a function, a ``functools.partial`` of one, a callable object or a
        :class:`dmlopt.contract.Heuristic`.

    Returns
    -------
    str

    References
    ----------
    docs/benchmarks.md, "Your own heuristic" (the ``module:function`` names of suites).
    """
    target = getattr(function, "function", function)  # a contract.Heuristic
    while isinstance(target, functools.partial):
        target = target.func
    qual = getattr(target, "__qualname__", None) or type(target).__qualname__
    module = getattr(target, "__module__", None) or ""
    return qual if module in ("", "__main__", "builtins") else f"{module}:{qual}"


def run(instance: Any, function: Any, *, seed: int = 0, size_limit: Any = None,
        **options: Any) -> Any:
    """Run ``function`` as a heuristic of the instance's problem and return the evaluated
    :class:`dmlopt.Result` (``dmlopt.heuristic`` calls this for a function).

    Parameters
    ----------
    instance : the instance (loaded).
    function : ``f(instance, *, seed=0, **options) -> Solution``, or a
        :class:`dmlopt.contract.Heuristic` (its options model and estimate are used).
    seed : integer seed in [0, 2^63 - 1], passed as ``seed=``.
    size_limit : limits a Heuristic's estimate is checked against (a plain function's is 0).
    **options : passed to the function as keyword arguments: those it names are checked
        against their annotations (an unknown one is refused unless it takes ``**options``).

    Returns
    -------
    Result
        ``method`` the function's name (:func:`function_name`), ``status`` ``feasible`` (or
        ``error`` with the first violated rule, as for a shipped heuristic), ``objective`` by
        the evaluator, ``seconds`` the call's wall time, ``options`` the seed and the options.

    Raises
    ------
    InstanceError
        Not a callable of the documented shape, a bad seed or option, or a return value that
        is not the problem's Solution (naming what was returned).
    UserFunctionError
        The function raised: names the function and the exception (chained).

    References
    ----------
    docs/benchmarks.md, "Your own heuristic"; docs/interop.md, "Your own function, certified".
    """
    problem = registry.of(instance)
    name = function_name(function) if callable(function) else repr(function)
    if not callable(function):
        raise InstanceError("name", function, "must be the name of a heuristic (a string; see "
                            f"`dmlopt list PROBLEM`) or a function {SHAPE}")
    passes = _check_shape(function, name)
    entry = registry.as_heuristic(function, name)
    seed = api.check_seed(seed)
    declared = {k: v for k, v in options.items() if k in entry.Options.model_fields}
    extra = {k: v for k, v in options.items() if k not in declared}
    unknown = [k for k in extra if not passes(k)]
    opts = api.validate_options(entry.Options, options if unknown else declared, name)
    kwargs = {**api._kwargs(opts, declared), **extra}
    check_run_size(f"the function {name} on this {problem.name} instance",
                   Size(*entry.estimate(instance, opts)), limits_from(size_limit))
    t0 = time.perf_counter()
    try:
        solution = api._interruptible(entry.function, instance, seed=seed, **kwargs)
    except KeyboardInterrupt:
        raise
    except Exception as exc:
        raise UserFunctionError(
            f"heuristic {name} raised {type(exc).__name__}: {' '.join(str(exc).split())}"
            f" (in the function given to dmlopt.heuristic, not in dmlopt)") from exc
    seconds = time.perf_counter() - t0
    solution = api._checked_solution(problem, name, solution)
    try:
        return api._heuristic_result(problem, instance, name, seed, options, solution,
                                     seconds)
    except (AttributeError, TypeError, ValueError, KeyError, IndexError) as exc:
        raise InstanceError(name, type(solution).__name__, message=(
            f"heuristic {name} returned a {problem.model.__name__}.Solution the evaluator "
            f"cannot score ({type(exc).__name__}: {exc}); build it with Solution(...), "
            "which checks its fields")) from None


def _check_shape(function: Any, name: str) -> Any:
    """Refuse a function that cannot be called as ``f(instance, seed=...)``; return which
    options not typed as keyword-only parameters it takes as they are (all of them when it
    takes ``**options``; those of its other parameters that may be passed by name)."""
    target = getattr(function, "function", function)
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):  # a builtin without a signature: called as documented
        return lambda key: True
    try:
        sig.bind(None, seed=0)
    except TypeError as exc:
        raise InstanceError("heuristic", name, f"cannot be called as {SHAPE} ({exc})") from None
    params = list(sig.parameters.values())
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return lambda key: True
    loose = {p.name for p in params[1:] if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD}
    return lambda key: key in loose - {"seed"}
