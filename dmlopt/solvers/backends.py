"""Solver back ends through Pyomo 6.10: ``run(model, solver, ...)``.

``run`` solves a Pyomo model and returns a :class:`~dmlopt.solvers.base.SolverRun` with the
status mapped to dmlopt's vocabulary. HiGHS goes through ``pyomo.contrib.solver`` ``highs``
(highspy) with a MIP start added here (Pyomo's interface has none); SCIP through
``scip_direct`` (pyscipopt), which handles the quadratic TAP objective, in a forked child
(:func:`dmlopt.solvers.fork.forked`) where there is ``os.fork``; Gurobi, CPLEX, Xpress and COPT
through :mod:`dmlopt.solvers.commercial`. Any other name (opted in with
``DMLOPT_SOLVERS``) is passed to Pyomo's ``SolverFactory`` unchanged. A back end added by name
adds its interface class next to ``_highs_class`` and ``_scip_class``, its branch in
``_solve_contrib`` and its entry in :data:`dmlopt.solvers.base.ALIASES`.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import sys
from typing import Any

from dmlopt.solvers import commercial, direct
from dmlopt.solvers.base import ALIASES, SolverRun, _num, canonical
from dmlopt.solvers.fork import Crashed, forked
from dmlopt.solvers.options import check

#: the largest ``limits/time`` SCIP takes (seconds); a larger time limit is passed as this
SCIP_MAX_SECONDS = 1e20


def _highs_class():
    import logging

    import highspy
    import numpy as np
    from pyomo.contrib.solver.solvers.highs import Highs

    class WarmHighs(Highs):
        """Pyomo's HiGHS interface plus a MIP start from the variables' current values."""

        warm = False
        interrupted = False
        #: HiGHS's MIP dual bound when the run was interrupted (None otherwise)
        dual_bound: float | None = None
        #: seconds between progress lines on stderr (None: none)
        progress: float | None = None

        def _progress(self) -> Any:
            """A MIP callback writing incumbent, bound, gap and elapsed time to the real
            stderr (Pyomo captures fds 1 and 2 during the run) every ``progress`` seconds."""
            fd = os.dup(2)
            last = [-math.inf]

            def show(event: Any) -> None:
                d = event.data_out
                if d.running_time - last[0] < self.progress:
                    return
                last[0] = d.running_time
                inc = "-" if not math.isfinite(d.mip_primal_bound) else f"{d.mip_primal_bound:.6g}"
                bnd = "-" if not math.isfinite(d.mip_dual_bound) else f"{d.mip_dual_bound:.6g}"
                gap = "-" if not math.isfinite(d.mip_gap) else f"{100 * d.mip_gap:.3g} %"
                line = (f"dmlopt: highs {d.running_time:.0f} s: incumbent {inc}, bound {bnd}, "
                        f"gap {gap}\n")
                with contextlib.suppress(OSError):
                    os.write(fd, line.encode())

            self._solver_model.cbMipInterrupt.subscribe(show)
            return fd

        def _solve(self):
            if self.warm:
                index, values = [], []
                for v_id, idx in self._pyomo_var_to_solver_var_map.items():
                    val = self._vars[v_id][0].value
                    if val is not None:
                        index.append(idx)
                        values.append(float(val))
                if len(index) == self._solver_model.getNumCol():
                    sol = highspy.HighsSolution()
                    sol.col_value = [v for _, v in sorted(zip(index, values, strict=True))]
                    sol.value_valid = True
                    self._solver_model.setSolution(sol)
                elif index:
                    # a partial start (unset variables were read as 0, an infeasible point):
                    # HiGHS completes the given values itself
                    self._solver_model.setSolution(len(index), np.asarray(index, np.int32),
                                                   np.asarray(values, np.float64))
            # Pyomo calls run(), which holds Ctrl-C until the time limit; highspy's solve()
            # runs HiGHS in a thread and turns Ctrl-C into cancelSolve(): the run stops at
            # once with its incumbent (model status "interrupt")
            self._solver_model.run = self._solver_model.solve
            fd = self._progress() if self.progress else None
            noisy = logging.getLogger("pyomo.contrib.solver")
            level = noisy.level
            noisy.setLevel(logging.ERROR)  # Pyomo warns it does not know status kInterrupt
            try:
                return super()._solve()
            finally:
                noisy.setLevel(level)
                del self._solver_model.run
                if fd is not None:
                    self._solver_model.cbMipInterrupt.clear()
                    os.close(fd)
                self.interrupted = (self._solver_model.getModelStatus()
                                    == highspy.HighsModelStatus.kInterrupt)
                if self.interrupted:  # Pyomo reports no bound for a status it does not know
                    self.dual_bound = self._solver_model.getInfo().mip_dual_bound

    return WarmHighs


def _scip_class():
    from pyomo.common.numeric_types import value as pyo_value
    from pyomo.contrib.solver.solvers.scip.scip_direct import ScipDirect

    class WarmScip(ScipDirect):
        """Pyomo's SCIP interface whose MIP start is also a complete solution when it can be.

        Pyomo gives SCIP only a partial solution (the discrete variables), which SCIP completes
        after presolving, so a run stopped by a short time limit loses it. When every variable
        has a value the full point is added as well and checked when the problem is transformed.
        With ``progress`` (seconds) an event handler writes incumbent, bound, gap and elapsed
        time to the real stderr after solved nodes and new incumbents, at most that often.
        """

        #: seconds between progress lines on stderr (None: none)
        progress: float | None = None

        _fd: int | None = None

        def _create_solver_model(self, model, config):
            out = super()._create_solver_model(model, config)
            # SCIP's log through Python's sys.stdout (Pyomo's capture stream), not C's stdout:
            # optimize() holds the GIL, so a log longer than the capture pipe's buffer (64 KiB)
            # written from C blocked for ever while Pyomo's reader thread waited for the GIL; a
            # Python write releases the GIL while it waits
            self._solver_model.redirectOutput()
            if self.progress:
                # stderr duplicated before Pyomo redirects it: a duplicate of its capture pipe
                # would keep the pipe open and Pyomo's reader waiting
                self._fd = os.dup(2)
                self._solver_model.includeEventhdlr(
                    _scip_progress(self.progress, self._fd), "dmlopt_progress",
                    "dmlopt's progress lines (incumbent, bound, gap, time)")
            return out

        def solve(self, model, **kwds):
            try:
                return super().solve(model, **kwds)
            finally:
                if self._fd is not None:
                    os.close(self._fd)
                    self._fd = None

        def _mipstart(self):
            # Pyomo's own partial start fails on a discrete variable left unset (TypeError):
            # a partial warm start (e.g. RAR's paper model: eta and S only) skips those
            partial = self._solver_model.createPartialSol()
            for pyomo_var, scip_var in self._pyomo_var_to_solver_var_map.items():
                if pyomo_var.is_integer() and pyomo_var.value is not None:
                    partial[scip_var] = pyomo_var.value
            self._solver_model.addSol(partial)
            pairs = list(self._pyomo_var_to_solver_var_map.items())
            if all(v.value is not None for v, _ in pairs):
                sol = self._solver_model.createSol()
                for pyomo_var, scip_var in pairs:
                    self._solver_model.setSolVal(sol, scip_var, float(pyomo_var.value))
                # Pyomo's own SCIP columns: the objective's epigraph variable (obj_var >= or <=
                # the objective) and the mutable parameters; left at 0 the point was infeasible
                # (min) or valued 0 (max), so SCIP never kept a complete start
                if self._obj_var is not None and self._objective is not None:
                    value = float(pyo_value(self._objective.expr))
                    self._solver_model.setSolVal(sol, self._obj_var, value)
                for param, scip_var in self._pyomo_param_to_solver_param_map.items():
                    self._solver_model.setSolVal(sol, scip_var, float(param.value))
                self._solver_model.addSol(sol)

    return WarmScip


def _scip_progress(every: float, fd: int) -> Any:
    """A SCIP event handler that writes a progress line every ``every`` seconds at most to file
    descriptor ``fd``, a duplicate of stderr (Pyomo captures 1 and 2 during the solve)."""
    import pyscipopt

    kinds = pyscipopt.SCIP_EVENTTYPE.NODESOLVED | pyscipopt.SCIP_EVENTTYPE.BESTSOLFOUND

    class Progress(pyscipopt.Eventhdlr):
        def eventinit(self) -> None:
            self.last = -math.inf
            self.model.catchEvent(kinds, self)

        def eventexit(self) -> None:
            self.model.dropEvent(kinds, self)

        def eventexec(self, event: Any) -> dict:
            t = self.model.getSolvingTime()
            if t - self.last < every:
                return {}
            self.last = t

            def shown(x: float) -> str:
                return "-" if not math.isfinite(x) or abs(x) >= 1e19 else f"{x:.6g}"

            inc, bnd = self.model.getPrimalbound(), self.model.getDualbound()
            known = all(math.isfinite(x) and abs(x) < 1e19 for x in (inc, bnd))
            # dmlopt's gap (as in the result), not SCIP's (which divides by the smaller side)
            gap_s = f"{100 * abs(inc - bnd) / max(abs(inc), 1e-9):.3g} %" if known else "-"
            line = (f"dmlopt: scip {t:.0f} s: incumbent {shown(inc)}, bound {shown(bnd)}, "
                    f"gap {gap_s}\n")
            with contextlib.suppress(OSError):
                os.write(fd, line.encode())
            return {}

    return Progress()


def version(solver: str) -> str:
    """The solver's name and version as recorded with a run (``"highs 1.16.0"``,
    ``"gurobi 13.0.3"``); the name alone when it cannot be read.

    Parameters
    ----------
    solver : str
        A solver name (``solvers.check`` accepts it).

    Returns
    -------
    str
        Name and version.

    References
    ----------
    Ours.
    """
    if canonical(solver) in commercial.SETTINGS:
        return commercial.version(canonical(solver))
    try:
        if solver == "highs":
            import highspy

            return "highs " + ".".join(
                str(x)
                for x in (highspy.HIGHS_VERSION_MAJOR, highspy.HIGHS_VERSION_MINOR,
                          highspy.HIGHS_VERSION_PATCH)
            )
        if solver in ("scip", "scip_direct"):
            import pyscipopt

            return f"scip {pyscipopt.Model().version()} (pyscipopt {pyscipopt.__version__})"
    except Exception:  # noqa: BLE001 - a version string is informative only
        pass
    return solver


def run(
    model: Any,
    solver: str = "highs",
    *,
    time_limit: float | None = None,
    mip_gap: float | None = None,
    threads: int | None = None,
    warm: bool = False,
    tee: bool = False,
    options: dict[str, Any] | None = None,
    progress: float | None = None,
) -> SolverRun:
    """Solve ``model`` in place; variable values are loaded when a solution exists.

    ``progress``: seconds between progress lines on stderr (HiGHS: incumbent, bound, gap,
    elapsed time); None for none."""
    check(solver)
    name = canonical(solver)
    if name in commercial.SETTINGS:
        return commercial.run(model, name, time_limit=time_limit, mip_gap=mip_gap,
                              threads=threads, warm=warm, tee=tee, options=options or {})
    if solver in ALIASES:
        args = (model, ALIASES[solver], time_limit, mip_gap, threads, warm, tee, options or {},
                progress)
        if ALIASES[solver] == "scip_direct" and hasattr(os, "fork"):
            return _run_forked(*args)
        return _run_contrib(*args)
    return _run_legacy(model, solver, time_limit, mip_gap, threads, tee, options or {})


def _run_forked(model, *args) -> SolverRun:
    """:func:`_run_contrib` in a forked child (:func:`forked`); the variable values of its
    solution are copied back into ``model``."""
    import pyomo.environ as pyo

    variables = list(model.component_data_objects(pyo.Var, descend_into=True))

    def child() -> tuple[SolverRun, list]:
        run = _run_contrib(model, *args)
        return run, [v.value for v in variables]

    try:
        run, values = forked(child)
    except Crashed as exc:
        return SolverRun("error", False, None, None, str(exc))
    for var, value in zip(variables, values, strict=True):
        var.set_value(value, skip_validation=True)
    return run


def _run_contrib(model, name, time_limit, mip_gap, threads, warm, tee, options,
                 progress=None) -> SolverRun:
    if name == "highs":
        direct.prepare_highs(threads)
    run, log = _solve_contrib(model, name, time_limit, mip_gap, threads, warm, tee, options,
                              progress)
    if name == "highs" and run.status == "error" and direct._SCHEDULER_CLASH in log:
        # another user of highspy in this process started the scheduler with another count
        direct.reset_highs_scheduler()
        run, log = _solve_contrib(model, name, time_limit, mip_gap, threads, warm, tee, options,
                                  progress)
    if run.status == "error":
        run.message = _error_message(run.message, log)
    return run


def _error_message(condition: str, log: str) -> str:
    """The solver's own words for a failed run: its ERROR lines, else the last log line."""
    lines = [" ".join(line.split()) for line in log.splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower()]
    said = "; ".join(errors[:3]) if errors else (lines[-1] if lines else "")
    return f"{condition}: {said}" if said else condition


def _solve_contrib(model, name, time_limit, mip_gap, threads, warm, tee, options,
                   progress=None):
    from pyomo.contrib.solver.common.factory import SolverFactory
    from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition

    if name == "highs":
        opt = _highs_class()()
        opt.warm = warm
        opt.progress = progress
        kwargs: dict[str, Any] = {}
    elif name == "scip_direct":
        if time_limit is not None:  # SCIP refuses limits/time above 1e20 s: no limit anyway
            time_limit = min(time_limit, SCIP_MAX_SECONDS)
        opt = _scip_class()()
        opt.progress = progress
        kwargs = {"warmstart_discrete_vars": warm}
    else:
        opt = SolverFactory(name)
        kwargs = {"warmstart_discrete_vars": warm}
    log = io.StringIO()
    streams: list[Any] = [log] + ([sys.stdout] if tee else [])
    res = opt.solve(
        model,
        tee=streams,
        load_solutions=False,
        raise_exception_on_nonoptimal_result=False,
        time_limit=time_limit,
        rel_gap=mip_gap,
        threads=threads,
        solver_options=options,
        **kwargs,
    )
    tc = res.termination_condition
    has = res.solution_status in (SolutionStatus.feasible, SolutionStatus.optimal)
    if has:
        res.solution_loader.load_vars()
    obj = _num(res.incumbent_objective) if has else None
    bound = _num(res.objective_bound)
    if tc == TerminationCondition.convergenceCriteriaSatisfied and has:
        status = "optimal"
    elif tc == TerminationCondition.maxTimeLimit:
        status = "time_limit"
    elif tc == TerminationCondition.interrupted or getattr(opt, "interrupted", False):
        status = "interrupted"
        if bound is None:
            bound = _num(getattr(opt, "dual_bound", None))
    elif tc in (TerminationCondition.provenInfeasible, TerminationCondition.locallyInfeasible,
                TerminationCondition.infeasibleOrUnbounded):
        status = "infeasible"
    elif has:
        status = "feasible"
    else:
        status = "error"
    return SolverRun(status, has, obj, bound, message=str(tc.name)), log.getvalue()


def _run_legacy(model, name, time_limit, mip_gap, threads, tee, options) -> SolverRun:
    import pyomo.environ as pyo
    from pyomo.opt import SolverStatus, TerminationCondition

    opt = pyo.SolverFactory(name)
    opts = dict(options)
    if time_limit is not None:
        opts.setdefault("time_limit", time_limit)
    if mip_gap is not None:
        opts.setdefault("mip_gap", mip_gap)
    if threads is not None:
        opts.setdefault("threads", threads)
    res = opt.solve(model, tee=tee, options=opts, load_solutions=False)
    tc = res.solver.termination_condition
    has = len(res.solution) > 0
    if has:
        model.solutions.load_from(res)
    sense_min = _is_min(model)
    lb, ub = _num(res.problem.lower_bound), _num(res.problem.upper_bound)
    bound = lb if sense_min else ub
    obj = None
    if has:
        obj = float(pyo.value(next(model.component_data_objects(pyo.Objective, active=True))))
    if tc == TerminationCondition.optimal:
        status = "optimal"
    elif tc == TerminationCondition.maxTimeLimit:
        status = "time_limit"
    elif tc in (TerminationCondition.infeasible, TerminationCondition.infeasibleOrUnbounded):
        status = "infeasible"
    elif has and res.solver.status == SolverStatus.ok:
        status = "feasible"
    else:
        status = "error"
    return SolverRun(status, has, obj, bound, message=str(tc))


def _is_min(model) -> bool:
    import pyomo.environ as pyo

    obj = next(model.component_data_objects(pyo.Objective, active=True))
    return obj.sense == pyo.minimize
