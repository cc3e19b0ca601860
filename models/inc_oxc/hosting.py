"""INC/OXC (paper 002): a proof that no solution exists because the parameter servers cannot all
be hosted, and rate counts that stay finite as the rate goes to 0.

Validation checks each PS alone (it fits some rack, or a PDP switch exists) and the workers'
total; an instance can pass both and still host no PS: every job whose PS is not on a PDP switch
(at most ``sum C_k`` of them, none when INC is off) puts its PS on a server, so the workers plus
the smallest such PS demands must fit the racks' total CPU and memory (eq. 2 summed over the
racks, with the evaluator's tolerance). When they do not, the instance has no feasible solution:
every heuristic and bound of the problem raises :class:`~dmlopt.errors.InstanceError` saying so
(the core's ``dmlopt.solve`` then runs the MIP alone, which proves it infeasible).
"""

from __future__ import annotations

import math

import numpy as np

from dmlopt.models.inc_oxc.constants import TOL
from dmlopt.models.inc_oxc.instance import Instance

#: absolute slack of the evaluator's capacity check per rack (models/inc_oxc/evaluation.py)
_ABS = 1e-9


def unhostable(instance: Instance) -> str | None:
    """Why no solution of ``instance`` exists, when the PS cannot all be hosted; else None.

    Parameters
    ----------
    instance : Instance
        The INC/OXC instance.

    Returns
    -------
    str or None
        A sentence naming the resource, the demand and the capacity when the workers plus the
        ``J - sum C_k`` smallest PS demands (the PS that must run on servers) exceed the racks'
        total of that resource (with the evaluator's tolerance); None when this proof does not
        apply (the instance may still be infeasible: the proof is a relaxation).

    References
    ----------
    Paper 002 (Dong et al.), section II-B, eqs. (1), (2), (5); ours: the aggregate of (2).
    """
    A = instance.arrays
    J = len(instance.jobs)
    on_switch = min(int(A["slots"].sum()), J)
    on_servers = J - on_switch
    if on_servers == 0:
        return None
    room = (A["cap"] * (1 + TOL) + _ABS).sum(axis=0)
    for r, name in ((0, "cpu"), (2, "mem")):
        ps = np.sort(A["psdem"][:, r])[:on_servers]
        need = float(A["wdem"][:, r].sum()) + float(ps.sum())
        if need > room[r]:
            where = ("no PDP switch: INC off or no rack with ps_slots > 0" if on_switch == 0
                     else f"{on_switch} PDP slot(s) for {J} jobs")
            return (f"the workers and the {on_servers} PS that must run on servers ({where}) "
                    f"need {name} {need:g}, more than the racks' total {float(room[r]):g}: no PS "
                    "placement exists, the instance has no feasible solution")
    return None


def check_hostable(instance: Instance) -> None:
    """Raise :class:`~dmlopt.errors.InstanceError` when :func:`unhostable` proves ``instance``
    has no feasible solution.

    Parameters
    ----------
    instance : Instance
        The INC/OXC instance.

    Returns
    -------
    None
        Returns when the proof does not apply; else raises InstanceError (field ``jobs``).

    References
    ----------
    Ours (module docstring).
    """
    why = unhostable(instance)
    if why is not None:
        from dmlopt.errors import InstanceError

        raise InstanceError("jobs", message=f"jobs: {why}")


def capped_count(total: float, rate: float, most: int) -> int:
    """How many flows of ``rate`` fit in ``total`` (with a 1e-12 relative slack), at most
    ``most``; finite as ``rate`` goes to 0 (``total / rate`` would overflow).

    Parameters
    ----------
    total : float
        The capacity (a link's or the circuits' bandwidth).
    rate : float
        The rate of one flow (>= 0).
    most : int
        The cap (the job's workers).

    Returns
    -------
    int
        ``min(most, floor(total (1 + 1e-12) / rate))``; ``most`` when ``rate`` is 0.

    References
    ----------
    Ours.
    """
    room = total * (1 + 1e-12)
    if rate * most <= room:
        return most
    return min(most, math.floor(room / rate))
