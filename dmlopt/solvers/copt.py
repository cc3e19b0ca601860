"""COPT (``coptpy``) for Pyomo models: Pyomo 6.10 has no COPT interface, so this module passes
a model's variables, linear and quadratic constraints and objective to ``coptpy`` itself.

Each expression is read with Pyomo's ``generate_standard_repn`` (constant, linear and
quadratic parts); a model with any other nonlinear term is refused. The run is mapped to a
:class:`~dmlopt.solvers.base.SolverRun` as the other back ends are; its status is graded by the
proof rule of :func:`dmlopt.exact.proven` like every solver's.
"""

from __future__ import annotations

from typing import Any

from dmlopt.errors import SolverError
from dmlopt.solvers.base import SolverRun, _num


def version() -> str:
    """COPT's version (``"8.0.7"``) from the package's metadata.

    Returns
    -------
    str
        The version of the installed ``coptpy``.

    References
    ----------
    Ours.
    """
    from importlib.metadata import version as dist_version

    return dist_version("coptpy")


def _expression(cp: Any, expr: Any, cols: dict[int, Any], what: str) -> tuple[Any, float, bool]:
    """(coptpy expression without constant, the constant, whether it is quadratic)."""
    from pyomo.repn import generate_standard_repn

    repn = generate_standard_repn(expr, quadratic=True, compute_values=True)
    if repn.nonlinear_expr is not None:
        raise SolverError(f"copt: {what} is nonlinear beyond quadratic terms: COPT takes "
                          "linear and quadratic models only here")
    lin = cp.LinExpr()
    for var, coef in zip(repn.linear_vars, repn.linear_coefs, strict=True):
        lin.addTerm(cols[id(var)], float(coef))
    if not repn.quadratic_vars:
        return lin, float(repn.constant), False
    quad = cp.QuadExpr()
    quad.addLinExpr(lin)
    for (v1, v2), coef in zip(repn.quadratic_vars, repn.quadratic_coefs, strict=True):
        quad.addTerm(float(coef), cols[id(v1)], cols[id(v2)])
    return quad, float(repn.constant), True


def solve(model: Any, params: dict[str, Any], *, warm: bool, tee: bool) -> SolverRun:
    """Solve Pyomo ``model`` with COPT; the variables' values are loaded when a solution
    exists.

    Parameters
    ----------
    model : pyomo.environ.ConcreteModel
        One active objective; linear or quadratic constraints and objective.
    params : dict
        COPT parameters by name (``TimeLimit``, ``RelGap``, ``Threads``, ...).
    warm : bool
        Pass the variables' current values as a MIP start.
    tee : bool
        Show COPT's log.

    Returns
    -------
    SolverRun
        Status, whether a solution exists, its objective and COPT's bound.

    Raises
    ------
    SolverError
        A model COPT cannot take (a nonlinear term); COPT's own errors (e.g. its size-limited
        licence) are raised as they are, for :func:`dmlopt.solvers.commercial.run` to word.

    References
    ----------
    COPT's Python API (``coptpy``): https://guide.coap.online/copt/en-doc/pyapiref.html
    """
    import coptpy as cp
    import pyomo.environ as pyo
    from coptpy import COPT

    env = cp.Envr()
    try:
        m = env.createModel("dmlopt")
        m.setParam("Logging", 1 if tee else 0)
        m.setParam("LogToConsole", 1 if tee else 0)
        variables = list(model.component_data_objects(pyo.Var, active=True, descend_into=True))
        cols: dict[int, Any] = {}
        for var in variables:
            lb = -COPT.INFINITY if var.lb is None else float(var.lb)
            ub = COPT.INFINITY if var.ub is None else float(var.ub)
            if var.fixed:
                lb = ub = float(var.value)
            kind = COPT.BINARY if var.is_binary() else (
                COPT.INTEGER if var.is_integer() else COPT.CONTINUOUS)
            cols[id(var)] = m.addVar(lb=lb, ub=ub, vtype=kind)
        for con in model.component_data_objects(pyo.Constraint, active=True,
                                                descend_into=True):
            expr, const, quadratic = _expression(cp, con.body, cols, f"constraint {con.name}")
            lo = None if con.lower is None else float(pyo.value(con.lower)) - const
            hi = None if con.upper is None else float(pyo.value(con.upper)) - const
            if not quadratic:
                m.addBoundConstr(expr, -COPT.INFINITY if lo is None else lo,
                                 COPT.INFINITY if hi is None else hi)
                continue
            if lo is not None and hi is not None and lo == hi:
                m.addQConstr(expr == lo)
                continue
            if lo is not None:
                m.addQConstr(expr >= lo)
            if hi is not None:
                m.addQConstr(expr <= hi)
        objectives = list(model.component_data_objects(pyo.Objective, active=True))
        if len(objectives) != 1:
            raise SolverError(f"copt: the model has {len(objectives)} active objectives, not 1")
        obj = objectives[0]
        expr, const, _ = _expression(cp, obj.expr, cols, "the objective")
        m.setObjective(expr, COPT.MINIMIZE if obj.sense == pyo.minimize else COPT.MAXIMIZE)
        m.setObjConst(const)
        for key, value in params.items():
            m.setParam(key, value)
        if warm:
            start = [(cols[id(v)], float(v.value)) for v in variables if v.value is not None]
            if start:
                m.setMipStart([c for c, _ in start], [x for _, x in start])
                m.loadMipStart()
        m.solve()
        return _result(m, variables, cols)
    finally:
        env.close()


def _result(m: Any, variables: list, cols: dict[int, Any]) -> SolverRun:
    """The run of a solved COPT model, its solution loaded into ``variables``."""
    from coptpy import COPT

    mip = bool(m.getAttr("IsMIP"))
    has = bool(m.getAttr("HasMipSol" if mip else "HasLpSol"))
    status = m.status
    if has:
        values = m.getInfo("Value", [cols[id(v)] for v in variables])
        for var, value in zip(variables, values, strict=True):
            if not var.fixed:
                var.set_value(value, skip_validation=True)
    objective = _num(m.getAttr("BestObj" if mip else "LpObjVal")) if has else None
    bound = _num(m.getAttr("BestBnd")) if mip else (
        objective if status == COPT.OPTIMAL else None)
    if bound is not None and abs(bound) >= COPT.INFINITY:
        bound = None
    if status == COPT.OPTIMAL and has:
        name = "optimal"
    elif status == COPT.TIMEOUT:
        name = "time_limit"
    elif status in (COPT.INFEASIBLE, COPT.INF_OR_UNB):
        name = "infeasible"
    elif status == COPT.INTERRUPTED:
        name = "interrupted"
    elif has:
        name = "feasible"
    else:
        name = "error"
    words = {COPT.OPTIMAL: "optimal", COPT.TIMEOUT: "maxTimeLimit",
             COPT.INFEASIBLE: "infeasible", COPT.INF_OR_UNB: "infeasibleOrUnbounded",
             COPT.UNBOUNDED: "unbounded", COPT.INTERRUPTED: "interrupted",
             COPT.NODELIMIT: "maxEvaluations"}
    return SolverRun(name, has, objective, bound,
                     message=words.get(status, f"COPT status {status}"))
