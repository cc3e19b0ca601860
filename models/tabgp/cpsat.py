"""TABGP (paper 004) as a CP-SAT model (ours): an optional backend (``pip install ortools``).

The model has the paper's variables in Boolean form: b_{t,v,i} (v carries label i at step t,
exactly one per vertex and step, at most k per label and step), a "together" literal per edge
(true only if both ends carry the same label: the edge is not cut) and a "stays" literal per
vertex and step t < tau (true only if the label at t+1 equals the one at t: no migration).
The objective sum_e w_e (1 - together_e) + alpha sum (1 - stays) is minimised, so both
literals are true exactly when the label condition holds: the optimum is the paper's (section
4.2). Labels are ordered at step 0 by their smallest vertex (the same symmetry breaking as
(S6) of :mod:`dmlopt.models.tabgp.formulations`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from dmlopt.errors import InstanceError
from dmlopt.models.tabgp.instance import Instance, Solution, evaluate


def available() -> bool:
    """Whether OR-Tools (the ``ortools`` package) can be imported.

    Returns
    -------
    bool
        True when :func:`solve_cpsat` can run.

    References
    ----------
    Ours.
    """
    try:
        from ortools.sat.python import cp_model  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass(frozen=True)
class CpSatResult:
    """What :func:`solve_cpsat` found: the best solution (re-evaluated), its objective, the
    proven lower bound (in the instance's units), the status and the solver's wall seconds."""

    status: str
    solution: Solution | None
    objective: float | None
    bound: float
    seconds: float
    metrics: dict[str, Any] = field(default_factory=dict)


def _scale(instance: Instance) -> int:
    """The least common denominator of the edge weights and alpha (CP-SAT needs integers)."""
    values = [("alpha", instance.alpha)] + [
        ("weights", instance.weight(t, j)) for t in range(instance.tau)
        for j in range(len(instance.edges[t]))]
    scale = 1
    for name, value in values:
        frac = Fraction(value).limit_denominator(10**6)
        if float(frac) != value:  # the nearest such fraction must be the same double
            raise InstanceError(name, value, "must be a fraction with denominator at most 10^6 "
                                "for the CP-SAT model")
        scale = scale * frac.denominator // math.gcd(scale, frac.denominator)
    if scale > 10**6:
        raise InstanceError("weights", scale, "common denominator must be at most 10^6 for "
                            "the CP-SAT model")
    return int(scale)


def build_cpsat(instance: Instance) -> tuple[Any, dict[str, Any]]:
    """The CP-SAT model of ``instance`` (module docstring).

    Parameters
    ----------
    instance : Instance
        A TABGP instance (weights and alpha rational with denominator at most 10^6).

    Returns
    -------
    tuple
        ``(model, handles)``: a ``cp_model.CpModel`` and its literals (``"b"``: array
        [tau][n][l] of label literals, ``"scale"``: the integer the objective is multiplied by).

    References
    ----------
    Paper 004, section 4.2 (the objective and constraints); the Boolean model is ours.
    """
    from ortools.sat.python import cp_model

    n, l, k, tau = instance.n, instance.l, instance.k, instance.tau
    scale = _scale(instance)
    model = cp_model.CpModel()
    b = [[[model.NewBoolVar(f"b{t}_{v}_{i}") for i in range(l)] for v in range(n)]
         for t in range(tau)]
    lo = max(0, n - (l - 1) * k)  # the other l - 1 labels hold at most (l - 1) k vertices
    for t in range(tau):
        for v in range(n):
            model.AddExactlyOne(b[t][v])
        for i in range(l):
            model.AddLinearConstraint(sum(b[t][v][i] for v in range(n)), lo, k)
    terms: list[tuple[int, Any]] = []
    const = 0
    for t in range(tau):
        for j, (u, v) in enumerate(instance.edges[t]):
            w = round(instance.weight(t, j) * scale)
            same = model.NewBoolVar(f"same{t}_{j}")
            for i in range(l):
                # same and u in i => v in i (and symmetric): an uncut edge has equal labels
                model.AddBoolOr([same.Not(), b[t][u][i].Not(), b[t][v][i]])
                model.AddBoolOr([same.Not(), b[t][v][i].Not(), b[t][u][i]])
            const += w
            terms.append((-w, same))
    a = round(instance.alpha * scale)
    for t in range(tau - 1):
        for v in range(n):
            stay = model.NewBoolVar(f"stay{t}_{v}")
            for i in range(l):
                model.AddBoolOr([stay.Not(), b[t][v][i].Not(), b[t + 1][v][i]])
            const += a
            terms.append((-a, stay))
    # (S6): at step 0 vertex v may carry label i >= 1 only if a smaller vertex carries i - 1
    for v in range(n):
        for i in range(1, l):
            model.AddBoolOr([b[0][v][i].Not()] + [b[0][u][i - 1] for u in range(v)])
    model.Minimize(const + sum(c * lit for c, lit in terms))
    return model, {"b": b, "scale": scale}


def solve_cpsat(instance: Instance, *, time_limit: float | None = None, workers: int = 1,
                hint: Solution | None = None) -> CpSatResult:
    """Solve ``instance`` exactly with OR-Tools CP-SAT (module docstring).

    Parameters
    ----------
    instance : Instance
        A TABGP instance.
    time_limit : float, optional
        Wall seconds; None: until proven.
    workers : int
        CP-SAT search workers (threads); default 1.
    hint : Solution, optional
        A feasible solution given to CP-SAT as a hint (labels canonicalised first).

    Returns
    -------
    CpSatResult
        Status ``"optimal"``, ``"feasible"`` (time limit, with incumbent) or ``"no solution"``;
        the objective re-evaluated by :func:`~dmlopt.models.tabgp.instance.evaluate`; the bound
        is CP-SAT's integer bound divided by the scale.

    Raises
    ------
    ImportError
        If ``ortools`` is not installed.
    InstanceError
        If a weight or alpha has no denominator up to 10^6, or the hint is infeasible.

    References
    ----------
    Ours (paper 004, section 4.2 for the problem).
    """
    from ortools.sat.python import cp_model

    from dmlopt.models.tabgp.formulations import canonical_labels

    model, h = build_cpsat(instance)
    b = h["b"]
    if hint is not None:
        ev = evaluate(instance, hint)
        if not ev.feasible:
            raise InstanceError("hint", ev.violations[0], "is not a feasible solution")
        a = canonical_labels(np.asarray(hint.assignment), instance.l)
        for t in range(instance.tau):
            for v in range(instance.n):
                for i in range(instance.l):
                    model.AddHint(b[t][v][i], int(a[t, v] == i))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = int(workers)
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = float(time_limit)
    t0 = time.perf_counter()
    code = solver.Solve(model)
    seconds = time.perf_counter() - t0
    status = {cp_model.OPTIMAL: "optimal", cp_model.FEASIBLE: "feasible"}.get(code, "no solution")
    bound = solver.BestObjectiveBound() / h["scale"]
    if status == "no solution":
        return CpSatResult(status, None, None, bound, seconds)
    assign = [[next(i for i in range(instance.l) if solver.Value(b[t][v][i]))
               for v in range(instance.n)] for t in range(instance.tau)]
    sol = Solution(assignment=assign)
    ev = evaluate(instance, sol)
    return CpSatResult(status, sol, float(ev.objective), bound, seconds,
                       {"branches": solver.NumBranches(), "conflicts": solver.NumConflicts()})
