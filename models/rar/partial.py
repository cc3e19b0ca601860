"""RAR (paper 003): the aggregated ILP with integrality kept on the node choices only.

:func:`node_choice_bound` relaxes the mode-and-start binaries of ``aggregated`` (``q``, ``w``)
and the wavelength ones to [0, 1] and keeps integral what each request deploys (``eta``), which
nodes compute it (``y``) and the activated CUs per node (MinCU's ``A``). Every schedule of the
ILP is feasible in it with the same objective, so its optimum is a lower bound on eq. (4) for
every scheme. With ``couple=True`` the rows ``w[j, n, q] <= q[j, q]`` make all computing nodes of
a request share one (fractional) mix of modes and starts; they hold for every integer schedule.

On the 6-node network with 10 requests (MinCU) this small MIP is solved in seconds and its
optimum equals the bound branch and bound on ``aggregated`` reaches after 600 s on most seeds
(docs/rar.md, exact formulations): what separates those bounds from the optima is the timing of
the windows, not the choice of node sets and CU counts.
"""

from __future__ import annotations

import math
from typing import Any

from dmlopt import solvers
from dmlopt.bounds import safe
from dmlopt.contract import BoundValue
from dmlopt.errors import SolverError
from dmlopt.models.rar.constants import SENSE
from dmlopt.models.rar.formulations import build_aggregated
from dmlopt.models.rar.instance import Instance

#: the variables of ``aggregated`` kept integral by :func:`build_node_choice`
KEPT_INTEGRAL = ("eta", "y", "A")


def build_node_choice(instance: Instance, couple: bool = False) -> Any:
    """The aggregated ILP with only ``eta``, ``y`` and ``A`` integral (module docstring).

    Parameters
    ----------
    instance : Instance
        A RAR instance (any scheme).
    couple : bool, default False
        Add ``couple[j, n, q]``: ``w[j, n, q] <= q[j, q]`` (a request's computing nodes share
        its mix of modes and starts).

    Returns
    -------
    pyomo.environ.ConcreteModel
        The model of :func:`~dmlopt.models.rar.formulations.build_aggregated` (same variable
        and constraint names, objective ``obj``) with every other binary relaxed to [0, 1].

    References
    ----------
    Ours, on paper 003 (Chen et al., JOCN 16(5), 2024), section 4.D: a partial relaxation of
    the ``aggregated`` formulation; it adds nothing to the feasible set of integer schedules.
    """
    import pyomo.environ as pyo

    m = build_aggregated(instance)
    if couple:
        m.couple = pyo.Constraint(list(m.w.keys()),
                                  rule=lambda m, j, n, q: m.w[j, n, q] <= m.q[j, q])
    for var in m.component_objects(pyo.Var):
        if var.local_name in KEPT_INTEGRAL:
            continue
        for data in var.values():
            if data.domain is pyo.Binary:
                data.domain = pyo.UnitInterval
    return m


def node_choice_bound(instance: Instance, *, time_limit: float | None = 60.0,
                      couple: bool = False, threads: int = 1) -> BoundValue:
    """A lower bound on eq. (4): the dual bound of :func:`build_node_choice` (HiGHS).

    Parameters
    ----------
    instance : Instance
        A RAR instance (any scheme).
    time_limit : float or None, default 60.0
        Seconds for HiGHS; the dual bound at the stop is valid (None: no limit).
    couple : bool, default False
        See :func:`build_node_choice`.
    threads : int, default 1
        HiGHS threads.

    Returns
    -------
    BoundValue
        HiGHS's dual bound moved to the weak side by :func:`dmlopt.bounds.safe`, with metrics
        ``relaxation_value`` (the relaxation's best objective found, an upper bound on the
        relaxation only, not a schedule) and ``proven`` (1.0 when the relaxation was solved to
        optimality).

    Raises
    ------
    SolverError
        HiGHS stopped without a finite dual bound.

    References
    ----------
    Ours, on paper 003 (Chen et al., JOCN 16(5), 2024), section 4.D (module docstring).
    """
    m = build_node_choice(instance, couple=couple)
    run = solvers.run(m, "highs", time_limit=time_limit, threads=threads)
    if run.status == "interrupted":
        raise KeyboardInterrupt
    if run.bound is None or not math.isfinite(run.bound):
        raise SolverError(f"bound: the node-choice relaxation ended {run.status!r}: no bound")
    return BoundValue(safe(run.bound, SENSE), metrics={
        "relaxation_value": run.objective, "proven": float(run.status == "optimal")})
