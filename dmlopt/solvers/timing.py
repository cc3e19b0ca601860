"""Time a model's build may spend: the build deadline of ``dmlopt.solve`` and the refusal of
a model whose pass to the solver would overrun the time limit many times over.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from typing import Any

from dmlopt.errors import SolverError

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
