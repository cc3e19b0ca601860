"""The evaluation every problem's evaluator returns."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Evaluation:
    """Objective, feasibility, the violated rules and the paper's metrics of one solution.

    ``objective`` is always computed from the solution by the problem's evaluator (pure
    Python/numpy), never copied from a solver.
    """

    objective: float
    feasible: bool
    violations: tuple[str, ...] = ()
    metrics: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        return {
            "objective": self.objective,
            "feasible": self.feasible,
            "violations": list(self.violations),
            "metrics": dict(self.metrics),
        }
