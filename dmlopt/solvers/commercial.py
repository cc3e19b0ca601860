"""Commercial solvers by name: Gurobi, CPLEX, Xpress and COPT.

Gurobi, CPLEX and Xpress run through Pyomo 6.10's direct Python interfaces (``gurobi_direct``,
``cplex_direct``, ``xpress_direct``: the solver's own Python package, no executable); Pyomo
6.10 has no COPT interface, so COPT runs through :mod:`dmlopt.solvers.copt`. Each takes linear
and quadratic (also nonconvex, binary-product) objectives with integer variables.

dmlopt's settings are mapped to each solver's own parameter names (:data:`SETTINGS`); a
``solver_options`` key is the solver's own parameter name (CPLEX: its dotted path,
``mip.tolerances.mipgap``), checked against the solver's list before any model is built. A
licence or size limit of the solver (the pip packages carry a size-limited licence) is a
one-line :class:`~dmlopt.errors.SolverError` naming the solver and the limit; any other error
the solver raises is one too, in the solver's words.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import warnings
from functools import cache
from typing import Any

from dmlopt.errors import InstanceError, SolverError
from dmlopt.solvers.base import PACKAGES, SolverRun, _num

#: dmlopt's name -> Pyomo 6.10's interface (COPT: dmlopt's own, :mod:`dmlopt.solvers.copt`)
INTERFACES = {"gurobi": "gurobi_direct", "cplex": "cplex_direct", "xpress": "xpress_direct",
              "copt": "copt"}

#: the solver's parameter names of dmlopt's (time_limit, mip_gap, threads)
SETTINGS = {
    "gurobi": ("TimeLimit", "MIPGap", "Threads"),
    "cplex": ("timelimit", "mip.tolerances.mipgap", "threads"),
    "xpress": ("timelimit", "miprelstop", "threads"),
    "copt": ("TimeLimit", "RelGap", "Threads"),
}

#: the largest time limit passed (seconds); every solver takes it, none stops before it
MAX_SECONDS = 1e20

#: words of the solvers' licence and size-limit errors (Gurobi: "Model too large for
#: size-limited license"; CPLEX: "CPLEX Error 1016: Community Edition. Problem size limits
#: exceeded"; Xpress: "?120 Error: Problem has too many rows and columns. The maximum is ...";
#: COPT: "size limit"), and of a missing or expired licence
_LICENCE = re.compile(r"licen[cs]e|size.limit|too large|too many rows|too many col|"
                      r"community edition|problem size", re.IGNORECASE)


def version(name: str) -> str:
    """The solver's name and version as recorded with a run.

    Parameters
    ----------
    name : str
        gurobi, cplex, xpress or copt.

    Returns
    -------
    str
        ``"gurobi 13.0.3"``; the name alone when the version cannot be read.

    References
    ----------
    Ours.
    """
    with contextlib.suppress(Exception), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "gurobi":
            import gurobipy

            return "gurobi " + ".".join(str(x) for x in gurobipy.gurobi.version())
        if name == "cplex":
            import cplex

            return f"cplex {cplex.__version__}"
        if name == "xpress":
            import xpress

            return f"xpress {xpress.__version__}"
        if name == "copt":
            from dmlopt.solvers import copt

            return f"copt {copt.version()}"
    return name


def check_option(name: str, key: str, value: Any) -> None:
    """Refuse a ``solver_options`` key that is not a parameter of solver ``name``.

    Gurobi's parameter names are matched without case (as Gurobi does), CPLEX's as its dotted
    parameter path (``mip.tolerances.mipgap``, or with ``_``), Xpress's controls and COPT's
    parameters by name; the value is then set on a throwaway solver object, and a value the
    solver refuses (type, range) is refused here, in the solver's words.

    Parameters
    ----------
    name : str
        gurobi, cplex, xpress or copt.
    key : str
        The parameter's name.
    value : bool, int, float or str
        Its value.

    Raises
    ------
    InstanceError
        Naming ``solver_options.KEY``, the value and the rule.

    References
    ----------
    The solvers' parameter references (:data:`_DOCS`).
    """
    from dmlopt.solvers.options import _captured

    known = _parameters(name)
    if known is None:
        return
    probe = key.lower() if name in ("gurobi", "xpress") else key
    if name == "cplex":
        probe = key.replace("_", ".")
    if probe not in known:
        raise InstanceError(f"solver_options.{key}", value, f"is not {_ARTICLE[name]} "
                            f"{_SHOWN[name]} parameter (see {_DOCS[name]})")
    error, _ = _captured(lambda: _try_set(name, probe, value))
    if error is not None:
        raise InstanceError(f"solver_options.{key}", value,
                            f"is refused by {_SHOWN[name]}: {error}")


_SHOWN = {"gurobi": "Gurobi", "cplex": "CPLEX", "xpress": "Xpress", "copt": "COPT"}
_ARTICLE = {"gurobi": "a", "cplex": "a", "xpress": "an", "copt": "a"}


def _try_set(name: str, key: str, value: Any) -> str | None:
    """Set parameter ``key`` to ``value`` on a throwaway object of solver ``name``: None when
    accepted, else the solver's words."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if name == "gurobi":
                import gurobipy

                with gurobipy.Env(empty=True) as env:
                    env.setParam("OutputFlag", 0)
                    env.setParam(key, value)
            elif name == "cplex":
                import cplex

                solver = cplex.Cplex()  # held: its parameters refer to it weakly
                param = solver.parameters
                for piece in key.split("."):
                    param = getattr(param, piece)
                param.set(value)
            elif name == "xpress":
                import xpress

                xpress.problem().setControl(key, value)
            elif name == "copt":
                import coptpy

                env = coptpy.Envr()
                try:
                    model = env.createModel("check")
                    _, _, _, low, high = model.getParamInfo(key)
                    if isinstance(value, int | float) and not low <= value <= high:
                        return f"out of its range [{low:g}, {high:g}]"
                    model.setParam(key, value)
                finally:
                    env.close()
        except Exception as exc:  # noqa: BLE001 - each package has its own error types
            return " ".join(str(exc).split()) or type(exc).__name__
    return None


_DOCS = {
    "gurobi": "https://docs.gurobi.com/projects/optimizer/en/current/reference/parameters.html",
    "cplex": "https://www.ibm.com/docs/en/icos/22.1.2?topic=cplex-parameters",
    "xpress": "https://www.fico.com/fico-xpress-optimization/docs/latest/solver/optimizer/"
              "HTML/chapter7.html",
    "copt": "https://guide.coap.online/copt/en-doc/parameter.html",
}


@cache
def _parameters(name: str) -> frozenset[str] | None:
    """The parameter names solver ``name`` knows (lower case for Gurobi and Xpress, dotted
    paths for CPLEX); None when they cannot be listed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            # Pyomo's solver plugins first: one imported after its solver's package finishes
            # that import at once, warnings and all (Xpress 9.9: "Deprecated ... getversion")
            import pyomo.environ  # noqa: F401

            if name == "gurobi":
                import gurobipy

                return frozenset(k.lower() for k in dir(gurobipy.GRB.Param)
                                 if not k.startswith("_"))
            if name == "cplex":
                import cplex

                return frozenset(_cplex_paths(cplex.Cplex().parameters, ""))
            if name == "xpress":
                import xpress

                return frozenset(k.lower() for k in dir(xpress.problem().controls)
                                 if not k.startswith("_"))
            if name == "copt":
                import coptpy

                return frozenset(k for k in dir(coptpy.COPT.Param) if not k.startswith("_"))
        except Exception:  # noqa: BLE001 - no list: the solver checks at run time
            return None
    return None


def _cplex_paths(group: Any, prefix: str) -> list[str]:
    """The dotted paths of every CPLEX parameter under ``group``."""
    import cplex._internal._parameter_classes as pc

    out = []
    for key, child in vars(group).items():
        if key.startswith("_") or key == "parent":
            continue
        path = f"{prefix}{key}"
        if isinstance(child, pc.ParameterGroup):
            out += _cplex_paths(child, path + ".")
        elif isinstance(child, pc.Parameter):
            out.append(path)
    return out


def native_options(name: str, time_limit: float | None, mip_gap: float | None,
                   threads: int | None, options: dict[str, Any]) -> dict[str, Any]:
    """The parameters passed to solver ``name``: dmlopt's settings under the solver's own
    names (:data:`SETTINGS`), then the user's ``options`` (a user's option wins).

    Parameters
    ----------
    name : str
        gurobi, cplex, xpress or copt.
    time_limit, mip_gap, threads : float, float, int or None
        dmlopt's settings (None: the solver's default); a time limit above
        :data:`MAX_SECONDS` is passed as that.
    options : dict
        The user's parameters under the solver's names.

    Returns
    -------
    dict
        Parameter name -> value (CPLEX's paths with ``_`` for Pyomo's ``cplex_direct``).

    References
    ----------
    The solvers' parameter references (:data:`_DOCS`).
    """
    keys = SETTINGS[name]
    out: dict[str, Any] = {}
    for key, value in zip(keys, (time_limit, mip_gap, threads), strict=True):
        if value is not None:
            out[key] = min(float(value), MAX_SECONDS) if key == keys[0] else value
    out.update(options)
    if name == "cplex":  # Pyomo's cplex_direct walks the parameter path split at "_"
        out = {k.replace(".", "_"): v for k, v in out.items()}
    return out


def refusal(name: str, exc: BaseException) -> SolverError:
    """The one-line :class:`SolverError` of an error solver ``name`` raised: a licence or
    size limit named as such, anything else in the solver's words.

    Parameters
    ----------
    name : str
        gurobi, cplex, xpress or copt.
    exc : BaseException
        What the solver's package raised.

    Returns
    -------
    SolverError
        ``"gurobi: licence limit: ..."`` or ``"gurobi: the solver failed: ..."``.

    References
    ----------
    Ours (issue 51: a licence limit is the user's matter, exit 2, never an internal error).
    """
    said = " ".join(str(exc).split()) or type(exc).__name__
    if _LICENCE.search(said):
        return SolverError(f"{name}: licence limit: the model is beyond what the {name} "
                           f"licence found here allows ({said}); the pip package "
                           f"{PACKAGES[name]} carries a size-limited licence: use a full "
                           "licence, a smaller instance, or another solver")
    return SolverError(f"{name}: the solver failed: {said}")


def run(model: Any, name: str, *, time_limit: float | None, mip_gap: float | None,
        threads: int | None, warm: bool, tee: bool, options: dict[str, Any]) -> SolverRun:
    """Solve ``model`` with commercial solver ``name``; variable values are loaded when a
    solution exists.

    Parameters
    ----------
    model : pyomo.environ.ConcreteModel
        The model (one active objective).
    name : str
        gurobi, cplex, xpress or copt.
    time_limit, mip_gap, threads : float, float, int or None
        dmlopt's settings (:func:`native_options`).
    warm : bool
        Pass the variables' values as a MIP start.
    tee : bool
        Show the solver's log (otherwise nothing of it reaches stdout or stderr).
    options : dict
        The user's parameters under the solver's names.

    Returns
    -------
    SolverRun
        Status, whether a solution exists, its objective and the solver's bound; the status
        is graded by :func:`dmlopt.exact.proven` as every solver's.

    Raises
    ------
    SolverError
        One line, when the solver refuses the model or fails (a licence limit named as such).

    References
    ----------
    Pyomo 6.10's direct interfaces (``pyomo.solvers.plugins.solvers``).
    """
    from dmlopt.solvers.options import _captured

    params = native_options(name, time_limit, mip_gap, threads, options)

    def solve() -> SolverRun:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Xpress's LicenseWarning, DeprecationWarnings
            if name == "copt":
                from dmlopt.solvers import copt

                return copt.solve(model, params, warm=warm, tee=tee)
            return _solve_pyomo(model, INTERFACES[name], params, warm=warm, tee=tee)

    def attempt() -> SolverRun:
        try:
            if tee:
                return solve()
            out, _ = _captured(solve)  # licence banners and logs never reach stdout
            return out
        except SolverError:
            raise
        except Exception as exc:  # noqa: BLE001 - every solver package has its own errors
            raise refusal(name, exc) from None

    if name == "xpress" and hasattr(os, "fork"):
        # Xpress ends its process on Ctrl-C (exit 130) or ignores it: in a forked child, the
        # caller gets KeyboardInterrupt (without Xpress's incumbent) and keeps its process
        return _in_child(model, attempt)
    return attempt()


def _in_child(model: Any, attempt: Any) -> SolverRun:
    """``attempt()`` in a forked child (:func:`dmlopt.solvers.fork.forked`); the values of its
    solution are copied back into ``model``'s variables."""
    import pyomo.environ as pyo

    from dmlopt.solvers.fork import Crashed, forked

    variables = list(model.component_data_objects(pyo.Var, descend_into=True))

    def child() -> tuple[SolverRun, list]:
        return attempt(), [v.value for v in variables]

    try:
        # Ctrl-C in the caller kills the child: Xpress takes SIGINT for itself and goes on
        out, values = forked(child, "Xpress", stop=signal.SIGKILL)
    except Crashed as exc:
        return SolverRun("error", False, None, None, str(exc))
    for var, value in zip(variables, values, strict=True):
        var.set_value(value, skip_validation=True)
    return out


def _solve_pyomo(model: Any, interface: str, params: dict[str, Any], *, warm: bool,
                 tee: bool) -> SolverRun:
    """One run of Pyomo's direct interface ``interface``, mapped to a :class:`SolverRun`."""
    import pyomo.environ as pyo
    from pyomo.opt import TerminationCondition as TC

    opt = pyo.SolverFactory(interface)
    kwargs = {"warmstart": True} if warm and opt.warm_start_capable() else {}
    res = opt.solve(model, tee=tee, options=params, load_solutions=False, **kwargs)
    tc = res.solver.termination_condition
    # an Xpress run stopped before any solution still lists one, without values
    has = len(res.solution) > 0 and len(res.solution(0).variable) > 0
    if has:
        opt.load_vars()
    obj = next(model.component_data_objects(pyo.Objective, active=True))
    lb, ub = _num(res.problem.lower_bound), _num(res.problem.upper_bound)
    bound = lb if obj.sense == pyo.minimize else ub
    objective = _num(pyo.value(obj)) if has else None
    if tc == TC.optimal and has:
        status = "optimal"
    elif tc == TC.maxTimeLimit or _xpress_timed_out(opt):
        status = "time_limit"
    elif tc in (TC.infeasible, TC.infeasibleOrUnbounded):
        status = "infeasible"
    elif tc == TC.userInterrupt or _stopped_by_user(opt):
        status = "interrupted"
    elif has:
        status = "feasible"
    else:
        status = "error"
    if bound is not None and abs(bound) >= 1e30:  # Xpress's "no bound" is -+1e40
        bound = None
    said = "maxTimeLimit" if status == "time_limit" else str(tc.name if hasattr(tc, "name")
                                                              else tc)
    return SolverRun(status, has, objective, bound, message=said)


def _stopped_by_user(opt: Any) -> bool:
    """Whether Ctrl-C stopped the run (Pyomo reports Gurobi's and CPLEX's as an error)."""
    try:
        if opt.name == "gurobi_direct":
            import gurobipy

            return int(opt._solver_model.Status) == int(gurobipy.GRB.INTERRUPTED)
        if opt.name in ("cplex_direct", "cplexdirect"):  # CPLEX aborted by the user: 13, 113, 114
            return int(opt._solver_model.solution.get_status()) in (13, 113, 114)
        if opt.name == "xpress_direct":
            import xpress

            return int(opt._solver_model.attributes.stopstatus) == int(xpress.StopType.CTRLC)
    except Exception:  # noqa: BLE001 - another version: Pyomo's condition stands
        return False
    return False


def _xpress_timed_out(opt: Any) -> bool:
    """Whether an Xpress run stopped at its time limit (Pyomo reports one stopped before any
    solution as an error)."""
    if opt.name != "xpress_direct":
        return False
    try:
        import xpress

        stop = getattr(xpress, "StopType", None)
        limit = int(stop.TIMELIMIT) if stop is not None else 1  # STOP_TIMELIMIT before 9.5
        return int(opt._solver_model.attributes.stopstatus) == limit
    except Exception:  # noqa: BLE001 - another Xpress version: Pyomo's condition stands
        return False
