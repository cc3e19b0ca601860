"""Solver back ends: HiGHS (default) and SCIP through Pyomo 6.10's direct interfaces.

``run(model, solver, ...)`` solves a Pyomo model and returns a :class:`SolverRun` with the
status mapped to dmlopt's vocabulary. HiGHS goes through ``pyomo.contrib.solver`` ``highs``
(highspy) with a MIP start added here (Pyomo's interface has none); SCIP through
``scip_direct`` (pyscipopt), which handles the quadratic TAP objective. Any other name is passed
to Pyomo's ``SolverFactory`` unchanged.

SCIP runs in a forked child process where there is ``os.fork`` (:func:`forked`): SCIP 10.0 has
ended its process with a segmentation fault on small models (in its symmetry handling, not on
every run of the same model), which in-process would end the user's program. The child sends
the run and the variable values back; a crash becomes a run with status ``error`` naming the
signal.
"""

from __future__ import annotations

import contextlib
import contextvars
import io
import math
import os
import pickle
import re
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from dmlopt.errors import InstanceError, SolverError

#: the largest ``limits/time`` SCIP takes (seconds); a larger time limit is passed as this
SCIP_MAX_SECONDS = 1e20

#: our names -> Pyomo's
ALIASES = {"highs": "highs", "scip": "scip_direct", "scip_direct": "scip_direct"}


@dataclass
class SolverRun:
    status: str  # optimal | time_limit | infeasible | feasible | interrupted | error
    has_solution: bool
    objective: float | None
    bound: float | None
    message: str = ""


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


#: the ``threads`` value of the last HiGHS run in this process (a sentinel before the first)
_UNSET = object()
_highs_threads: Any = _UNSET

#: what HiGHS prints when its process-wide scheduler was started with another thread count
_SCHEDULER_CLASH = "scheduler has already been initialized"


def reset_highs_scheduler() -> None:
    """Destroy HiGHS's process-wide thread scheduler so the next run may use any thread count.

    HiGHS starts one task scheduler per process (per calling thread from 1.16) at the first
    run, sized by that run's ``threads`` option; a later run asking for another count fails at
    once ("Option 'threads' is set to 1 but the scheduler has already been initialized ...")
    from highspy 1.16 on. ``resetThreadScheduler`` (1.16) or ``resetGlobalScheduler`` (older)
    releases it; ``blocking=True`` waits until its worker threads have exited, so no run can
    overlap it. HiGHS documents the call as unsafe while another HiGHS run is in progress in
    the process: dmlopt solves one model at a time per process.
    """
    import highspy

    reset = getattr(highspy.Highs, "resetThreadScheduler", None) or getattr(
        highspy.Highs, "resetGlobalScheduler", None
    )
    if reset is not None:
        reset(True)


def prepare_highs(threads: int | None) -> None:
    """Reset the scheduler when this run's thread count differs from the previous run's.

    Call it before any direct ``highspy`` run (``Highs.run``) with that run's ``threads``
    option, so that dmlopt's solves and the caller's share one consistent scheduler."""
    global _highs_threads
    if _highs_threads is _UNSET or _highs_threads != threads:
        # first run of dmlopt in this process: another user of highspy may have started the
        # scheduler already (resetting a scheduler that was never started is harmless)
        reset_highs_scheduler()
    _highs_threads = threads


#: the ``time.perf_counter`` value by which the model being built must be solved (None: none)
_BUILD_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "dmlopt_build_deadline", default=None)


@contextlib.contextmanager
def build_deadline(deadline: float | None) -> Any:
    """Within the block, :func:`build_seconds` caps what a model's build may spend on a
    relaxation (e.g. an objective cut) by the time left until ``deadline``.

    Parameters
    ----------
    deadline : float or None
        A ``time.perf_counter`` value (``dmlopt.solve``'s time limit), or None for no limit.

    Returns
    -------
    contextlib.AbstractContextManager
        A context in which :func:`build_seconds` sees the deadline.

    References
    ----------
    Ours.
    """
    token = _BUILD_DEADLINE.set(deadline)
    try:
        yield
    finally:
        _BUILD_DEADLINE.reset(token)


def build_seconds(cap: float, share: float = 0.5) -> float:
    """Seconds a relaxation computed while building a model may take: ``cap``, or ``share`` of
    the time left before the solve's deadline when that is less (at least 0.01 s).

    Parameters
    ----------
    cap : float
        The relaxation's own limit in seconds.
    share : float, optional
        Share of the time left it may take (default 0.5; the solver gets the rest).

    Returns
    -------
    float
        Seconds.

    References
    ----------
    Ours.
    """
    deadline = _BUILD_DEADLINE.get()
    if deadline is None:
        return cap
    return max(min(cap, share * (deadline - time.perf_counter())), 0.01)


def highspy_model() -> Any:
    """A new ``highspy.Highs`` with its output off, whose banner never reaches stdout.

    The first ``Highs()`` of a process prints HiGHS's banner on file descriptor 1 before any
    option can be set, which would break ``--json`` output; it is sent to ``os.devnull``.

    Returns
    -------
    highspy.Highs
        An empty model with ``output_flag`` false.
    """
    import highspy

    sys.stdout.flush()
    saved = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        h = highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(null)
    h.setOptionValue("output_flag", False)
    return h


def add_arrays(h: Any, lower: Any, upper: Any, rows: Any, row_lower: Any, row_upper: Any, *,
               cost: Any = None, integer: Any = None) -> None:
    """Add columns and rows given as arrays to a direct ``highspy.Highs`` model.

    Parameters
    ----------
    h : highspy.Highs
        A model (from :func:`highspy_model`), usually empty.
    lower, upper : array_like of float
        Column bounds; +-inf (numpy's) is HiGHS's infinity.
    rows : scipy.sparse matrix
        The constraint matrix, one row per constraint (converted to CSR).
    row_lower, row_upper : array_like of float
        Row bounds; +-inf is HiGHS's infinity.
    cost : array_like of float, optional
        Column costs (None: no objective).
    integer : array_like of bool, optional
        Columns that are integer (None: none).

    Returns
    -------
    None

    Raises
    ------
    SolverError
        HiGHS refused the columns, costs or rows (then it adds none of them, and a model
        without them would be solved as if they were not there).
    """
    import highspy
    import numpy as np

    inf = highspy.kHighsInf

    def bounds(x: Any) -> Any:
        x = np.asarray(x, dtype=float)
        return np.where(np.isposinf(x), inf, np.where(np.isneginf(x), -inf, x))

    def check(status: Any, what: str) -> None:
        if status == highspy.HighsStatus.kError:  # nothing was added: the model is not ours
            raise SolverError(f"HiGHS refused the model's {what} (a coefficient or bound of "
                              "1e15 or more, or an inconsistent model): no result")

    n = len(lower)
    check(h.addVars(n, bounds(lower), bounds(upper)), "columns")
    if cost is not None:
        check(h.changeColsCost(n, np.arange(n, dtype=np.int32), np.asarray(cost, dtype=float)),
              "costs")
    mat = rows.tocsr()
    check(h.addRows(mat.shape[0], bounds(row_lower), bounds(row_upper), mat.nnz,
                    mat.indptr.astype(np.int32), mat.indices.astype(np.int32),
                    mat.data.astype(float)), "rows")
    if integer is not None:
        idx = np.flatnonzero(integer).astype(np.int32)
        h.changeColsIntegrality(len(idx), idx,
                                np.full(len(idx), highspy.HighsVarType.kInteger))


def triplet_model(lower: Any, upper: Any, integer: Any, row_lower: Any, row_upper: Any,
                  entries: Any, *, threads: int = 1, time_limit: float | None = None) -> Any:
    """A silent direct ``highspy.Highs`` model of columns, rows and (row, column, value) entries.

    Parameters
    ----------
    lower, upper : array_like of float
        Column bounds; +-inf is HiGHS's infinity.
    integer : array_like of bool
        Columns that are integer.
    row_lower, row_upper : array_like of float
        Row bounds; +-inf is HiGHS's infinity.
    entries : sequence of (int, int, float)
        The nonzeros of the constraint matrix as (row, column, value); a (row, column) pair
        given twice adds up.
    threads : int, optional
        HiGHS threads (default 1).
    time_limit : float or None, optional
        Seconds (at least 0.01 is asked); None: no limit.

    Returns
    -------
    highspy.Highs
        The model, not yet run (:func:`run_highspy`), with no objective.
    """
    import numpy as np
    import scipy.sparse as sp

    h = highspy_model()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", int(threads))
    if time_limit is not None:
        h.setOptionValue("time_limit", max(float(time_limit), 0.01))
    ent = np.array(list(entries), dtype=[("r", np.int64), ("c", np.int64), ("v", float)])
    mat = sp.csr_matrix((ent["v"], (ent["r"], ent["c"])), shape=(len(row_lower), len(lower)))
    add_arrays(h, lower, upper, mat, row_lower, row_upper, integer=np.asarray(integer, bool))
    return h


#: HiGHS model statuses after which its dual bound (``mip_dual_bound``, or the objective of an
#: optimal LP) is a valid bound: solved, or stopped by a limit or an interrupt. Any other status
#: ("Empty", "Load error", "Model error", ...) gives no bound, whatever the info fields hold.
DUAL_BOUND_STATUSES = frozenset({
    "Optimal", "Time limit reached", "Iteration limit reached", "Solution limit reached",
    "Interrupted by user", "Interrupted by HiGHS", "Memory limit reached",
    "Bound on objective reached", "Target for objective reached"})


def pass_model(h: Any, lp: Any) -> None:
    """Hand ``lp`` (a ``highspy.HighsLp``) to ``h``; raise when HiGHS refuses it.

    HiGHS refuses a model with a coefficient or bound of 1e15 or more in absolute value (its
    ``large_matrix_value``) and then solves nothing: its status reads ``"Empty"`` and its
    bound 0, which is no bound at all.

    Parameters
    ----------
    h : highspy.Highs
        The solver object.
    lp : highspy.HighsLp
        The model.

    Raises
    ------
    SolverError
        HiGHS returned an error for the model.
    """
    import highspy

    if h.passModel(lp) == highspy.HighsStatus.kError:
        raise SolverError("HiGHS refused the model (a coefficient or bound of 1e15 or more, "
                          "or an inconsistent model): no bound")


def run_highspy(h: Any) -> None:
    """Run a direct ``highspy.Highs`` model as ``h.run()`` does, but stop it on Ctrl-C.

    ``Highs.run`` holds a SIGINT until the solve ends (the signal is handled only when the
    call returns to Python); here HiGHS runs in highspy's solver thread while this thread
    waits in 0.1 s steps, so Ctrl-C cancels the run through HiGHS's interrupt callback
    within a fraction of a second and then propagates as :class:`KeyboardInterrupt`.

    Parameters
    ----------
    h : highspy.Highs
        A model with its options set, not running.

    Raises
    ------
    KeyboardInterrupt
        Ctrl-C during the run (the model is stopped first, so it may be reused or dropped).
    """
    h.HandleUserInterrupt = True
    h.startSolve()
    try:
        while not h.wait(0.1)[0]:
            pass
    except KeyboardInterrupt:
        h.cancelSolve()
        while True:
            try:
                if h.wait(0.1)[0]:
                    break
            except KeyboardInterrupt:  # a second Ctrl-C while HiGHS winds down
                continue
        raise


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


def available() -> list[str]:
    """Solver names usable here."""
    out = []
    try:
        import highspy  # noqa: F401

        out.append("highs")
    except ImportError:
        pass
    try:
        import pyscipopt  # noqa: F401

        out.append("scip")
    except ImportError:
        pass
    return out


#: names of other Pyomo solvers the user opts in to, comma-separated (e.g. "gurobi,cplex")
OPT_IN_ENV = "DMLOPT_SOLVERS"

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,39}")

#: the relative gap at which a run counts as proven optimal, whatever the solver's settings
OPTIMALITY_GAP = 1e-4

#: the absolute gap that also proves it (HiGHS's default ``mip_abs_gap``; an objective near 0)
OPTIMALITY_ABS_GAP = 1e-6

#: the largest thread count accepted (a run asking for more would start that many threads)
MAX_THREADS = 256


def allowed() -> list[str]:
    """The solver names accepted: highs, scip, and the names listed in ``DMLOPT_SOLVERS``."""
    extra = [x.strip() for x in os.environ.get(OPT_IN_ENV, "").split(",") if x.strip()]
    return ["highs", "scip"] + [x for x in extra if _NAME.fullmatch(x) and x not in ALIASES]


def check(solver: Any) -> None:
    """Raise :class:`SolverError` if ``solver`` is not an allowed, installed solver name.

    Only ``highs`` and ``scip`` are accepted unless the user opts in to another Pyomo solver
    name with ``DMLOPT_SOLVERS=gurobi,cplex``; a name is never a path or an executable
    (``asl:/some/program`` is refused before Pyomo sees it).
    """
    if not isinstance(solver, str) or not solver:
        raise SolverError(f"solver: {solver!r} must be a solver name (one of: "
                          f"{', '.join(allowed())})")
    if solver in ALIASES:
        name = "scip" if ALIASES[solver].startswith("scip") else "highs"
        if name not in available():
            raise SolverError(f"solver: {name!r} is not installed here (pip install "
                              f"{'pyscipopt' if name == 'scip' else 'highspy'})")
        return
    if solver not in allowed():
        hint = "" if _NAME.fullmatch(solver) else " (a solver name, never a path)"
        raise SolverError(
            f"solver: {solver!r} is not an allowed solver{hint} (allowed: "
            f"{', '.join(allowed())}; to use another Pyomo solver set {OPT_IN_ENV}=name)"
        )
    if not _quietly(lambda: _legacy_available(solver)):
        raise SolverError(
            f"solver: {solver!r} is not available to Pyomo here (is its executable or "
            "Python package installed and licensed?)"
        )


def _legacy_available(solver: str) -> bool:
    import pyomo.environ as pyo

    try:
        return bool(pyo.SolverFactory(solver).available(exception_flag=False))
    except Exception:  # noqa: BLE001 - Pyomo raises many kinds for unknown names
        return False


def _quietly(fn: Any) -> Any:
    """Run ``fn`` with file descriptors 1 and 2 on /dev/null and Pyomo's logging off (Pyomo
    warns on unknown solver names; HiGHS prints its banner from C++). Python's own streams are
    left in place (objects made inside may keep them) and flushed into /dev/null."""
    import logging

    logger = logging.getLogger("pyomo")
    level = logger.level
    logger.setLevel(logging.CRITICAL + 1)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        return fn()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)
        logger.setLevel(level)


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


#: passing a model built in Pyomo to a solver takes about this many times its build (measured
#: 2.6-3.6 times on the formulations of every problem)
PASS_PER_BUILD = 3.0


def check_pass_time(built: float, time_limit: float | None, what: str, problem: str) -> None:
    """Refuse a model whose pass to the solver would take far longer than the time limit.

    Parameters
    ----------
    built : float
        Seconds the model's build took.
    time_limit : float or None
        The run's time limit in seconds (None: no check).
    what : str
        The command and formulation, for the message (``"solve: the 'offline' model"``).
    problem : str
        The problem's name, for the hint.

    Raises
    ------
    SolverError
        When :data:`PASS_PER_BUILD` times ``built`` is above both 4 times ``time_limit`` and
        30 s: the solver's own time limit starts only after the pass, so the run would
        overrun the limit many times over. The message names the limit needed.

    References
    ----------
    Ours.
    """
    need = PASS_PER_BUILD * built
    if time_limit is not None and need > max(4 * time_limit, 30.0):
        raise SolverError(
            f"{what} took {built:.0f} s to build and passing it to the solver would take "
            f"about {need:.0f} s more, far above the time limit of {time_limit:g} s: give a "
            f"time limit of at least {need / 4:.0f} s, or a heuristic or bound that scales "
            f"(dmlopt list {problem})")


def check_settings(time_limit: Any = None, mip_gap: Any = None, threads: Any = None) -> None:
    """``time_limit`` finite and > 0, ``mip_gap`` in [0, 1), ``threads`` an integer in
    [1, MAX_THREADS] (each may be None: the solver's default)."""
    if time_limit is not None and not (_is_number(time_limit) and time_limit > 0):
        raise InstanceError("time_limit", time_limit, "must be a finite number of seconds > 0")
    if mip_gap is not None and not (_is_number(mip_gap) and 0 <= mip_gap < 1):
        raise InstanceError("mip_gap", mip_gap, "must be a relative gap in [0, 1)")
    if threads is not None and not (isinstance(threads, int) and not isinstance(threads, bool)
                                    and 1 <= threads <= MAX_THREADS):
        raise InstanceError("threads", threads, f"must be an integer in [1, {MAX_THREADS}]")


def writes_files(option: str) -> bool:
    """Whether a solver option names a file to read or write (refused in suites)."""
    low = option.lower()
    return "file" in low or low.startswith("write") or "/write" in low


def check_options(solver: str, options: Any, *, allow_files: bool = True) -> None:
    """Every option must be one of the solver's own, with a value of its type.

    HiGHS options are checked against ``Highs.getOptionType``, SCIP parameters against
    ``Model.getParams``; options of opted-in solvers are passed through unchecked. With
    ``allow_files=False`` (suites) an option that reads or writes a file is refused.
    """
    if options is None:
        return
    if not isinstance(options, dict):
        raise InstanceError("solver_options", options, "must be a table of option = value")
    for key, value in options.items():
        if not isinstance(key, str) or not key:
            raise InstanceError("solver_options", key, "must be option names")
        if not allow_files and writes_files(key):
            raise InstanceError(f"solver_options.{key}", value, "reads or writes a file: not "
                                "allowed in a suite (set it from Python, where you own the "
                                "process)")
        if isinstance(value, float) and not math.isfinite(value):
            raise InstanceError(f"solver_options.{key}", value, "must be finite")
        if isinstance(value, int) and not isinstance(value, bool) and \
                not -(2**63) <= value < 2**63:
            raise InstanceError(f"solver_options.{key}", value, "is outside the 64-bit range")
        if not isinstance(value, bool | int | float | str):
            raise InstanceError(f"solver_options.{key}", value, "must be a number, a boolean "
                                "or a string")
        name = ALIASES.get(solver, solver)
        if name == "highs":
            _check_highs_option(key, value)
        elif name == "scip_direct":
            _check_scip_option(key, value)


def _check_highs_option(key: str, value: Any) -> None:
    import highspy

    status, kind = _highs_probe().getOptionType(key)
    if status != highspy.HighsStatus.kOk:
        raise InstanceError(f"solver_options.{key}", value, "is not a HiGHS option (see "
                            "https://ergo-code.github.io/HiGHS/dev/options/definitions/)")
    types = {highspy.HighsOptionType.kBool: (bool,), highspy.HighsOptionType.kInt: (int,),
             highspy.HighsOptionType.kDouble: (int, float), highspy.HighsOptionType.kString:
             (str,)}
    ok = types.get(kind, (object,))
    if not isinstance(value, ok) or (bool not in ok and isinstance(value, bool)):
        raise InstanceError(f"solver_options.{key}", value,
                            f"must be of type {'/'.join(t.__name__ for t in ok)}")
    checker = _highs_checker()
    status, default = checker.getOptionValue(key)
    refused, said = _captured(lambda: checker.setOptionValue(key, value)
                              != highspy.HighsStatus.kOk)
    if not refused:
        checker.setOptionValue(key, default)
        return
    raise InstanceError(f"solver_options.{key}", value,
                        f"is refused by HiGHS: {_solver_words(said, 'ERROR:')}")


def _solver_words(text: str, marker: str) -> str:
    """The solver's own sentence about a refused value, from its log, in one line."""
    lines = [" ".join(line.split()) for line in text.splitlines() if marker in line]
    if not lines:
        return "out of its range or allowed values"
    said = lines[0].split(marker, 1)[1].strip()
    return said.removeprefix("checkOptionValue:").strip()


def _captured(fn: Any) -> tuple[Any, str]:
    """``fn()`` with file descriptors 1 and 2 captured (solvers write their refusals there from
    C) and Python's ``sys.stdout`` / ``sys.stderr`` too (once a SCIP model has sent its output
    through Python, SCIP's error messages go there, process-wide); returns its result and what
    it printed."""
    import contextlib
    import io
    import tempfile

    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    relayed = io.StringIO()
    with tempfile.TemporaryFile() as tmp:
        try:
            os.dup2(tmp.fileno(), 1)
            os.dup2(tmp.fileno(), 2)
            with contextlib.redirect_stdout(relayed), contextlib.redirect_stderr(relayed):
                out = fn()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
        tmp.seek(0)
        return out, tmp.read().decode("utf-8", "replace") + relayed.getvalue()


@cache
def _highs_checker() -> Any:
    """A HiGHS object whose log is on, to hear why it refuses an option value."""
    import highspy

    return _quietly(highspy.Highs)


@cache
def _highs_probe() -> Any:
    """One silent HiGHS object to look option names and types up in."""
    import highspy

    h = _quietly(highspy.Highs)
    h.setOptionValue("output_flag", False)
    return h


@cache
def _scip_params() -> dict[str, Any]:
    import pyscipopt

    return _quietly(lambda: pyscipopt.Model().getParams())


def _check_scip_option(key: str, value: Any) -> None:
    params = _scip_params()
    if key not in params:
        raise InstanceError(f"solver_options.{key}", value, "is not a SCIP parameter (see "
                            "https://www.scipopt.org/doc/html/PARAMETERS.php)")
    default = params[key]
    if isinstance(default, bool):
        ok: tuple[type, ...] = (bool,)
    elif isinstance(default, int):
        ok = (int,)
    elif isinstance(default, float):
        ok = (int, float)
    else:
        ok = (str,)
    if not isinstance(value, ok) or (bool not in ok and isinstance(value, bool)):
        raise InstanceError(f"solver_options.{key}", value,
                            f"must be of type {'/'.join(t.__name__ for t in ok)}")
    import pyscipopt

    def attempt() -> bool:
        model = pyscipopt.Model()
        model.hideOutput()
        try:
            model.setParam(key, value)
        except (ValueError, TypeError, OverflowError, LookupError):
            return False
        return True

    accepted, said = _captured(attempt)
    if not accepted:
        raise InstanceError(f"solver_options.{key}", value,
                            f"is refused by SCIP: {_scip_words(said)}")


def _scip_words(text: str) -> str:
    """SCIP's sentence on a refused parameter value (``Invalid value <v> for ... Must be in
    range [a,b].``), without its source locations."""
    for line in text.splitlines():
        if "Invalid value" in line:
            return line.split("ERROR:", 1)[-1].strip()
    return "out of its range or allowed values"


def version(solver: str) -> str:
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
    if solver in ALIASES:
        args = (model, ALIASES[solver], time_limit, mip_gap, threads, warm, tee, options or {},
                progress)
        if ALIASES[solver] == "scip_direct" and hasattr(os, "fork"):
            return _run_forked(*args)
        return _run_contrib(*args)
    return _run_legacy(model, solver, time_limit, mip_gap, threads, tee, options or {})


class Crashed(SolverError):
    """A solver ended the (child) process running it, e.g. with a segmentation fault."""


def forked(fn: Callable[[], Any], what: str = "SCIP") -> Any:
    """``fn()`` run in a forked child process; its result (or exception) comes back pickled.

    Parameters
    ----------
    fn : callable
        Called without arguments in the child; its return value must pickle.
    what : str, optional
        The solver's name for the error message (default ``"SCIP"``).

    Returns
    -------
    object
        What ``fn`` returned; an exception it raised is raised here.

    Raises
    ------
    Crashed
        When the child ended without a result (a signal such as SIGSEGV, or an exit).

    References
    ----------
    Ours: isolates a solver fault (SCIP 10.0's symmetry handling segfaulted on small TAP and
    TABGP models) from the caller's process. Ctrl-C in the parent is passed to the child,
    whose solver then stops with its best solution.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(rfd)
        # text written to a stream that is no file (a capture, a notebook's) goes back to the
        # parent; a real file descriptor is shared and shows the log as it comes
        held = {name: io.StringIO() for name in ("stdout", "stderr")
                if not _has_fd(getattr(sys, name))}
        for name, buf in held.items():
            setattr(sys, name, buf)
        try:
            out: tuple[str, Any] = ("ok", fn())
        except BaseException as exc:  # noqa: BLE001 (re-raised in the parent)
            out = ("raise", exc)
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            text = {name: buf.getvalue() for name, buf in held.items()}
            with os.fdopen(wfd, "wb") as fh:
                try:
                    pickle.dump((*out, text), fh)
                except Exception as exc:  # noqa: BLE001 (an unpicklable exception)
                    pickle.dump(("raise", SolverError(f"{what}: {exc}"), text), fh)
        finally:
            os._exit(0)
    os.close(wfd)
    chunks: list[bytes] = []
    interrupted = False
    with os.fdopen(rfd, "rb") as fh:
        while True:
            try:
                chunk = fh.read(1 << 16)
            except KeyboardInterrupt:
                interrupted = True  # the child stops with its best solution: wait for it
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGINT)
                continue
            if not chunk:
                break
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    if not chunks:
        how = (signal.Signals(os.WTERMSIG(status)).name if os.WIFSIGNALED(status)
               else f"exit status {os.WEXITSTATUS(status)}")
        if interrupted:
            raise KeyboardInterrupt
        raise Crashed(f"{what} ended its process ({how}); no result")
    kind, value, text = pickle.loads(b"".join(chunks))
    for name, written in text.items():
        getattr(sys, name).write(written)
    if kind == "raise":
        raise value
    return value


def _has_fd(stream: Any) -> bool:
    """Whether ``stream`` writes to a file descriptor (shared with a forked child)."""
    try:
        stream.fileno()
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return False
    return True


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
        prepare_highs(threads)
    run, log = _solve_contrib(model, name, time_limit, mip_gap, threads, warm, tee, options,
                              progress)
    if name == "highs" and run.status == "error" and _SCHEDULER_CLASH in log:
        # another user of highspy in this process started the scheduler with another count
        reset_highs_scheduler()
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


def _num(x: Any) -> float | None:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None
