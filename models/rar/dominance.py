"""RAR (paper 003): semi-active schedules, a dominance restriction of the start slots.

Fix every deployed request's ring, computing nodes, mode (N, CUs k, duration d), wavelength
and the activated CUs A_n. Moving request j from start s to s - 1 (s > t_a) keeps its window
inside [t_a, t_d] and frees slot s + d - 1; in slot s - 1 each of its nodes n then carries the
others' usage at s - 1 plus k. If on every node of j the others' usage at s - 1 is at most their
usage at s (where j already fits under min(|C_n|, A_n)), and on every ring link the others'
load of j's wavelength at s - 1 is at most that at s, the move keeps every capacity (eqs. 8,
9), raises no peak (MinCU), uses no new wavelength (MinW), changes no ring (MaxR) and ends j
one slot earlier (MinT: eq. (4) drops). The others' usage at s - 1 exceeds that at s only if
some other request on a shared node (or link) has its LAST slot at s - 1. Moves lower the sum
of the starts, so repeating them ends, and some optimal schedule is *semi-active*: every
deployed request starts at its arrival or right after another request that shares a node or a
link with it ends. For all four schemes of eq. (4).

In the binaries of ``aggregated`` (q[j, q] mode and start, w[j, n, q] node n computes j in q;
windows of exactly the mode's duration) this is one row per request j and slot t > t_a_j:

    sum_{q of j starting at t} q[j, q]
        <= sum_{i != j} ( sum_{n in N_j & N_i} sum_{q' of i ending at t - 1} w[i, n, q']
                          + [L_j & L_i meet] sum_{q' of i ending at t - 1} q[i, q'] )

(N_j, L_j: the nodes and links of the rings offered to j; the link term only when wavelengths
can bind). The right side is at least 1 when
a request that shares a node of j's, or a link when wavelengths can bind, ends at t - 1;
without wavelength variables (:func:`~dmlopt.models.rar.formulations._wavelengths_never_bind`)
only shared nodes can stop a move.

:func:`left_shift` moves a solution's requests left while the move raises nothing; its fixed
point satisfies the rows (a request that cannot move has, on some resource, the others' usage
at s - 1 above that at s), so a heuristic's solution can warm-start the restricted model.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dmlopt.models.rar.evaluation import Assignment, Solution, assign_cu_ids, evaluate
from dmlopt.models.rar.instance import Instance, ring_links

# formulations.py registers this module's builder: its helpers are imported where used


def add_left_shift_rows(m: Any, instance: Instance) -> None:
    """Add the semi-active rows ``m.left_shift[j, t]`` to an ``aggregated`` model (module
    docstring).

    Parameters
    ----------
    m : pyomo.environ.ConcreteModel
        A model built by :func:`~dmlopt.models.rar.formulations.build_aggregated` (uses its
        ``q``, ``w``, ``m._rar_modes``).
    instance : Instance
        The instance the model was built from.

    Returns
    -------
    None
        ``m.left_shift`` holds one row per request j and slot t > t_a_j at which some mode of
        j can start; a row whose right side is empty forbids those starts.

    References
    ----------
    Ours, on paper 003 (Chen et al., JOCN 16(5), 2024), section 4.D: the left-shift
    (semi-active schedule) dominance of scheduling theory applied to the windows of eqs.
    (30)-(41); it removes schedules, never all optimal ones (tests/rar/test_dominance.py
    compares the optima with a brute force and with ``aggregated``).
    """
    import pyomo.environ as pyo

    from dmlopt.models.rar.formulations import _wavelengths_never_bind

    inst = instance
    ms = m._rar_modes
    nr = len(inst.requests)
    nodes_of = {j: {v for k in inst.candidate_rings(j) for v in inst.rings[k].nodes}
                for j in range(nr)}
    links_of = {j: {i for k in inst.candidate_rings(j) for i in inst.rings[k].links}
                for j in range(nr)}
    links_bind = not _wavelengths_never_bind(inst)
    # ends at slot e: per (request, node) the w's, per request the q's
    end_w: dict[tuple[int, int, int], list] = {}
    for (i, n, q), var in m.w.items():
        nn, k, d, s = ms[i][q]
        end_w.setdefault((i, n, s + d - 1), []).append(var)
    end_q: dict[tuple[int, int], list] = {}
    starts: dict[tuple[int, int], list] = {}
    for (i, q), var in m.q.items():
        nn, k, d, s = ms[i][q]
        end_q.setdefault((i, s + d - 1), []).append(var)
        if s > inst.requests[i].arrival:
            starts.setdefault((i, s), []).append(var)

    def rhs(j: int, t: int) -> list:
        out: list = []
        for i in range(nr):
            if i == j:
                continue
            for n in sorted(nodes_of[i] & nodes_of[j]):
                out += end_w.get((i, n, t - 1), [])
            if links_bind and links_of[i] & links_of[j]:
                out += end_q.get((i, t - 1), [])
        return out

    keys = sorted(starts)
    m.left_shift = pyo.Constraint(keys, rule=lambda m, j, t: sum(starts[j, t])
                                  <= sum(rhs(j, t)))


def build_semiactive(instance: Instance) -> Any:
    """``aggregated`` restricted to semi-active schedules (formulation "semiactive").

    Parameters
    ----------
    instance : Instance
        The RAR instance (any scheme of eq. (4)).

    Returns
    -------
    pyomo.environ.ConcreteModel
        The model of :func:`~dmlopt.models.rar.formulations.build_aggregated` (same names,
        decoded by :func:`~dmlopt.models.rar.formulations.decode`) with the rows
        ``left_shift`` of :func:`add_left_shift_rows`.

    References
    ----------
    Ours, on paper 003 (Chen et al., JOCN 16(5), 2024), section 4.D (module docstring): the
    same optimum as ``aggregated`` and eqs. (4)-(41), with the schedules that only differ by
    moving requests to earlier slots removed.
    """
    from dmlopt.models.rar.formulations import build_aggregated

    m = build_aggregated(instance)
    add_left_shift_rows(m, instance)
    return m


def _usage(inst: Instance, reqs: list[Assignment | None]
           ) -> tuple[np.ndarray, dict[tuple[int, int], np.ndarray]]:
    """CUs in use per (node, slot) and requests per (link, wavelength) per slot."""
    use = np.zeros((len(inst.nodes), inst.slots + 2), dtype=np.int64)
    load: dict[tuple[int, int], np.ndarray] = {}
    for a in reqs:
        if a is None:
            continue
        for v, ids in zip(a.nodes, a.cus, strict=True):
            use[v, a.start:a.end + 1] += len(ids)
        for i in ring_links(inst, a.ring) or []:
            arr = load.setdefault((i, a.wavelength), np.zeros(inst.slots + 2, dtype=np.int64))
            arr[a.start:a.end + 1] += 1
    return use, load


def left_shift(instance: Instance, solution: Solution) -> Solution:
    """Move deployed requests one slot earlier while the move raises nothing.

    A request moves from s to s - 1 (s > t_a) when on each of its computing nodes the others'
    CUs at s - 1 plus its own stay within the node's CUs and its peak, and on each ring link
    the others' load of its wavelength at s - 1 stays below rho (not checked when wavelengths
    cannot bind: the wavelengths are then renumbered floor(i / rho) in order of the deployed
    requests, as :func:`~dmlopt.models.rar.formulations.decode` does). Repeated until no
    request moves; CU ids are then reassigned (:func:`assign_cu_ids`, one id per CU of the
    peak). The result satisfies :func:`add_left_shift_rows`; eq. (4) does not rise.

    Parameters
    ----------
    instance : Instance
        The RAR instance.
    solution : Solution
        A feasible solution; an infeasible one is returned unchanged.

    Returns
    -------
    Solution
        The shifted solution (the same object when nothing moved or it is infeasible).

    References
    ----------
    Ours (module docstring): the left shifts of the semi-active dominance.
    """
    from dmlopt.models.rar.formulations import _wavelengths_never_bind

    inst = instance
    free_wl = _wavelengths_never_bind(inst)
    if not evaluate(inst, solution).feasible:
        return solution
    reqs = list(solution.requests)
    use, load = _usage(inst, reqs)
    peak = use.max(axis=1)
    moved = False
    changed = True
    while changed:
        changed = False
        for j, a in enumerate(reqs):
            if a is None:
                continue
            while a.start > inst.requests[j].arrival:
                t = a.start - 1
                links = ring_links(inst, a.ring) or []
                fits = all(use[v, t] + len(ids) <= min(inst.nodes[v].cus, peak[v])
                           for v, ids in zip(a.nodes, a.cus, strict=True))
                fits = fits and (free_wl or all(load[i, a.wavelength][t] + 1 <= inst.rho
                                                for i in links))
                if not fits:
                    break
                for v, ids in zip(a.nodes, a.cus, strict=True):
                    use[v, t] += len(ids)
                    use[v, a.end] -= len(ids)
                for i in links:
                    load[i, a.wavelength][t] += 1
                    load[i, a.wavelength][a.end] -= 1
                a = a.model_copy(update={"start": a.start - 1, "end": a.end - 1})
                reqs[j] = a
                moved = changed = True
    if not moved:
        return solution
    plans = [None if a is None else (list(a.nodes), [len(c) for c in a.cus], a.start, a.end)
             for a in reqs]
    ids = assign_cu_ids(inst, plans)
    out: list[Assignment | None] = []
    for j, a in enumerate(reqs):
        if a is not None:
            upd: dict[str, Any] = {"cus": ids[j]}
            if free_wl:  # any floor(i / rho) is free (module docstring of formulations.py)
                upd["wavelength"] = sum(x is not None for x in out) // inst.rho
            a = a.model_copy(update=upd)
        out.append(a)
    return Solution(requests=out)


def warm_start_semiactive(model: Any, instance: Instance, solution: Solution) -> None:
    """Warm-start a ``semiactive`` model: :func:`left_shift`, then the ``aggregated`` start.

    Parameters
    ----------
    model : pyomo.environ.ConcreteModel
        A model of :func:`build_semiactive`.
    instance : Instance
        Its instance.
    solution : Solution
        A feasible solution (a heuristic's, or a previous solve's).

    Returns
    -------
    None
        The model's variables are set (requests the ``aggregated`` start cannot express are
        left unset, as there).

    References
    ----------
    Ours (module docstring).
    """
    from dmlopt.models.rar.formulations import warm_start

    warm_start(model, instance, left_shift(instance, solution))
