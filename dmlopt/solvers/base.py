"""The vocabulary every back end shares: dmlopt's solver names and the run it returns.

``ALIASES`` maps the names dmlopt accepts to the Pyomo solver interface that runs them
(:mod:`dmlopt.solvers.backends`); a back end added by name adds its entry here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

#: our names -> Pyomo's
ALIASES = {"highs": "highs", "scip": "scip_direct", "scip_direct": "scip_direct"}


@dataclass
class SolverRun:
    status: str  # optimal | time_limit | infeasible | feasible | interrupted | error
    has_solution: bool
    objective: float | None
    bound: float | None
    message: str = ""


def _num(x: Any) -> float | None:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None
