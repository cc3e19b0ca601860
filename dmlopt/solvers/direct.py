"""Direct ``highspy`` models: the second modelling path beside Pyomo.

Bounds and heuristics that build large LPs and MIPs from arrays (``add_arrays``,
``triplet_model``) run them here (``run_highspy``, which stops on Ctrl-C), and every HiGHS run of
the process, direct or through Pyomo, shares HiGHS's process-wide thread scheduler
(``prepare_highs``, ``reset_highs_scheduler``).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from dmlopt.errors import SolverError

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
