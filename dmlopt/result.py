"""The one result type of every exact solve and every heuristic run."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

#: statuses a Result can have
STATUSES = ("optimal", "feasible", "time_limit", "infeasible", "error", "bound", "interrupted")


@dataclass
class Result:
    """What a method produced on one instance.

    ``objective`` is the evaluator's objective of ``solution`` (never a solver's own number);
    ``bound`` and ``gap`` come from the solver where it gives them. ``status`` is ``optimal``,
    ``feasible`` (a heuristic, or a solver stopped with an incumbent for another reason than
    time), ``time_limit`` (with or without incumbent: see ``solution``), ``infeasible``, ``error``,
    ``bound`` (a run of :func:`dmlopt.bound`: ``bound`` is a valid dual bound, ``objective``
    the evaluated value of a feasible solution found on the way, if any) or ``interrupted``
    (Ctrl-C: the best solution so far, evaluated).
    """

    problem: str
    method: str
    status: str
    objective: float | None = None
    bound: float | None = None
    gap: float | None = None
    seconds: float = 0.0
    build_seconds: float = 0.0
    solution: Any = None
    feasible: bool | None = None
    violations: tuple[str, ...] = ()
    metrics: dict[str, float] = field(default_factory=dict)
    message: str = ""
    solver_objective: float | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """A flat dict (one pandas row): metrics are prefixed ``m_``, no solution."""
        row: dict[str, Any] = {
            "problem": self.problem,
            "method": self.method,
            "status": self.status,
            "objective": self.objective,
            "bound": self.bound,
            "gap": self.gap,
            "seconds": self.seconds,
            "build_seconds": self.build_seconds,
            "feasible": self.feasible,
            "n_violations": len(self.violations),
            "message": self.message,
        }
        for key, value in self.metrics.items():
            row[f"m_{key}"] = value
        return row

    def to_json(self) -> str:
        """JSON with the solution included."""
        data = self.as_dict()
        data["violations"] = list(self.violations)
        data["metrics"] = dict(self.metrics)
        data["options"] = self.options
        data["solution"] = (
            self.solution.model_dump(mode="json") if self.solution is not None else None
        )
        return json.dumps(_finite(data), indent=2)


def _finite(obj: Any) -> Any:
    """JSON has no inf/nan: write them as null."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    return obj


def relative_gap(objective: float | None, bound: float | None) -> float | None:
    """|objective - bound| / max(|objective|, 1e-9), the convention of HiGHS and SCIP."""
    if objective is None or bound is None:
        return None
    if not (math.isfinite(objective) and math.isfinite(bound)):
        return None
    if objective == bound:
        return 0.0
    return abs(objective - bound) / max(abs(objective), 1e-9)
