"""The vocabulary every back end shares: dmlopt's solver names and the run it returns.

``ALIASES`` maps the names dmlopt accepts to the Pyomo solver interface that runs them
(:mod:`dmlopt.solvers.backends`); a back end added by name adds its entry here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

#: the solvers dmlopt names, usable whenever their Python package is installed (``PACKAGES``)
NAMED = ("highs", "scip", "gurobi", "cplex", "xpress", "copt")

#: dmlopt's name -> the Python package that runs it (``pip install NAME``)
PACKAGES = {"highs": "highspy", "scip": "pyscipopt", "gurobi": "gurobipy", "cplex": "cplex",
            "xpress": "xpress", "copt": "coptpy"}

#: our names (and Pyomo's names of the same interfaces) -> Pyomo's; COPT has no Pyomo
#: interface in Pyomo 6.10: "copt" is dmlopt's own (:mod:`dmlopt.solvers.copt`)
ALIASES = {"highs": "highs", "scip": "scip_direct", "scip_direct": "scip_direct",
           "gurobi": "gurobi_direct", "gurobi_direct": "gurobi_direct",
           "cplex": "cplex_direct", "cplex_direct": "cplex_direct",
           "xpress": "xpress_direct", "xpress_direct": "xpress_direct", "copt": "copt"}


def canonical(solver: str) -> str | None:
    """dmlopt's name of a solver given by its name or a Pyomo alias of it.

    Parameters
    ----------
    solver : str
        ``"gurobi"``, ``"gurobi_direct"``, ``"scip_direct"``, ...

    Returns
    -------
    str or None
        One of :data:`NAMED`; None for any other name.

    References
    ----------
    Ours.
    """
    target = ALIASES.get(solver)
    for name in NAMED:
        if target is not None and ALIASES[name] == target:
            return name
    return None


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
