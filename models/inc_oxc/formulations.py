"""INC/OXC (paper 002): the MILP of eqs. 1-17 (paper), the strong formulation, decode and
warm start."""

from __future__ import annotations

from typing import Any

import numpy as np

from dmlopt.contract import Formulation
from dmlopt.models.inc_oxc.evaluation import (
    best_f,
    circuits_from_ports,
    evaluate,
    flow_coefficients,
    ports_from_circuits,
)
from dmlopt.models.inc_oxc.instance import Instance, Solution

# ------------------------------------------------------------------------------------------
# exact formulations


def _big_m(instance: Instance) -> float:
    dmin = float(instance.arrays["data"].min())
    return instance.capacity * max(1.0, 1.0 / (2 * dmin))


def _row(expr: Any) -> Any:
    """A constraint rule's row; when its sums are empty it is a constant (one rack: no other
    rack, no circuit to count): no row (Skip) if true, Pyomo's Infeasible if false."""
    import pyomo.environ as pyo

    if expr is True:
        return pyo.Constraint.Skip
    return pyo.Constraint.Infeasible if expr is False else expr


def _workers(instance: Instance) -> list[tuple[int, int]]:
    return [(i, j) for i, job in enumerate(instance.jobs) for j in range(len(job.workers))]


def build_paper(instance: Instance) -> Any:
    """The MILP of section II-B, eqs. (1)-(17), with the corrections listed in the module
    docstring of :mod:`dmlopt.models.inc_oxc` (formulation "paper").

    One binary per worker and rack, per PS and rack (server pool or PDP ToR), per ordered pair
    of OXC ports and per worker, rack pair and PS kind; one bandwidth per worker flow serving
    both phases; one big-M, M = N_ToR B max(1, 1 / (2 d_min)).

    Parameters
    ----------
    instance : Instance
        The INC/OXC instance: racks (CPU, GPU, memory, PS slots of a PDP ToR), ports per ToR
        N_ToR, port bandwidth B (MB/s), jobs with their workers, data d_i (MB) and alpha_i.

    Returns
    -------
    pyomo.environ.ConcreteModel
        Binaries ``pc[i, k]`` (PS of job i on the PDP ToR of k; k in R_c only, eq. 5),
        ``ps[i, k]`` (PS on the server pool of k), ``w[i, j, k]`` (worker j of job i in rack
        k), ``L[n, q]`` (OXC ports n, q paired), the linearisation binaries ``zs``, ``zc``,
        ``zsi``, ``zci`` and bandwidths ``bs``, ``bc``, ``bsi``, ``bci`` (MB/s), ``fij[i, j]``
        and ``f`` (1/s); objective ``obj`` = f (eq. 17, maximised); constraints ``c1`` ...
        ``c16`` named by equation.

    References
    ----------
    Paper 002 (Dong, Yang, Zhang, Xie, Zhu), section II-B, equations (1)-(17). The corrections
    (one bandwidth for push and pull, eq. (12) as the PS's pool link, eqs. (14')-(15') for a
    worker in its PS's rack, alpha per job) are each needed for the model to reproduce Fig. 2;
    the module docstring gives the reasons.
    """
    import pyomo.environ as pyo

    R, P, B = instance.n_racks, instance.n_tor, instance.port_bw
    NB, M = instance.capacity, _big_m(instance)
    jobs = instance.jobs
    m = pyo.ConcreteModel(name=f"inc_oxc_paper_{instance.name}")
    m.J = pyo.RangeSet(0, len(jobs) - 1)
    m.W = pyo.Set(initialize=_workers(instance), dimen=2)
    m.R = pyo.RangeSet(0, R - 1)
    m.Rc = pyo.Set(initialize=instance.pdp_racks())
    m.Pairs = pyo.Set(initialize=[(s, t) for s in range(R) for t in range(R) if s != t], dimen=2)
    m.N = pyo.RangeSet(0, R * P - 1)
    m.NN = pyo.Set(initialize=[(n, q) for n in range(R * P) for q in range(R * P) if n != q],
                   dimen=2)
    m.pc = pyo.Var(m.J, m.Rc, domain=pyo.Binary)          # p^c_ik, k in R_c only (5)
    m.ps = pyo.Var(m.J, m.R, domain=pyo.Binary)           # p^s_ik
    m.w = pyo.Var(m.W, m.R, domain=pyo.Binary)            # w_ijk
    m.L = pyo.Var(m.NN, domain=pyo.Binary)                # L_nm
    m.zs = pyo.Var(m.W, m.Pairs, domain=pyo.Binary)       # z^{w2p,s}_ijst
    m.zc = pyo.Var(m.W, m.Pairs, domain=pyo.Binary)       # z^{w2p,c}_ijst
    m.bs = pyo.Var(m.W, m.Pairs, domain=pyo.NonNegativeReals)  # b^{w2p,s} = b^{p2w,s}
    m.bc = pyo.Var(m.W, m.Pairs, domain=pyo.NonNegativeReals)  # b^{w2p,c} = b^{p2w,c}
    m.zsi = pyo.Var(m.W, m.R, domain=pyo.Binary)          # z^s_ijk
    m.zci = pyo.Var(m.W, m.R, domain=pyo.Binary)          # z^c_ijk
    m.bsi = pyo.Var(m.W, m.R, domain=pyo.NonNegativeReals)  # b^s_ijk
    m.bci = pyo.Var(m.W, m.R, domain=pyo.NonNegativeReals)  # b^c_ijk
    m.fij = pyo.Var(m.W, domain=pyo.NonNegativeReals)
    m.f = pyo.Var(domain=pyo.NonNegativeReals)             # (16) f >= 0

    def pc(i, k):
        return m.pc[i, k] if k in m.Rc else 0

    m.obj = pyo.Objective(expr=m.f, sense=pyo.maximize)  # (17)
    # (1)
    m.c1 = pyo.Constraint(m.Rc, rule=lambda m, k: sum(m.pc[i, k] for i in m.J)
                          <= instance.racks[k].ps_slots)
    # (2)
    def res(attr_w, attr_p):
        def r(m, k):
            lhs = sum(getattr(jobs[i].workers[j], attr_w) * m.w[i, j, k] for i, j in m.W)
            if attr_p:
                lhs += sum(getattr(jobs[i], attr_p) * m.ps[i, k] for i in m.J)
            return lhs <= getattr(instance.racks[k], attr_w)
        return r
    m.c2cpu = pyo.Constraint(m.R, rule=res("cpu", "ps_cpu"))
    m.c2gpu = pyo.Constraint(m.R, rule=res("gpu", None))
    m.c2mem = pyo.Constraint(m.R, rule=res("mem", "ps_mem"))
    # (3), (4)
    m.c3 = pyo.Constraint(m.W, rule=lambda m, i, j: sum(m.w[i, j, k] for k in m.R) == 1)
    m.c4 = pyo.Constraint(m.J, rule=lambda m, i: sum(m.ps[i, k] + pc(i, k) for k in m.R) == 1)

    # (6)-(7) inter-rack, (8)-(9) intra-rack linearisation
    def lin(z, w_, p_, b):
        return [z >= w_ + p_ - 1, z <= 0.5 * (w_ + p_), b <= M * z]

    m.c6 = pyo.ConstraintList()
    for i, j in m.W:
        for s, t in m.Pairs:
            for e in lin(m.zs[i, j, s, t], m.w[i, j, s], m.ps[i, t], m.bs[i, j, s, t]):
                m.c6.add(e)
            for e in lin(m.zc[i, j, s, t], m.w[i, j, s], pc(i, t), m.bc[i, j, s, t]):
                m.c6.add(e)
        for k in m.R:
            for e in lin(m.zsi[i, j, k], m.w[i, j, k], m.ps[i, k], m.bsi[i, j, k]):
                m.c6.add(e)
            for e in lin(m.zci[i, j, k], m.w[i, j, k], pc(i, k), m.bci[i, j, k]):
                m.c6.add(e)
    others = {s: [t for t in range(R) if t != s] for s in range(R)}
    # (10) worker side of rack s
    m.c10 = pyo.Constraint(m.R, rule=lambda m, s: sum(
        m.bs[i, j, s, t] + m.bc[i, j, s, t] for t in others[s] for i, j in m.W)
        + sum(m.bci[i, j, s] + m.bsi[i, j, s] for i, j in m.W) <= NB)
    # (11) pull phase of the workers of rack s from other racks (implied by (10))
    m.c11 = pyo.Constraint(m.R, rule=lambda m, s: _row(sum(
        m.bs[i, j, s, t] + m.bc[i, j, s, t] for t in others[s] for i, j in m.W) <= NB))
    # (12) PS side: pool link of rack t carrying the flows of its server PS
    m.c12 = pyo.Constraint(m.R, rule=lambda m, t: sum(
        m.bs[i, j, s, t] for s in others[t] for i, j in m.W)
        + sum(m.bsi[i, j, t] for i, j in m.W) <= NB)
    # (13) OXC ports and circuits
    m.c13sym = pyo.Constraint(m.NN, rule=lambda m, n, q: m.L[n, q] == m.L[q, n]
                              if n < q else pyo.Constraint.Skip)
    m.c13one = pyo.Constraint(m.N, rule=lambda m, q: _row(sum(m.L[n, q] for n in m.N
                                                               if n != q) <= 1))
    ports = {k: range(k * P, (k + 1) * P) for k in range(R)}
    m.c13cap = pyo.Constraint(m.Pairs, rule=lambda m, s, t: sum(
        m.bs[i, j, s, t] + m.bc[i, j, s, t] for i, j in m.W)
        <= B * sum(m.L[n, q] for n in ports[s] for q in ports[t]))

    # (14)-(15) and (14')-(15') for a worker in its PS's rack
    def den(i, server):
        return 2 * jobs[i].data * ((1 + jobs[i].alpha) if server else 1)

    m.c14 = pyo.ConstraintList()
    for i, j in m.W:
        terms = [(m.bs[i, j, s, t], m.zs[i, j, s, t], True) for s, t in m.Pairs]
        terms += [(m.bc[i, j, s, t], m.zc[i, j, s, t], False) for s, t in m.Pairs
                  if t in m.Rc]
        terms += [(m.bsi[i, j, k], m.zsi[i, j, k], True) for k in m.R]
        terms += [(m.bci[i, j, k], m.zci[i, j, k], False) for k in m.R if k in m.Rc]
        for b, z, server in terms:
            m.c14.add(m.fij[i, j] - b / den(i, server) <= M * (1 - z))
            m.c14.add(b / den(i, server) - m.fij[i, j] <= M * (1 - z))
    # (16)
    m.c16 = pyo.Constraint(m.W, rule=lambda m, i, j: m.f <= m.fij[i, j])
    return m


def _size_paper(instance: Instance) -> tuple[int, int]:
    R, P = instance.n_racks, instance.n_tor
    W, J = sum(len(j.workers) for j in instance.jobs), len(instance.jobs)
    pairs, nports = R * (R - 1), R * P
    n_vars = J * (R + len(instance.pdp_racks())) + W * R + nports * (nports - 1) \
        + 4 * W * pairs + 4 * W * R + W + 1
    n_cons = len(instance.pdp_racks()) + 3 * R + W + J + 6 * W * (pairs + R) + 3 * R \
        + nports * (nports - 1) // 2 + nports + pairs + 2 * W * (pairs + R) * 2 + W
    return n_vars, n_cons


def _bounds(instance: Instance) -> tuple[float, np.ndarray, np.ndarray]:
    """F (bound on f), Rmax_i (bound on a worker's rate), m_i."""
    A = instance.arrays
    F = instance.capacity / (2 * float(A["data"].max()))
    rmax = np.minimum(2 * A["data"] * (1 + A["alpha"]) * F, instance.capacity)
    return F, rmax, A["size"]


def _identical_rack_chains(instance: Instance) -> list[list[int]]:
    groups: dict[tuple, list[int]] = {}
    for k, r in enumerate(instance.racks):
        groups.setdefault((r.cpu, r.gpu, r.mem, r.ps_slots if instance.inc else 0), []).append(k)
    return [g for g in groups.values() if len(g) > 1]


def build_strong(instance: Instance) -> Any:
    """The aggregated MILP with a disaggregated linearisation of the bandwidths (formulation
    "strong": the optimum of "paper", far fewer variables).

    Circuits are integer counts per rack pair, identical workers of a job are one class placed
    by unary count binaries, every worker of job i carries exactly its rate r_i = 2 d_i (f +
    alpha_i phi_i), and the rack-to-PS-rack flows are disaggregated variables bounded from the
    data instead of big-M products.

    Parameters
    ----------
    instance : Instance
        The INC/OXC instance: racks (CPU, GPU, memory, PS slots of a PDP ToR), ports per ToR
        N_ToR, port bandwidth B (MB/s), jobs with their workers, data d_i (MB) and alpha_i.

    Returns
    -------
    pyomo.environ.ConcreteModel
        Binaries ``y[i, q, k, u]`` (at least u workers of class q of job i in rack k),
        ``ps[i, k]``, ``pc[i, k]``; integer circuit counts ``c[s, t]`` (s < t, at most
        N_ToR); rates ``g``, flows ``x[i, k, t]``, PS inflows ``v[i, t]`` and PS-side loads
        ``pi[i, t]`` (MB/s); ``f`` and its split ``phis`` + ``phic`` (1/s, at most F = N_ToR B
        / (2 max d_i)); objective ``obj`` = f (maximised). ``m._classes`` keeps the worker
        classes for :func:`decode` and :func:`warm_start`.

    References
    ----------
    Ours, on paper 002 (Dong, Yang, Zhang, Xie, Zhu), section II-B: rules (1)-(4), (10), (12),
    (13) and objective (17) of the paper, with circuits aggregated per rack pair (any counts
    with sum_t c_st <= N_ToR are realised by a port pairing), worker classes with ordered count
    binaries (no symmetry between identical workers), the exact disaggregation f = phi^s +
    phi^c, rack symmetry breaking, and data-derived bounds in place of M (module docstring,
    "Formulation strong"); tests/inc_oxc/test_inc_oxc.py proves its optimum equal to the
    paper model's.
    """
    import pyomo.environ as pyo

    R, P, B, NB = instance.n_racks, instance.n_tor, instance.port_bw, instance.capacity
    jobs = instance.jobs
    F, rmax, msize = _bounds(instance)
    classes = {i: instance.worker_classes(i) for i in range(len(jobs))}
    m = pyo.ConcreteModel(name=f"inc_oxc_strong_{instance.name}")
    m.J = pyo.RangeSet(0, len(jobs) - 1)
    m.R = pyo.RangeSet(0, R - 1)
    m.Rc = pyo.Set(initialize=instance.pdp_racks())
    m.Q = pyo.Set(initialize=[(i, q) for i in classes for q in range(len(classes[i]))], dimen=2)
    m.Y = pyo.Set(initialize=[(i, q, k, u) for i, q in m.Q for k in range(R)
                              for u in range(1, len(classes[i][q]) + 1)], dimen=4)
    m.Up = pyo.Set(initialize=[(s, t) for s in range(R) for t in range(s + 1, R)], dimen=2)
    m.y = pyo.Var(m.Y, domain=pyo.Binary)
    m.g = pyo.Var(m.Y, domain=pyo.NonNegativeReals)
    m.ps = pyo.Var(m.J, m.R, domain=pyo.Binary)
    m.pc = pyo.Var(m.J, m.Rc, domain=pyo.Binary)
    m.c = pyo.Var(m.Up, domain=pyo.NonNegativeIntegers, bounds=(0, P))
    m.f = pyo.Var(bounds=(0, F))
    m.phis = pyo.Var(m.J, bounds=(0, F))
    m.phic = pyo.Var(m.J, bounds=(0, F))
    m.x = pyo.Var(m.J, m.R, m.R, domain=pyo.NonNegativeReals)
    m.pi = pyo.Var(m.J, m.R, domain=pyo.NonNegativeReals)

    def pc(i, k):
        return m.pc[i, k] if k in m.Rc else 0

    def sigma(i):
        return sum(m.ps[i, k] for k in m.R)

    def r(i):  # required rate of every worker of job i
        return 2 * jobs[i].data * (m.f + jobs[i].alpha * m.phis[i])

    def count(i, q, k):
        return sum(m.y[i, q, k, u] for u in range(1, len(classes[i][q]) + 1))

    def G(i, k):
        return sum(m.g[i, q, k, u] for q in range(len(classes[i]))
                   for u in range(1, len(classes[i][q]) + 1))

    m.obj = pyo.Objective(expr=m.f, sense=pyo.maximize)
    m.slots = pyo.Constraint(m.Rc, rule=lambda m, k: sum(m.pc[i, k] for i in m.J)
                             <= instance.racks[k].ps_slots)                      # (1)

    def res(attr, attr_p):
        def rl(m, k):
            lhs = sum(getattr(jobs[i].workers[classes[i][q][0]], attr) * count(i, q, k)
                      for i, q in m.Q)
            if attr_p:
                lhs += sum(getattr(jobs[i], attr_p) * m.ps[i, k] for i in m.J)
            return lhs <= getattr(instance.racks[k], attr)
        return rl
    m.cpu = pyo.Constraint(m.R, rule=res("cpu", "ps_cpu"))                       # (2)
    m.gpu = pyo.Constraint(m.R, rule=res("gpu", None))
    m.mem = pyo.Constraint(m.R, rule=res("mem", "ps_mem"))
    m.assign = pyo.Constraint(m.Q, rule=lambda m, i, q: sum(
        count(i, q, k) for k in m.R) == len(classes[i][q]))                      # (3)
    m.order = pyo.Constraint(m.Y, rule=lambda m, i, q, k, u: m.y[i, q, k, u + 1]
                             <= m.y[i, q, k, u] if u < len(classes[i][q])
                             else pyo.Constraint.Skip)
    m.place_ps = pyo.Constraint(m.J, rule=lambda m, i: sum(
        m.ps[i, k] + pc(i, k) for k in m.R) == 1)                                # (4)
    # f = phi^s + phi^c, phi^s <= F sigma, phi^c <= F (1 - sigma)
    m.phi = pyo.Constraint(m.J, rule=lambda m, i: m.f == m.phis[i] + m.phic[i])
    m.phis_ub = pyo.Constraint(m.J, rule=lambda m, i: m.phis[i] <= F * sigma(i))
    m.phic_ub = pyo.Constraint(m.J, rule=lambda m, i: m.phic[i] <= F * (1 - sigma(i)))
    # rates: every active worker slot carries r_i
    m.g_sum = pyo.Constraint(m.Q, rule=lambda m, i, q: sum(
        m.g[i, q, k, u] for k in m.R for u in range(1, len(classes[i][q]) + 1))
        == len(classes[i][q]) * r(i))
    m.g_r = pyo.Constraint(m.Y, rule=lambda m, i, q, k, u: m.g[i, q, k, u] <= r(i))
    m.g_y = pyo.Constraint(m.Y, rule=lambda m, i, q, k, u: m.g[i, q, k, u]
                           <= rmax[i] * m.y[i, q, k, u])
    # flows to the PS rack
    m.x_sum = pyo.Constraint(m.J, m.R, rule=lambda m, i, k: sum(m.x[i, k, t] for t in m.R)
                             == G(i, k))
    m.x_ub = pyo.Constraint(m.J, m.R, m.R, rule=lambda m, i, k, t: m.x[i, k, t] <= min(
        NB, msize[i] * rmax[i]) * (m.ps[i, t] + pc(i, t)))
    # inflow into the PS rack: v_it = m_i r_i p_it (disaggregated), sum_k x_ikt = v_it
    m.v = pyo.Var(m.J, m.R, domain=pyo.NonNegativeReals)
    m.v_sum = pyo.Constraint(m.J, rule=lambda m, i: sum(m.v[i, t] for t in m.R)
                             == msize[i] * r(i))
    m.v_ub = pyo.Constraint(m.J, m.R, rule=lambda m, i, t: m.v[i, t] <= min(
        msize[i] * rmax[i], R * NB) * (m.ps[i, t] + pc(i, t)))
    m.v_x = pyo.Constraint(m.J, m.R, rule=lambda m, i, t: sum(m.x[i, k, t] for k in m.R)
                           == m.v[i, t])
    m.pi_v = pyo.Constraint(m.J, m.R, rule=lambda m, i, t: m.pi[i, t] <= m.v[i, t])
    # PS-side load of a server PS
    m.pi_sum = pyo.Constraint(m.J, rule=lambda m, i: sum(m.pi[i, t] for t in m.R) == msize[i]
                              * 2 * jobs[i].data * (1 + jobs[i].alpha) * m.phis[i])
    m.pi_ub = pyo.Constraint(m.J, m.R, rule=lambda m, i, t: m.pi[i, t]
                             <= min(NB, msize[i] * rmax[i]) * m.ps[i, t])
    m.wside = pyo.Constraint(m.R, rule=lambda m, k: sum(G(i, k) for i in m.J) <= NB)  # (10)
    m.pside = pyo.Constraint(m.R, rule=lambda m, t: sum(m.pi[i, t] for i in m.J) <= NB)  # (12)
    # (13) circuits
    m.ports = pyo.Constraint(m.R, rule=lambda m, s: _row(sum(
        m.c[min(s, t), max(s, t)] for t in m.R if t != s) <= P))
    m.st = pyo.Constraint(m.Up, rule=lambda m, s, t: sum(m.x[i, s, t] for i in m.J)
                          <= B * m.c[s, t])
    m.ts = pyo.Constraint(m.Up, rule=lambda m, s, t: sum(m.x[i, t, s] for i in m.J)
                          <= B * m.c[s, t])
    # identical racks: non-increasing worker counts
    m.sym = pyo.ConstraintList()
    for chain in _identical_rack_chains(instance):
        for k, k2 in zip(chain, chain[1:], strict=False):
            m.sym.add(sum(count(i, q, k) for i, q in m.Q) >= sum(count(i, q, k2) for i, q in m.Q))
    m._classes = classes
    return m


def _size_strong(instance: Instance) -> tuple[int, int]:
    R = instance.n_racks
    W, J = sum(len(j.workers) for j in instance.jobs), len(instance.jobs)
    n_vars = 2 * W * R + J * (R + len(instance.pdp_racks())) + R * (R - 1) // 2 + 1 + 2 * J \
        + J * R * R + 2 * J * R
    n_cons = 4 * R + 3 * W * R + 5 * J + 4 * J * R + J * R * R + J * R + 2 * R + R * (R - 1)
    return n_vars, n_cons


#: the exact models (module docstring)
FORMULATIONS: dict[str, Formulation] = {
    "paper": Formulation(build_paper, _size_paper,
                         "the MILP of section II-B, eqs. (1)-(17), with the documented "
                         "corrections (OXC ports paired explicitly)",
                         # SCIP's default feasibility tolerance (1e-6) times the big M of eqs.
                         # (14)-(15) let f exceed a link's capacity by up to 0.06 %, reported
                         # as optimal (module docstring, "Solver tolerance")
                         solver_options={"scip": {"numerics/feastol": 1e-9}}),
    "strong": Formulation(build_strong, _size_strong,
                          "ours: aggregated workers, circuit counts per rack pair, "
                          "disaggregated linearisation (same optimum, far smaller)"),
}


def build(instance: Instance, formulation: str = "paper") -> Any:
    """The Pyomo model of ``instance`` in ``formulation`` (see :data:`FORMULATIONS`)."""
    return FORMULATIONS[formulation].build(instance)


def estimate_size(instance: Instance, formulation: str = "paper") -> tuple[int, int]:
    """(variables, constraints) of the model, computed without building it."""
    return FORMULATIONS[formulation].estimate_size(instance)


def _val(v: Any) -> float:
    return float(v.value) if v.value is not None else 0.0


def _finish(instance: Instance, wrack: list[list[int]], ps: list[tuple[int, str]],
            c: np.ndarray, f: float) -> Solution:
    """Solution with each worker's bandwidth what f needs, a_ij * f (objective == f exactly).

    An f above what the placement and circuits allow (:func:`best_f`, the evaluator's closed
    form) is lowered to it: a MILP solver may overstate f by its feasibility tolerance times the
    big M of the capacity rows (HiGHS by 5e-6 relative on a ``dcn`` instance of the validity
    sweep, seed 7504). ``dmlopt.solve`` still compares the evaluated f with the solver's
    objective (``OBJECTIVE_TOL``), so a model that overstated f by more is caught there.
    """
    server = np.array([kind == "server" for _, kind in ps], float)
    allowed = best_f(instance, np.array([k for row in wrack for k in row], np.int64),
                     np.array([k for k, _ in ps], np.int64), server, c)
    f = min(f, allowed)
    a_job = 2 * instance.arrays["data"] * (1 + instance.arrays["alpha"] * server)
    bw = [[max(0.0, a_job[i] * f)] * len(job.workers) for i, job in enumerate(instance.jobs)]
    return Solution(workers=wrack, ps=ps, oxc=ports_from_circuits(instance, c), bandwidth=bw)


def decode(model: Any, instance: Instance) -> Solution:
    """Placement, circuits and bandwidths from either formulation.

    The MILPs only maximise the smallest f_ij; bandwidth a worker gets beyond what f needs is
    arbitrary, so each worker gets a_ij * f (the objective then equals the model's f exactly;
    ``best_f`` reports what the placement and circuits allow). The paper formulation's own b
    variables are not read: a solver may leave them below a_ij * f by its integrality tolerance
    times the big M of eqs. (14)-(15) (SCIP does, by up to 0.08 %), while the placement, the
    circuits are exact, and f is at most what they allow (:func:`_finish`).
    """
    R, P = instance.n_racks, instance.n_tor
    J = len(instance.jobs)
    # each PS and each worker in exactly one place (rows (3), (4) as written): a job whose PS
    # is in no place or in two, a worker in no rack or in two, decodes to rack -1, which the
    # evaluator reports infeasible (never the place of largest value)
    ps: list[tuple[int, str]] = []
    for i in range(J):
        places = [(k, "server") for k in range(R) if _val(model.ps[i, k]) > 0.5]
        places += [(k, "switch") for k in instance.pdp_racks() if _val(model.pc[i, k]) > 0.5]
        ps.append(places[0] if len(places) == 1 else (-1, "server"))
    f = _val(model.f)
    c = np.zeros((R, R))
    if hasattr(model, "L"):  # paper
        wrack = []
        for i, job in enumerate(instance.jobs):
            row = []
            for j in range(len(job.workers)):
                racks = [k for k in range(R) if _val(model.w[i, j, k]) > 0.5]
                row.append(racks[0] if len(racks) == 1 else -1)
            wrack.append(row)
        for (n, q), var in model.L.items():
            if n < q and _val(var) > 0.5 and n // P != q // P:
                c[n // P, q // P] += 1
                c[q // P, n // P] += 1
    else:  # strong
        classes = model._classes
        wrack = []
        for i, job in enumerate(instance.jobs):
            row = [0] * len(job.workers)
            for q, members in enumerate(classes[i]):
                racks: list[int] = []
                for k in range(R):
                    n = sum(round(_val(model.y[i, q, k, u])) for u in range(1, len(members) + 1))
                    racks += [k] * n
                if len(racks) != len(members):  # class q not placed as a whole
                    racks = [-1] * len(members)
                for j, k in zip(members, racks, strict=True):
                    row[j] = k
            wrack.append(row)
        for (s, t), var in model.c.items():
            c[s, t] = c[t, s] = round(_val(var))
    if min((k for k, _ in ps), default=0) < 0 or min(min(r, default=0) for r in wrack) < 0:
        return Solution(workers=wrack, ps=ps, oxc=ports_from_circuits(instance, c),
                        bandwidth=[[0.0] * len(job.workers) for job in instance.jobs])
    return _finish(instance, wrack, ps, c, f)


def warm_start(model: Any, instance: Instance, solution: Solution) -> None:
    """Set every variable of either formulation from ``solution`` (bandwidth a_ij * f).

    A time-shared OXC (``oxc_schedule``) has no static counterpart: nothing is set then.
    """
    if solution.oxc_schedule:
        return
    ev = evaluate(instance, solution)
    f = ev.objective
    R = instance.n_racks
    wrack = np.array([k for row in solution.workers for k in row], np.int64)
    ps_rack = np.array([k for k, _ in solution.ps], np.int64)
    server = np.array([kind == "server" for _, kind in solution.ps], float)
    c, _ = circuits_from_ports(instance, list(solution.oxc))
    a = flow_coefficients(instance, server)
    rate = a * f
    for (i, k), var in model.ps.items():
        var.set_value(float(ps_rack[i] == k and server[i] == 1))
    for (i, k), var in model.pc.items():
        var.set_value(float(ps_rack[i] == k and server[i] == 0))
    model.f.set_value(f)
    if hasattr(model, "L"):
        idx = {(i, j): n for n, (i, j) in enumerate(_workers(instance))}
        for (i, j, k), var in model.w.items():
            var.set_value(float(wrack[idx[i, j]] == k))
        for var in model.L.values():
            var.set_value(0.0)
        for n, q in ports_from_circuits(instance, c):
            model.L[n, q].set_value(1.0)
            model.L[q, n].set_value(1.0)
        for comp in (model.zs, model.zc, model.bs, model.bc, model.zsi, model.zci, model.bsi,
                     model.bci):
            for var in comp.values():
                var.set_value(0.0)
        for (i, j), n in idx.items():
            s, t, srv = wrack[n], ps_rack[i], server[i] == 1
            if s == t:
                (model.zsi if srv else model.zci)[i, j, s].set_value(1.0)
                (model.bsi if srv else model.bci)[i, j, s].set_value(rate[n])
            else:
                (model.zs if srv else model.zc)[i, j, s, t].set_value(1.0)
                (model.bs if srv else model.bc)[i, j, s, t].set_value(rate[n])
            model.fij[i, j].set_value(f)
        return
    classes = model._classes
    sizes = instance.arrays["size"]
    offs = np.concatenate([[0], np.cumsum(sizes)])
    for i in range(len(instance.jobs)):
        model.phis[i].set_value(f if server[i] else 0.0)
        model.phic[i].set_value(0.0 if server[i] else f)
        r_i = 2 * instance.jobs[i].data * (1 + instance.jobs[i].alpha * server[i]) * f
        for q, members in enumerate(classes[i]):
            for k in range(R):
                n = int(sum(wrack[offs[i] + j] == k for j in members))
                for u in range(1, len(members) + 1):
                    model.y[i, q, k, u].set_value(float(u <= n))
                    model.g[i, q, k, u].set_value(r_i if u <= n else 0.0)
        for k in range(R):
            for t in range(R):
                model.x[i, k, t].set_value(0.0)
            model.pi[i, k].set_value(0.0)
        for k in range(R):
            n = int((wrack[offs[i]:offs[i + 1]] == k).sum())
            model.x[i, k, ps_rack[i]].set_value(n * r_i)
        if server[i]:
            model.pi[i, ps_rack[i]].set_value(sizes[i] * r_i)
        for t in range(R):
            model.v[i, t].set_value(sizes[i] * r_i if t == ps_rack[i] else 0.0)
    for (s, t), var in model.c.items():
        var.set_value(float(c[s, t]))
