"""Nara (paper 001): deciding a set of requests by its rack patterns (logic-based Benders), for
the exact method ``acceptance-sets``.

The feasibility MILP of a set S (:func:`dmlopt.models.nara.exact.allocate_set`) has to choose,
for every request, which racks it uses and then which servers of those racks; HiGHS neither
finds a point nor proves infeasibility on some 28-request sets of 40 servers in minutes. The
two levels are split here:

* the *rack relaxation* (:func:`rack_model`): per request and rack, the number of servers
  used, the CPU and memory placed there (kept over the whole holding period: no migration), the
  racks used (binary ``w``) and the candidate paths between them exactly as in formulation
  ``offline``; per step and rack the CPU, memory and access-link bandwidth of the rack as a
  whole, per step the other links. Every evaluator-feasible allocation of S gives a point of
  it (sum its server amounts by rack), so the relaxation being infeasible proves S impossible;
* the *pattern check*: with the racks each request uses fixed to a pattern P (``w``), the
  feasibility MILP of S allows only allocations whose racks used are exactly P. HiGHS decides
  it in seconds where the free MILP stalls. When it proves it *infeasible*, no allocation has
  pattern P, and the no-good row ``sum_{w_ir = 1 in P} (1 - w_ir) + sum_{w_ir = 0 in P} w_ir
  >= 1`` excludes exactly P from the relaxation; a feasible point is an allocation of S.

:func:`decide_by_racks` alternates the two (G. Codato and M. Fischetti, combinatorial Benders
cuts; J. N. Hooker and G. Ottosson, logic-based Benders decomposition): the relaxation proven
infeasible with only proven no-goods proves S impossible. A pattern check stopped by its time
limit proves nothing: its pattern is still excluded (to move on), but the set can then only be
found allocatable, never refuted.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from dmlopt import solvers
from dmlopt.models.nara.constants import BW_TOL
from dmlopt.models.nara.instance import Instance, Solution

#: seconds of one pattern check
PATTERN_SECONDS = 20.0


def rack_model(sub: Instance) -> Any:
    """The rack relaxation of an episode whose requests must all be accepted (module
    docstring): a Pyomo model without objective whose points include the rack aggregate of
    every evaluator-feasible allocation accepting every request.

    Parameters
    ----------
    sub : Instance
        A Nara episode (in :func:`decide_by_racks`, the episode restricted to a set).

    Returns
    -------
    pyomo.environ.ConcreteModel
        Variables ``n[i, r]`` (servers of rack r used by request i), ``c``, ``g`` (CPU and
        memory in rack r), ``w[i, r]`` (binary: rack r used), ``u[i]`` (i uses >= 2 servers),
        ``ch[i, r]`` (access bandwidth i charges in rack r), ``z``, ``y`` (paths and links as
        in formulation ``offline``), and an empty ``ConstraintList`` ``nogood``.

    References
    ----------
    Paper 001 (Shabka, Zervas), section 3.1 (constraints 1-3, summed over the servers of each
    rack); ours: the aggregation and the access-link and conflict rows per rack.
    """
    import pyomo.environ as pyo

    from dmlopt.models.nara.formulations import _conflict_cliques

    net, reqs, active = sub.net, list(sub.requests), sub.active_sets()
    n, n_racks = len(reqs), net.n_racks
    srv = [[int(s) for s in net.rack_servers[r]] for r in range(n_racks)]
    cpu = [int(sum(net.cpu[s] for s in srv[r])) for r in range(n_racks)]
    mem = [int(sum(net.mem[s] for s in srv[r])) for r in range(n_racks)]
    max_c, max_m = max(int(np.max(net.cpu)), 1), max(int(np.max(net.mem)), 1)
    need = [max(-(-r.c // max_c), -(-r.m // max_m), 1) for r in reqs]
    acc_cap = [float(sum(net.cap[int(net.access[s])] for s in srv[r])) for r in range(n_racks)]
    top_cap = [max(float(net.cap[int(net.access[s])]) for s in srv[r]) for r in range(n_racks)]
    m = pyo.ConcreteModel(name=f"nara_racks_{sub.name}")
    ir = [(i, r) for i in range(n) for r in range(n_racks)]
    m.n = pyo.Var(ir, domain=pyo.NonNegativeIntegers, bounds=lambda m, i, r: (0, len(srv[r])))
    m.c = pyo.Var(ir, domain=pyo.NonNegativeIntegers,
                  bounds=lambda m, i, r: (0, min(cpu[r], reqs[i].c)))
    m.g = pyo.Var(ir, domain=pyo.NonNegativeIntegers,
                  bounds=lambda m, i, r: (0, min(mem[r], reqs[i].m)))
    m.w = pyo.Var(ir, domain=pyo.Binary)
    m.u = pyo.Var(range(n), domain=pyo.Binary)
    m.ch = pyo.Var(ir, bounds=(0, None))
    racks = range(n_racks)
    m.cover_c = pyo.Constraint(range(n), rule=lambda m, i: sum(m.c[i, r] for r in racks)
                               == reqs[i].c)
    m.cover_g = pyo.Constraint(range(n), rule=lambda m, i: sum(m.g[i, r] for r in racks)
                               == reqs[i].m)
    m.per_c = pyo.Constraint(ir, rule=lambda m, i, r: m.c[i, r] <= max_c * m.n[i, r])
    m.per_g = pyo.Constraint(ir, rule=lambda m, i, r: m.g[i, r] <= max_m * m.n[i, r])
    m.gives = pyo.Constraint(ir, rule=lambda m, i, r: m.n[i, r] <= m.c[i, r] + m.g[i, r])
    m.used = pyo.Constraint(ir, rule=lambda m, i, r: m.n[i, r] <= len(srv[r]) * m.w[i, r])
    m.used1 = pyo.Constraint(ir, rule=lambda m, i, r: m.w[i, r] <= m.n[i, r])
    m.multi = pyo.Constraint(range(n), rule=lambda m, i: sum(m.n[i, r] for r in racks)
                             <= 1 + (net.n_servers - 1) * m.u[i])
    m.must_multi = pyo.Constraint([i for i in range(n) if need[i] >= 2],
                                  rule=lambda m, i: m.u[i] == 1)
    m.charge_access = pyo.Constraint(
        ir, rule=lambda m, i, r: m.ch[i, r] >= reqs[i].b * (m.n[i, r] - len(srv[r])
                                                             * (1 - m.u[i])))
    _rack_paths(m, net, n)
    steps = [j for j, act in enumerate(active) if act]
    sr = [(j, r) for j in steps for r in racks]
    m.cap_c = pyo.Constraint(sr, rule=lambda m, j, r: sum(m.c[i, r] for i in active[j])
                             <= cpu[r])
    m.cap_g = pyo.Constraint(sr, rule=lambda m, j, r: sum(m.g[i, r] for i in active[j])
                             <= mem[r])
    m.cap_access = pyo.Constraint(sr, rule=lambda m, j, r: sum(m.ch[i, r] for i in active[j])
                                  <= acc_cap[r] + len(srv[r]) * BW_TOL)
    # requests of >= 2 servers whose bandwidths pairwise exceed every access link of the rack
    # never share a server of it
    rows: set[tuple[int, tuple[int, ...]]] = set()
    for j in steps:
        bs = {i: reqs[i].b for i in active[j] if need[i] >= 2}
        for r in racks:
            rows |= {(r, tuple(k)) for k in _conflict_cliques(bs, top_cap[r])}
    clq = sorted(rows)
    m.conflict = pyo.Constraint(range(len(clq)), rule=lambda m, q: sum(
        m.n[i, clq[q][0]] for i in clq[q][1]) <= len(srv[clq[q][0]]))

    def cap_link(m, j, e):
        terms = [reqs[i].b * m.y[i, e] for i in active[j] if (i, e) in m.y]
        return sum(terms) <= float(net.cap[e]) + BW_TOL if terms else pyo.Constraint.Skip

    m.cap_link = pyo.Constraint(steps, sorted({e for (_, e) in m.y}), rule=cap_link)
    m.nogood = pyo.ConstraintList()
    m.obj = pyo.Objective(expr=0.0)
    return m


def _rack_paths(m: Any, net: Any, n: int) -> None:
    """Section 3.1 constraint 3 on the rack variables ``w``: a candidate path for every pair of
    racks used and every link of a chosen path charged once (as formulation ``offline``)."""
    import pyomo.environ as pyo

    pz = [(i, ra, rb, p) for i in range(n) for (ra, rb), pl in net.cand.items()
          for p in range(len(pl))]
    m.z = pyo.Var(pz, domain=pyo.Binary)
    m.pair = pyo.Constraint(
        [(i, ra, rb) for i in range(n) for (ra, rb) in net.cand],
        rule=lambda m, i, ra, rb: sum(m.z[i, ra, rb, p] for p in range(len(net.cand[(ra, rb)])))
        >= m.w[i, ra] + m.w[i, rb] - 1)
    users: dict[tuple[int, int], list[tuple[int, int, int, int]]] = {}
    for i, ra, rb, p in pz:
        for e in net.cand[(ra, rb)][p]:
            users.setdefault((i, e), []).append((i, ra, rb, p))
    m.y = pyo.Var(sorted(users), bounds=(0, 1))
    m.charge = pyo.Constraint(
        [(i, e, k) for (i, e), us in users.items() for k in range(len(us))],
        rule=lambda m, i, e, k: m.y[i, e] >= m.z[users[(i, e)][k]])


def _pattern_model(sub: Instance) -> Any:
    """Formulation ``offline`` of ``sub`` (strong cuts, rack symmetry, no objective cut) with
    every acceptance fixed to 1: the model of
    :func:`dmlopt.models.nara.exact.allocate_set`."""
    from dmlopt.models.nara import formulations as nf

    net = sub.net
    model = nf._model(net, list(sub.requests), sub.active_sets(), net.cpu, net.mem, net.cap,
                      "count", f"nara_pattern_{sub.name}", symmetry=True, cuts="strong")
    for i in model.I:
        model.acc[i].fix(1)
    return model


def _fix_pattern(model: Any, net: Any, pattern: dict[tuple[int, int], int]) -> None:
    """Restrict the feasibility MILP to allocations whose racks used are exactly
    ``pattern``: no server of an unused rack, the rack indicator of a used rack at 1."""
    for (i, r), used in pattern.items():
        for s in net.rack_servers[r]:
            s = int(s)
            for var in (model.x[i, s], model.a[i, s], model.g[i, s]):
                if used:
                    var.unfix()
                else:
                    var.fix(0)
        if used:
            model.w[i, r].fix(1)
        else:
            model.w[i, r].unfix()


def decide_by_racks(instance: Instance, members: list[int], *, deadline: float,
                    pattern_seconds: float = PATTERN_SECONDS, threads: int = 1
                    ) -> tuple[str, Solution | None, dict[str, float]]:
    """Decide whether the requests ``members`` can all be allocated together by rack patterns
    (module docstring).

    Parameters
    ----------
    instance : Instance
        A Nara episode.
    members : list of int
        Request indices.
    deadline : float
        ``time.monotonic()`` value: no solve starts after it and none runs past it.
    pattern_seconds : float
        Seconds of one pattern check at most (default :data:`PATTERN_SECONDS`).
    threads : int
        HiGHS threads (default 1).

    Returns
    -------
    (outcome, solution, metrics)
        :data:`dmlopt.models.nara.exact.CUT` (the relaxation with the proven no-goods is
        infeasible: no allocation accepts all of ``members``),
        :data:`dmlopt.models.nara.exact.FITS` and an allocation accepting exactly
        ``members`` (a solution of ``instance``, to be evaluated by the caller), or
        :data:`dmlopt.models.nara.exact.UNDECIDED` and None; metrics ``patterns`` (pattern
        checks run) and ``unproven`` (those stopped by their limit).

    References
    ----------
    J. N. Hooker and G. Ottosson, "Logic-based Benders decomposition", Math. Program. 96
    (2003) 33-60; G. Codato and M. Fischetti, Oper. Res. 54 (2006) 756-766; paper 001
    (Shabka, Zervas), section 3.1; ours: the rack relaxation and the pattern check.
    """
    import pyomo.environ as pyo

    from dmlopt.models.nara import formulations as nf
    from dmlopt.models.nara.exact import CUT, FITS, UNDECIDED, lift, sub_episode

    sub = sub_episode(instance, members)
    net, n = sub.net, len(members)
    master = rack_model(sub)
    model = None
    metrics = {"patterns": 0.0, "unproven": 0.0}
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return UNDECIDED, None, metrics
        run = solvers.run(master, "highs", time_limit=max(left, 1e-2), threads=threads)
        if run.status == "infeasible":
            return (CUT if metrics["unproven"] == 0 else UNDECIDED), None, metrics
        if not run.has_solution:
            return UNDECIDED, None, metrics
        pattern = {(i, r): int(round(pyo.value(master.w[i, r])))
                   for i in range(n) for r in range(net.n_racks)}
        model = _pattern_model(sub) if model is None else model
        _fix_pattern(model, net, pattern)
        left = deadline - time.monotonic()
        if left <= 0:
            return UNDECIDED, None, metrics
        check = solvers.run(model, "highs", time_limit=max(min(pattern_seconds, left), 1e-2),
                            threads=threads)
        metrics["patterns"] += 1
        if check.has_solution:
            return FITS, lift(instance, members, nf.decode_allocations(model, net)), metrics
        if check.status != "infeasible":
            metrics["unproven"] += 1
        master.nogood.add(sum(1 - master.w[k] for k, v in pattern.items() if v)
                          + sum(master.w[k] for k, v in pattern.items() if not v) >= 1)
