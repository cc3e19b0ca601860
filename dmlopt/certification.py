"""The certified quality of any solution: ``dmlopt.certify`` and ``dmlopt certify``.

A solution from anywhere (a Python object, a solution JSON, or the file another solver wrote
for a model ``dmlopt export`` wrote) is re-scored by the problem's evaluator and set against
the best dual bound known for its instance: the one :func:`dmlopt.bound` computes and, when
the instance is a record of the reference library, the library's, whichever is tighter. The
certified gap is :func:`dmlopt.result.relative_gap` of the evaluated objective and that bound,
the definition ``dmlopt bound`` and ``dmlopt solve`` use; where the library holds a proven
optimum or a best-known value, the gap to it is reported too (the benchmark report's gap to
optimum).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pydantic

from dmlopt import api, io, registry, solvers
from dmlopt.errors import (
    InstanceError,
    Interrupted,
    ModelTooLargeError,
    ObjectiveMismatchError,
    SolverError,
)
from dmlopt.exact import OBJECTIVE_TOL, proven
from dmlopt.result import Result, relative_gap

#: a reference value closer to 0 than this has no relative gap (the report's tolerance)
_ZERO = 1e-9


@api._with_limits
def certify(instance: Any, solution: Any, *, method: str | None = None,
            time_limit: float | None = None, formulation: str | None = None,
            size_limit: Any = None) -> Result:
    """Evaluate ``solution`` and certify its quality with the best dual bound known.

    Parameters
    ----------
    instance : an instance, a path, a shipped name or a reference library id
        (``"tap/qaplib-nug12"``), as :func:`dmlopt.load` takes them.
    solution : the problem's Solution, a solution dict, a solution JSON file (as ``dmlopt solve
        -o`` writes), or a solver's solution file for the model ``dmlopt export`` wrote (HiGHS,
        SCIP, Gurobi, CPLEX XML or plain ``name value``; :func:`dmlopt.read_solution`).
    method : the bound method :func:`dmlopt.bound` runs (``dmlopt list PROBLEM`` lists them);
        default: the strongest that fits the size limits.
    time_limit : seconds for the bound method (None: the method's own default).
    formulation : the formulation whose variables a solver's file names (default: the one
        ``dmlopt export`` uses); refused for a solution JSON or object.
    size_limit : see :func:`dmlopt.solve`.

    Returns
    -------
    Result
        ``method`` ``"certify"``; ``objective``, ``feasible``, ``violations`` and the
        evaluator's ``metrics`` of the solution; ``bound`` the tighter of the computed bound
        and the library's; ``gap`` the certified gap (:func:`dmlopt.result.relative_gap`);
        ``status`` ``optimal`` when the bound proves the solution optimal (the rule of
        :func:`dmlopt.solve`), else ``feasible``; ``infeasible`` (no bound computed) when the
        evaluator finds a violated rule. ``metrics`` add ``bound_computed``, ``bound_seconds``
        and, for a library record, ``bound_library`` (when it has a bound), ``reference`` (its
        proven or best-known value), ``reference_optimal`` (1 when proven) and
        ``reference_gap`` (signed: (objective - reference) / |reference| for a minimisation,
        negative when the solution beats a best-known value). ``message`` says where the bound
        comes from. ``seconds`` is the whole certification.

    Raises
    ------
    InstanceError, UnknownNameError, SolverError, ModelTooLargeError
        A solution that does not parse or decode, an unknown method, a bad time limit.
    ObjectiveMismatchError
        The solution beats a bound: that bound is invalid (a bug).

    References
    ----------
    The gap conventions of HiGHS and SCIP (certified gap) and of MIPLIB's ``.solu`` values
    (reference); docs/interop.md, "Your own function, certified".

    Examples
    --------
    >>> import dmlopt
    >>> inst = dmlopt.generate("tabgp", {"generator": "er", "n": 6, "p": 0.5, "tau": 2}, seed=0)
    >>> res = dmlopt.certify(inst, dmlopt.solve(inst).solution, method="enum")
    >>> res.status, res.gap <= 1e-4, res.bound == dmlopt.bound(inst, "enum").bound
    ('optimal', True, True)
    """
    t0 = time.perf_counter()
    instance = api.as_instance(instance)
    problem = registry.of(instance)
    if time_limit is not None:
        solvers.check_settings(time_limit=time_limit)
    sol, read = solution_of(instance, solution, formulation, size_limit)
    ev = problem.model.evaluate(instance, sol)
    res = Result(problem=problem.name, method="certify", status="feasible",
                 options={k: v for k, v in (("method", method), ("time_limit", time_limit),
                                            ("formulation", formulation)) if v is not None})
    res.solution, res.objective, res.feasible = sol, ev.objective, ev.feasible
    res.violations, res.metrics = ev.violations, dict(ev.metrics)
    notes = [read] if read else []
    rec = _record(instance)
    if rec is not None:
        _reference(res, rec, problem.sense, notes)
    if not ev.feasible:
        res.status = "infeasible"
        res.message = "; ".join([f"infeasible solution: {ev.violations[0]}", *notes])
        res.seconds = time.perf_counter() - t0
        return res
    try:
        computed = _computed(instance, problem, method, time_limit, size_limit, rec, notes)
    except Interrupted as exc:  # Ctrl-C in the bound method: its bound so far holds
        bound_res = exc.result
        if not isinstance(bound_res, Result) or bound_res.bound is None:
            raise
        _grade(res, problem, bound_res, rec, notes)
        res.status = "interrupted"
        res.message = "; ".join(["interrupted (Ctrl-C): the bound reached so far", *notes])
        res.seconds = time.perf_counter() - t0
        raise Interrupted(sol, result=res) from None
    _grade(res, problem, computed, rec, notes)
    res.seconds = time.perf_counter() - t0
    return res


def solution_of(instance: Any, solution: Any, formulation: str | None = None,
                size_limit: Any = None) -> tuple[Any, str]:
    """The problem's Solution ``solution`` gives, and how it was read.

    Parameters
    ----------
    instance : the (loaded) instance.
    solution : a Solution, a dict, a solution JSON file or a solver's solution file.
    formulation : for a solver's file, the formulation exported (see :func:`certify`).
    size_limit : see :func:`dmlopt.solve`.

    Returns
    -------
    (Solution, str)
        The solution, and ``"read FORMAT solution file, F formulation"`` for a solver's file
        (else ``""``).

    Raises
    ------
    InstanceError
        Another problem's Solution, a value of another type, a formulation given for a
        solution JSON or object, or a file :func:`dmlopt.read_solution` refuses.

    References
    ----------
    docs/interop.md, "Solutions from any solver".
    """
    from dmlopt import solution_files

    problem = registry.of(instance)
    expected = problem.model.Solution
    is_file = isinstance(solution, str | Path)
    if formulation is not None and not (is_file and not solution_files.is_json(solution)):
        raise InstanceError("formulation", formulation, "applies to a solver's solution file, "
                            "not to a solution JSON or object")
    if isinstance(solution, expected):
        return solution, ""
    if isinstance(solution, dict):
        return io.load_solution(instance, solution), ""
    if not is_file:
        what = type(solution).__name__ if not isinstance(solution, pydantic.BaseModel) else \
            f"{type(solution).__module__}.{type(solution).__qualname__}"
        raise InstanceError("solution", what, f"is not a {problem.model.__name__}.Solution, a "
                            "solution dict or a solution file path")
    if solution_files.is_json(solution):
        return io.load_solution(instance, solution), ""
    sol = api.read_solution(instance, solution, formulation, size_limit)
    form = formulation or api.default_formulation(problem)
    return sol, (f"read {solution_files.parse(solution).format} solution file, {form} "
                 "formulation")


def _record(instance: Any) -> Any:
    """The library's record of ``instance`` (by content hash), or None."""
    from dmlopt import references

    return references.lookup(io.instance_hash(instance))


def library_bound(rec: Any) -> float | None:
    """The dual bound a library record certifies: its bound, else the objective of an
    ``optimal`` record proven another way (``provenance.proof``); None for a best-known value
    without a bound.

    Parameters
    ----------
    rec : a :class:`dmlopt.references.Record`.

    Returns
    -------
    float or None

    References
    ----------
    :mod:`dmlopt.references` (the record's status and proof).
    """
    if rec.bound is not None:
        return float(rec.bound)
    return float(rec.objective) if rec.status == "optimal" else None


def reference_gap(objective: float, reference: float, sense: str) -> float | None:
    """The signed gap of ``objective`` to a reference value, relative to the reference: >= 0
    when the solution is no better, < 0 when it beats a best-known value.

    Parameters
    ----------
    objective : the evaluated objective.
    reference : the proven optimum or best-known value.
    sense : ``"min"`` or ``"max"``.

    Returns
    -------
    float or None
        ``(objective - reference) / |reference|`` for a minimisation (negated for a
        maximisation); 0 when both are within 1e-9 of each other and the reference is 0;
        None when the reference is 0 and the objective is not.

    References
    ----------
    The benchmark report's gap to optimum (docs/benchmarks.md), as a fraction.
    """
    diff = objective - reference if sense == "min" else reference - objective
    if abs(reference) < _ZERO:
        return 0.0 if abs(diff) < _ZERO else None
    return diff / abs(reference)


def _reference(res: Result, rec: Any, sense: str, notes: list[str]) -> None:
    """The library's value of the instance and the solution's gap to it."""
    res.metrics["reference"] = float(rec.objective)
    res.metrics["reference_optimal"] = 1.0 if rec.status == "optimal" else 0.0
    gap = reference_gap(float(res.objective), float(rec.objective), sense)  # type: ignore[arg-type]
    if gap is not None:
        res.metrics["reference_gap"] = gap
    kind = "proven optimum" if rec.status == "optimal" else "best-known value"
    shown = "-" if gap is None else f"{100 * gap:.4g} %" + (
        " (better than the library's)" if gap < 0 else "")
    notes.append(f"library {rec.problem}/{rec.id}: {kind} {rec.objective:.10g}, gap to it "
                 f"{shown}")


def _computed(instance: Any, problem: Any, method: str | None, time_limit: float | None,
              size_limit: Any, rec: Any, notes: list[str]) -> Result | None:
    """:func:`dmlopt.bound`'s result, or None when no method gives one and the library has a
    bound to fall back on (the reason noted); a named method's error is raised."""
    if not problem.bound_entries and method is None:
        notes.append(f"no bound computed: {problem.name} has no bound method")
        return None
    try:
        return api.bound(instance, method, time_limit=time_limit, size_limit=size_limit)
    except (SolverError, ModelTooLargeError) as exc:
        if method is not None or rec is None or library_bound(rec) is None:
            raise
        notes.append(f"no bound computed ({' '.join(str(exc).split())[:160]})")
        return None


def _grade(res: Result, problem: Any, computed: Result | None, rec: Any,
           notes: list[str]) -> None:
    """Set the bound (the tighter of the computed and the library's), the certified gap and
    the status; a solution that beats either bound is :class:`ObjectiveMismatchError`."""
    sign = 1.0 if problem.sense == "min" else -1.0
    candidates: list[tuple[float, str]] = []
    if computed is not None and computed.bound is not None:
        res.metrics["bound_computed"] = float(computed.bound)
        res.metrics["bound_seconds"] = float(computed.seconds)
        candidates.append((float(computed.bound), computed.method))
        res.options.setdefault("method", computed.method.removeprefix("bound:"))
        better = computed.objective is not None and \
            sign * (computed.objective - float(res.objective)) < 0  # type: ignore[arg-type]
        if better:
            notes.append(f"the bound run found a better solution, objective "
                         f"{computed.objective:.10g}")
    lib = library_bound(rec) if rec is not None else None
    if lib is not None:
        res.metrics["bound_library"] = lib
        by = rec.provenance.get("bound") or rec.method
        candidates.append((lib, f"library {rec.problem}/{rec.id} ({by})"))
    tol = OBJECTIVE_TOL * max(1.0, abs(float(res.objective)))  # type: ignore[arg-type]
    for value, source in candidates:
        if sign * (value - float(res.objective)) > tol:  # type: ignore[arg-type]
            raise ObjectiveMismatchError(
                f"certify: the bound {value!r} of {source} is beaten by the solution's "
                f"evaluated objective {res.objective!r}: the bound is invalid")
    if not candidates:
        res.message = "; ".join(notes)
        return
    value, source = max(candidates, key=lambda c: sign * c[0])
    if len(candidates) > 1:
        weaker, by = min(candidates, key=lambda c: sign * c[0])
        source += f" and {by}" if value == weaker else \
            f" (tighter than {by}'s {weaker:.10g})"
    res.bound = value
    res.gap = relative_gap(res.objective, value)
    if proven(res.objective, value):
        res.status = "optimal"
    res.message = "; ".join([f"bound {value:.10g} from {source}", *notes])
